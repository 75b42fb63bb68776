// Package revocation keeps what must stop being served before its time:
// download URLs revoked one by one (by token id, signing.TokenID), and
// files deleted by their owner, whose space every replica's quota frees. Every replica sharing a store sees the same list:
// an entry is a record of the store (fileserve.RecordStore, kind Kind, all
// under one owner so that one listing reads them all), and each replica
// lists them every PollInterval, so an entry made on one replica is
// honoured by all within a second. A file deleted on another replica is
// reported to OnDeleted (the quota forgets it at once). The cleanup
// sweeper expires the records once the URLs they deny have expired.
package revocation

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/signing"
)

// Kind is the record kind of the list.
const Kind = "revocations"

// recordOwner holds every record of the list: one listing reads them all.
// No caller writes records of Kind, so no owner of that name is confused.
const recordOwner = "*"

// PollInterval is how often a running List reads the records again.
const PollInterval = 500 * time.Millisecond

// Prefixes of record names: a revoked token, a deleted file.
const (
	tokenPrefix = "t."
	filePrefix  = "f."
)

// List is the revocation list of one process. Its zero value is not
// usable: make one with New.
type List struct {
	rs        fileserve.RecordStore // nil: this process alone
	onDeleted func(fileID string)
	log       *slog.Logger

	mu     sync.RWMutex
	tokens map[string]bool      // revoked token ids
	files  map[string]bool      // deleted file ids
	recent map[string]time.Time // names of records this process wrote lately, kept over a listing that began before them
}

// recentFor is how long a record written here is kept over listings that
// do not show it yet.
const recentFor = 10 * time.Second

// New returns a list kept in rs, or in this process alone when rs is nil
// (a store without records). onDeleted, when not nil, is called with each
// file another process deleted, once, when a poll first sees it.
func New(rs fileserve.RecordStore, onDeleted func(fileID string), log *slog.Logger) *List {
	if log == nil {
		log = slog.Default()
	}
	return &List{rs: rs, onDeleted: onDeleted, log: log, tokens: map[string]bool{}, files: map[string]bool{}, recent: map[string]time.Time{}}
}

// Revoked reports whether token was revoked. (A deleted file needs no
// check: it is gone from the shared store for every replica.)
func (l *List) Revoked(token string) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.tokens) > 0 && l.tokens[signing.TokenID(token)]
}

// RevokeToken revokes the URL of token: every replica refuses it within
// PollInterval. It fails when the store does not take the record.
func (l *List) RevokeToken(ctx context.Context, token string) error {
	return l.note(ctx, tokenPrefix, signing.TokenID(token))
}

// FileDeleted tells every replica that fileID was deleted: their quotas
// forget its space within PollInterval.
func (l *List) FileDeleted(ctx context.Context, fileID string) error {
	return l.note(ctx, filePrefix, fileID)
}

// note writes the record prefix+id, then adds id to this process's list.
func (l *List) note(ctx context.Context, prefix, id string) error {
	name := prefix + id
	if l.rs != nil {
		if err := l.rs.PutRecord(context.WithoutCancel(ctx), Kind, recordOwner, name, nil); err != nil {
			return fmt.Errorf("revocation: record %s: %w", name, err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if prefix == tokenPrefix {
		l.tokens[id] = true
	} else {
		l.files[id] = true
	}
	l.recent[name] = time.Now()
	return nil
}

// Refresh reads the list from the store once: entries of other processes
// join it, entries the sweeper expired leave it.
func (l *List) Refresh(ctx context.Context) error {
	if l.rs == nil {
		return nil
	}
	infos, err := l.rs.Records(ctx, Kind, recordOwner)
	if err != nil {
		return fmt.Errorf("revocation: list: %w", err)
	}
	tokens, files := make(map[string]bool, len(infos)), map[string]bool{}
	add := func(name string) {
		if id, ok := strings.CutPrefix(name, tokenPrefix); ok {
			tokens[id] = true
		} else if id, ok := strings.CutPrefix(name, filePrefix); ok {
			files[id] = true
		}
	}
	for _, in := range infos {
		add(in.Name)
	}
	l.mu.Lock()
	for name, at := range l.recent {
		if time.Since(at) > recentFor {
			delete(l.recent, name)
		} else {
			add(name)
		}
	}
	var fresh []string
	for id := range files {
		if !l.files[id] {
			fresh = append(fresh, id)
		}
	}
	l.tokens, l.files = tokens, files
	l.mu.Unlock()
	if l.onDeleted != nil {
		for _, id := range fresh {
			l.onDeleted(id)
		}
	}
	return nil
}

// Run refreshes the list every PollInterval until ctx ends. A failing
// store is logged once per outage; the list keeps its last state.
func (l *List) Run(ctx context.Context) {
	if l.rs == nil {
		return
	}
	t := time.NewTicker(PollInterval)
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
