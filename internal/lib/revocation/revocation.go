// Package revocation keeps what must stop being served before its time:
// download URLs revoked one by one (by token id, signing.TokenID), and
// files deleted by their owner, whose space every replica's quota frees. Every replica sharing a store sees the same list:
// an entry is a record of the store (fileserve.RecordStore, kind Kind, all
// under one owner so that one listing reads them all), and each replica
// lists them every pollInterval, so an entry made on one replica is
// honoured by all within a second. A file deleted on another replica is
// reported to OnDeleted (the quota forgets it at once).
//
// A revoked URL's record names its token's expiry: once the token has
// expired (and Grace has passed, for clocks that disagree) no signature
// check lets it through anyway, so the lists forget it and delete its
// record. Until then it counts against its revoker's cap
// (Options.MaxPerOwner): the list read twice a second stays bounded
// however many URLs a caller holds. The cleanup sweeper expires what is
// left (records of deleted files, records of older versions).
package revocation

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/signing"
)

// Kind is the record kind of the list.
const Kind = "revocations"

// recordOwner holds every record of the list: one listing reads them all.
// No caller writes records of Kind, so no owner of that name is confused.
const recordOwner = "*"

// pollInterval is how often a running List reads the records again.
const pollInterval = 500 * time.Millisecond

// Prefixes of record names: a revoked token, a deleted file.
const (
	tokenPrefix = "t."
	filePrefix  = "f."
)

// DefaultMaxPerOwner is Options.MaxPerOwner when it is 0.
const DefaultMaxPerOwner = 1000

// Grace is how long past its token's expiry a revocation is kept: replicas
// whose clocks run behind still refuse the token meanwhile.
const Grace = time.Minute

// Options are what a List is made with besides its store.
type Options struct {
	// OnDeleted, when not nil, is called with each file another process
	// deleted, once, when a poll first sees it.
	OnDeleted func(fileID string)
	// Log receives the failures of polls; nil means slog.Default().
	Log *slog.Logger
	// MaxPerOwner bounds the revoked URLs one revoker (RevokeToken's by)
	// may have whose tokens have not expired yet, over every process
	// sharing the store (each revocation reads the list again first, and a
	// process takes one revocation at a time; only revocations at the same
	// moment on several replicas may pass it by one each). 0 means
	// DefaultMaxPerOwner.
	MaxPerOwner int
}

// SharedOwnerFactor is how many times Options.MaxPerOwner the revokers
// of one shared owner (Revoker.Owner) may have revoked together.
const SharedOwnerFactor = 4

// Revoker is who revokes. Key names the revoker ("owner alice", "client
// 192.0.2.1"), held to Options.MaxPerOwner. Owner, when the revoker acts
// for an owner many revokers share (the anonymous owner of unauthenticated
// callers, each revoker a client address), names that owner: all of its
// revokers together are held to SharedOwnerFactor × MaxPerOwner, so that
// many addresses cannot grow the list without bound.
type Revoker struct {
	Key   string
	Owner string
}

// LimitError is the error of a revocation past Options.MaxPerOwner (or,
// for a shared owner, SharedOwnerFactor times it).
type LimitError struct {
	Max        int           // the cap met
	Shared     bool          // the cap of the shared owner, not the revoker's own
	RetryAfter time.Duration // until the first of the capped revocations lapses
}

// Error says what was refused.
func (e *LimitError) Error() string {
	if e.Shared {
		return fmt.Sprintf("revocation: %d revoked URLs of this owner's callers have not expired yet, the most there may be", e.Max)
	}
	return fmt.Sprintf("revocation: %d revoked URLs of this revoker have not expired yet, the most there may be", e.Max)
}

// List is the revocation list of one process. Its zero value is not
// usable: make one with New.
type List struct {
	rs        fileserve.RecordStore // nil: this process alone
	onDeleted func(fileID string)
	log       *slog.Logger
	max       int
	now       func() time.Time

	// revoking, a one-slot semaphore, serialises RevokeToken in this
	// process (read again, count, write): concurrent revocations of one
	// revoker would each see the same count and all pass the cap.
	// Revocations are rare; a waiting one gives up when its request ends.
	revoking chan struct{}
	// refreshing serialises Refresh from its listing to its install: a
	// listing that began earlier never replaces one that began later.
	refreshing sync.Mutex

	mu     sync.RWMutex
	tokens map[string]revoked   // revoked token ids
	files  map[string]bool      // deleted file ids
	by     map[string]revoker   // revocations counted per revoker (a hash of RevokeToken's by)
	recent map[string]time.Time // names of records this process wrote lately, kept over a listing that began before them
}

// revoked is one revoked token: until when its record is kept (zero: a
// record that names no expiry, kept until swept) and whose cap it counts
// against ("" for none).
type revoked struct {
	until time.Time
	by    string
	owner string // the key of the shared owner the revoker acted for; "" for none
}

// revoker is what one revoker has revoked: how many tokens, and when the
// first of them lapses.
type revoker struct {
	n     int
	first time.Time
}

// recentFor is how long a record written here is kept over listings that
// do not show it yet.
const recentFor = 10 * time.Second

// New returns a list kept in rs, or in this process alone when rs is nil
// (a store without records).
func New(rs fileserve.RecordStore, o Options) *List {
	return &List{rs: rs, onDeleted: o.OnDeleted, log: cmp.Or(o.Log, slog.Default()), max: cmp.Or(max(o.MaxPerOwner, 0), DefaultMaxPerOwner), now: time.Now, revoking: make(chan struct{}, 1),
		tokens: map[string]revoked{}, files: map[string]bool{}, by: map[string]revoker{}, recent: map[string]time.Time{}}
}

// Revoked reports whether token was revoked. (A deleted file needs no
// check: it is gone from the shared store for every replica.)
func (l *List) Revoked(token string) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if len(l.tokens) == 0 {
		return false
	}
	_, ok := l.tokens[signing.TokenID(token)]
	return ok
}

// RevokeToken revokes the URL of token, which expires at expires: every
// replica refuses it within pollInterval, until Grace after it expires.
// The revocation counts against by (who revokes: an owner, a client
// address; any string), which may have Options.MaxPerOwner revocations
// whose tokens have not expired yet: past that it fails with a
// *LimitError and writes nothing. A token revoked already, or expired
// Grace ago, writes nothing and is no error. It fails when the store does
// not take the record.
func (l *List) RevokeToken(ctx context.Context, token string, expires time.Time, by Revoker) error {
	id, key, owner := signing.TokenID(token), revokerKey(by.Key), ""
	if by.Owner != "" && by.Owner != by.Key {
		owner = revokerKey(by.Owner)
	}
	until := expires.Add(Grace)
	now := l.now()
	if !until.After(now) || l.Revoked(token) {
		return nil
	}
	select {
	case l.revoking <- struct{}{}:
		defer func() { <-l.revoking }()
	case <-ctx.Done():
		return fmt.Errorf("revocation: waiting for the revocations before it: %w", ctx.Err())
	}
	if l.rs != nil {
		// Count what the other replicas revoked up to now, not up to the
		// last poll. (A store that cannot list will not take the record
		// either: PutRecord says so below.)
		_ = l.Refresh(ctx)
	}
	l.mu.Lock()
	if l.rs == nil {
		l.forgetLapsed(now)
	}
	_, known := l.tokens[id]
	r, shared := l.by[key], l.by[owner]
	l.mu.Unlock()
	switch {
	case known:
		return nil
	case r.n >= l.max:
		return &LimitError{Max: l.max, RetryAfter: max(r.first.Sub(now), time.Second)}
	case owner != "" && shared.n >= SharedOwnerFactor*l.max:
		return &LimitError{Max: SharedOwnerFactor * l.max, Shared: true, RetryAfter: max(shared.first.Sub(now), time.Second)}
	}
	name := tokenPrefix + id + "." + strconv.FormatInt(until.Unix(), 10) + "." + key
	if owner != "" {
		name += "." + owner
	}
	return l.note(ctx, name)
}

// FileDeleted tells every replica that fileID was deleted: their quotas
// forget its space within pollInterval.
func (l *List) FileDeleted(ctx context.Context, fileID string) error {
	return l.note(ctx, filePrefix+fileID)
}

// revokerKey names a revoker in record names: 16 hex digits of the SHA-256
// of by (which may hold any character, and should not be on show).
func revokerKey(by string) string {
	sum := sha256.Sum256([]byte(by))
	return hex.EncodeToString(sum[:8])
}

// note writes the record name, then adds it to this process's list. A
// list kept in this process alone keeps only revoked tokens (until they
// lapse): deleted files concern no other process.
func (l *List) note(ctx context.Context, name string) error {
	if l.rs != nil {
		if err := l.rs.PutRecord(context.WithoutCancel(ctx), Kind, recordOwner, name, nil); err != nil {
			return fmt.Errorf("revocation: record %s: %w", name, err)
		}
	} else if strings.HasPrefix(name, filePrefix) {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.add(name, l.tokens, l.files, l.by, l.now())
	if l.rs != nil {
		l.recent[name] = l.now()
	}
	return nil
}

// parseToken reads the name of a revoked token's record: t.<token id>,
// then, from this version on, .<unix time it lapses>.<revoker key>, and
// for a revoker of a shared owner .<the owner's key>.
func parseToken(name string) (id string, r revoked, ok bool) {
	rest, ok := strings.CutPrefix(name, tokenPrefix)
	if !ok {
		return "", revoked{}, false
	}
	id, rest, _ = strings.Cut(rest, ".")
	if rest == "" {
		return id, revoked{}, true // an older record: no expiry, no revoker
	}
	at, keys, _ := strings.Cut(rest, ".")
	sec, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return id, revoked{}, true
	}
	key, owner, _ := strings.Cut(keys, ".")
	return id, revoked{until: time.Unix(sec, 0), by: key, owner: owner}, true
}

// add puts the record name into tokens, files and by, unless it is the
// revocation of a token that lapsed by now: then it reports true. A name
// of neither prefix is left alone.
func (l *List) add(name string, tokens map[string]revoked, files map[string]bool, by map[string]revoker, now time.Time) (lapsed bool) {
	if id, ok := strings.CutPrefix(name, filePrefix); ok {
		files[id] = true
		return false
	}
	id, r, ok := parseToken(name)
	switch {
	case !ok:
		return false
	case !r.until.IsZero() && !r.until.After(now):
		return true
	}
	if _, dup := tokens[id]; dup {
		return false
	}
	tokens[id] = r
	for _, k := range []string{r.by, r.owner} {
		if k == "" {
			continue
		}
		c := by[k]
		if c.n == 0 || r.until.Before(c.first) {
			c.first = r.until
		}
		c.n++
		by[k] = c
	}
	return false
}

// forgetLapsed drops the revocations whose tokens lapsed, for a list kept
// in this process alone (a shared one is read again by Refresh). l.mu is
// held.
func (l *List) forgetLapsed(now time.Time) {
	for id, r := range l.tokens {
		if r.until.IsZero() || r.until.After(now) {
			continue
		}
		delete(l.tokens, id)
		for _, k := range []string{r.by, r.owner} {
			if k == "" {
				continue
			}
			if c := l.by[k]; c.n <= 1 {
				delete(l.by, k)
			} else {
				c.n--
				l.by[k] = c // first is now early: a refusal's Retry-After errs short
			}
		}
	}
}

// Refresh reads the list from the store once: entries of other processes
// join it, entries the sweeper expired leave it, and the records of
// revoked tokens that lapsed are deleted.
func (l *List) Refresh(ctx context.Context) error {
	if l.rs == nil {
		return nil
	}
	l.refreshing.Lock()
	infos, err := l.rs.Records(ctx, Kind, recordOwner)
	if err != nil {
		l.refreshing.Unlock()
		return fmt.Errorf("revocation: list: %w", err)
	}
	now := l.now()
	tokens, files, by := make(map[string]revoked, len(infos)), map[string]bool{}, map[string]revoker{}
	var lapsed []string
	for _, in := range infos {
		if l.add(in.Name, tokens, files, by, now) {
			lapsed = append(lapsed, in.Name)
		}
	}
	l.mu.Lock()
	for name, at := range l.recent {
		if now.Sub(at) > recentFor {
			delete(l.recent, name)
		} else {
			l.add(name, tokens, files, by, now)
		}
	}
	var fresh []string
	for id := range files {
		if !l.files[id] {
			fresh = append(fresh, id)
		}
	}
	l.tokens, l.files, l.by = tokens, files, by
	l.mu.Unlock()
	l.refreshing.Unlock() // what follows holds no other refresh back
	for _, name := range lapsed {
		// Every replica may try; deleting a missing record is no error.
		if err := l.rs.DeleteRecord(ctx, Kind, recordOwner, name); err != nil && ctx.Err() == nil {
			l.log.Debug("revocation: delete a lapsed record", "name", name, "err", err)
		}
	}
	if l.onDeleted != nil {
		for _, id := range fresh {
			l.onDeleted(id)
		}
	}
	return nil
}

// Run refreshes the list every pollInterval until ctx ends. A failing
// store is logged once per outage; the list keeps its last state.
func (l *List) Run(ctx context.Context) {
	if l.rs == nil {
		return
	}
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	failing := false
	for {
		err := l.Refresh(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			l.log.Warn("cannot read the revocation list; revocations made on other replicas wait until it can", "err", err)
			failing = true
		case err == nil && failing:
			l.log.Info("the revocation list reads again")
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
