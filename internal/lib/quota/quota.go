// Package quota holds each owner of a store to a quota of bytes: Store
// wraps a fileserve.Store and refuses a Put or Adopt that would take an
// owner past it (AGENT_OWNER_QUOTA_BYTES), with an Error saying when space
// frees up; reservations count bytes still on their way (resumable uploads,
// a call's work folder).
package quota

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/agentura/agentura/fileserve"
)

// ErrExceeded is what a Error wraps: the owner would hold more
// than the per-owner quota.
var ErrExceeded = errors.New("owner quota exceeded")

// Error is the error of a Put or Adopt that would take an owner past
// the quota of a Store. Nothing of the file is left behind.
type Error struct {
	Owner   string
	Limit   int64     // the quota, in bytes
	Used    int64     // what the owner holds (and is adding elsewhere) now
	FreesAt time.Time // when the owner's earliest file expires; zero if none
	Setting string    // the name of the setting of the quota, for the message
}

// Error says what the quota is, what the owner holds, and when space frees
// up, in words a caller can act on.
func (e *Error) Error() string {
	msg := fmt.Sprintf("%v: owner %q holds %s of its %s quota", ErrExceeded, e.Owner, FormatBytes(e.Used), FormatBytes(e.Limit))
	if e.Setting != "" {
		msg += " (" + e.Setting + ")"
	}
	msg += " and this file does not fit"
	if !e.FreesAt.IsZero() {
		msg += "; space frees up at " + e.FreesAt.UTC().Format(time.RFC3339) + ", when its oldest file expires"
	}
	return msg + "; try again then, or with a smaller file"
}

// Unwrap makes errors.Is(err, ErrExceeded) hold.
func (e *Error) Unwrap() error { return ErrExceeded }

// FormatBytes writes n the way people read sizes: 512 B, 1.5 KiB, 20.0 MiB.
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// Config is what a Store is built from.
type Config struct {
	// Limit is the most bytes one owner may hold, all areas together.
	// Required: positive.
	Limit int64
	// TTL gives each area's lifetime: a file past it no longer counts (it
	// is gone for callers, whether or not the sweeper has deleted it yet),
	// and errors say when space frees up. nil: files count until deleted.
	TTL func(fileserve.Area) time.Duration
	// Refresh is how often the usage is read again from the store with
	// Walk, to see what other processes sharing the store added and
	// removed. 0: never after the first reading.
	Refresh time.Duration
	// Setting names the quota's setting in errors ("AGENT_OWNER_QUOTA_BYTES").
	Setting string
	// Now is the clock files expire by; nil means time.Now.
	Now func() time.Time
}

// Reserver is a store that holds quota for files still arriving
// elsewhere, such as unfinished resumable uploads, so that bytes on their
// way count before they are added. A Store is one; a file added with
// fileserve.NewFile.Reservation draws on the reservation it names.
type Reserver interface {
	// Reserve holds n bytes of owner's quota under key (replacing what key
	// held), or fails with a *Error when they do not fit.
	Reserve(ctx context.Context, owner, key string, n int64) error
	// Hold is Reserve for bytes that are already there, such as the
	// unfinished uploads a restarted process finds: it counts them whether
	// or not they fit.
	Hold(owner, key string, n int64)
	// Release ends the reservation key; releasing a missing one does nothing.
	Release(owner, key string)
}

var _ Reserver = (*Store)(nil)

// Store is a fileserve.Store that bounds the bytes each owner holds. It counts
// them while streaming: a Put is refused with a *Error as soon as the
// bytes read would take the owner past the limit, an Adopt before it
// starts, and in both cases nothing of the file is left. Reservations
// ([Reserver]) count with the files.
//
// The usage is this process's accounting, read from the store (Walk over
// every area) on first use and again every Refresh: files this process
// adds or deletes count at once, those of other processes sharing the
// store from the next refresh, or at once when the program tells it
// ([Store.Forget]). A file past its TTL stops counting when it
// expires, on every process. With N replicas an owner can briefly hold up
// to about N × Limit if it writes to all of them at once within a refresh
// interval.
type Store struct {
	fileserve.Store
	cfg Config

	mu        sync.Mutex
	owners    map[string]*ownerUsage
	loaded    time.Time // when the usage was last read from the store; zero: never
	walking   bool      // a refresh is reading the store
	walkLog   []quotaChange
	firstLoad sync.Mutex // held by the first reading
}

// ownerUsage is what one owner holds, is adding and has reserved.
type ownerUsage struct {
	files    map[string]quotaFile // by id
	held     int64                // sum of files' sizes
	inflight int64                // bytes of Puts and Adopts in flight
	holds    map[string]int64     // reservations by key
	holding  int64                // sum of holds
}

// used is everything that counts against the owner.
func (u *ownerUsage) used() int64 { return u.held + u.inflight + u.holding }

// setHold makes reservation key n bytes (0: none).
func (u *ownerUsage) setHold(key string, n int64) {
	u.holding += n - u.holds[key]
	if n == 0 {
		delete(u.holds, key)
		return
	}
	if u.holds == nil {
		u.holds = map[string]int64{}
	}
	u.holds[key] = n
}

// claim moves reservation key into the bytes in flight, for a file that
// draws on it, and returns its size.
func (u *ownerUsage) claim(key string) int64 {
	if key == "" {
		return 0
	}
	n := u.holds[key]
	u.setHold(key, 0)
	u.inflight += n
	return n
}

// quotaFile is one file counted against its owner.
type quotaFile struct {
	area    fileserve.Area
	size    int64
	created time.Time
}

// quotaChange is an addition (size ≥ 0) or removal (deleted) made while a
// refresh walks the store, replayed over its result.
type quotaChange struct {
	owner, id string
	file      quotaFile
	deleted   bool
}

// New wraps st with the per-owner quota of cfg. The wrapper has
// only the Store's methods and Reserver: capabilities (Presigner,
// LocalRoot) are asked of st itself.
func New(st fileserve.Store, cfg Config) (*Store, error) {
	if cfg.Limit <= 0 {
		return nil, fmt.Errorf("fileserve: quota %d must be positive", cfg.Limit)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Store{Store: st, cfg: cfg, owners: map[string]*ownerUsage{}}, nil
}

// Used returns the bytes owner holds, with those of its Puts in flight and
// its reservations.
func (q *Store) Used(ctx context.Context, owner string) (int64, error) {
	if err := q.load(ctx); err != nil {
		return 0, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if u := q.owners[owner]; u != nil {
		q.dropExpired(u)
		return u.used(), nil
	}
	return 0, nil
}

// EachOwner calls fn with every owner that holds something and its use,
// under the store's lock: fn must be quick and must not call q.
func (q *Store) EachOwner(fn func(owner string, used int64)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for o, u := range q.owners {
		q.dropExpired(u)
		if n := u.used(); n > 0 {
			fn(o, n)
		}
	}
}

// Unwrap returns the store whose usage it counts.
func (q *Store) Unwrap() fileserve.Store { return q.Store }

// Limit returns the quota in bytes.
func (q *Store) Limit() int64 { return q.cfg.Limit }

// expired reports whether f is past its area's TTL.
func (q *Store) expired(f quotaFile, now time.Time) bool {
	if q.cfg.TTL == nil {
		return false
	}
	ttl := q.cfg.TTL(f.area)
	return ttl > 0 && !now.Before(f.created.Add(ttl))
}

// dropExpired stops counting u's files past their TTL. q.mu is held.
func (q *Store) dropExpired(u *ownerUsage) {
	if q.cfg.TTL == nil {
		return
	}
	now := q.cfg.Now()
	for id, f := range u.files {
		if q.expired(f, now) {
			u.remove(id)
		}
	}
}

// load reads the usage from the store on first use (again on the next
// call when that failed), and starts a refresh in the background once the
// last reading is older than Refresh.
func (q *Store) load(ctx context.Context) error {
	q.mu.Lock()
	if !q.loaded.IsZero() {
		if q.cfg.Refresh > 0 && time.Since(q.loaded) > q.cfg.Refresh && !q.walking {
			q.walking = true
			go q.refresh(context.Background())
		}
		q.mu.Unlock()
		return nil
	}
	q.mu.Unlock()
	q.firstLoad.Lock() // one first reading at a time
	defer q.firstLoad.Unlock()
	q.mu.Lock()
	done := !q.loaded.IsZero()
	q.walking = !done
	q.mu.Unlock()
	if done {
		return nil
	}
	return q.refresh(context.WithoutCancel(ctx))
}

// refresh reads every file of the store and replaces the usage with what
// it found, replaying the changes this process made meanwhile.
func (q *Store) refresh(ctx context.Context) error {
	found := map[string]*ownerUsage{}
	var err error
	now := q.cfg.Now()
	for _, area := range []fileserve.Area{fileserve.Outputs, fileserve.Staging} {
		err = q.Store.Walk(ctx, area, func(m fileserve.Meta) error {
			f := quotaFile{area: m.Area, size: m.Size, created: m.Created}
			if q.expired(f, now) {
				return nil
			}
			usageIn(found, m.Owner).add(m.ID, f)
			return nil
		})
		if err != nil {
			break
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.walking = false
	if err != nil {
		q.walkLog = nil
		if q.loaded.IsZero() {
			return fmt.Errorf("fileserve: read the owners' usage for the quota: %w", err)
		}
		q.loaded = time.Now() // keep the old usage; try again after Refresh
		return nil
	}
	for _, c := range q.walkLog {
		u := usageIn(found, c.owner)
		if c.deleted {
			u.remove(c.id)
		} else {
			u.add(c.id, c.file)
		}
	}
	q.walkLog = nil
	for o, u := range q.owners { // additions in flight and reservations go on counting
		if u.inflight > 0 || u.holding > 0 {
			f := usageIn(found, o)
			f.inflight, f.holds, f.holding = u.inflight, u.holds, u.holding
		}
	}
	q.owners = found
	q.loaded = time.Now()
	return nil
}

func (u *ownerUsage) add(id string, f quotaFile) {
	if old, ok := u.files[id]; ok {
		u.held -= old.size
	}
	u.files[id] = f
	u.held += f.size
}

func (u *ownerUsage) remove(id string) {
	if old, ok := u.files[id]; ok {
		u.held -= old.size
		delete(u.files, id)
	}
}

// usageIn returns owner's record in owners, made if missing; for q.owners,
// q.mu is held.
func usageIn(owners map[string]*ownerUsage, owner string) *ownerUsage {
	u := owners[owner]
	if u == nil {
		u = &ownerUsage{files: map[string]quotaFile{}}
		owners[owner] = u
	}
	return u
}

// fits reports whether n more bytes fit in owner's quota, once the files
// past their TTL stop counting. q.mu is held.
func (q *Store) fits(u *ownerUsage, n int64) bool {
	if u.used()+n <= q.cfg.Limit {
		return true
	}
	q.dropExpired(u)
	return u.used()+n <= q.cfg.Limit
}

// reserve counts n more bytes in flight against owner for an addition
// that counts own bytes already, or returns the Error of a file that
// does not fit. q.mu is held.
func (q *Store) reserve(owner string, own, n int64) error {
	u := usageIn(q.owners, owner)
	if !q.fits(u, n) {
		return q.exceeded(owner, u, own)
	}
	u.inflight += n
	return nil
}

// exceeded is the error for owner, whose refused addition counts own
// bytes already. q.mu is held.
func (q *Store) exceeded(owner string, u *ownerUsage, own int64) *Error {
	e := &Error{Owner: owner, Limit: q.cfg.Limit, Used: u.used() - own, Setting: q.cfg.Setting}
	if q.cfg.TTL != nil {
		for _, f := range u.files {
			if at := f.created.Add(q.cfg.TTL(f.area)); e.FreesAt.IsZero() || at.Before(e.FreesAt) {
				e.FreesAt = at
			}
		}
	}
	return e
}

// settle ends an addition that had n bytes in flight, claimed of them
// from reservation key, and counts m when it was stored. What the file
// did not use of the reservation is held again under key: all of it when
// the addition failed, the rest beyond m.Size when it was stored.
func (q *Store) settle(owner, key string, n, claimed int64, m fileserve.Meta, stored bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	u := usageIn(q.owners, owner)
	u.inflight -= n
	back := claimed
	if stored {
		f := quotaFile{area: m.Area, size: m.Size, created: m.Created}
		u.add(m.ID, f)
		if q.walking {
			q.walkLog = append(q.walkLog, quotaChange{owner: owner, id: m.ID, file: f})
		}
		back = max(claimed-m.Size, 0)
	}
	if back > 0 {
		u.setHold(key, u.holds[key]+back)
	}
}

// Put streams r into the store while counting its bytes against the owner.
func (q *Store) Put(ctx context.Context, f fileserve.NewFile, r io.Reader) (fileserve.Meta, error) {
	if err := q.load(ctx); err != nil {
		return fileserve.Meta{}, err
	}
	q.mu.Lock()
	claimed := usageIn(q.owners, f.Owner).claim(f.Reservation)
	q.mu.Unlock()
	qr := &quotaReader{q: q, owner: f.Owner, r: r, n: claimed, credit: claimed}
	m, err := q.Store.Put(ctx, f, qr)
	q.settle(f.Owner, f.Reservation, qr.n, claimed, m, err == nil)
	if qr.err != nil { // whatever the store made of it
		if err == nil { // the store ignored the read error: take the file back
			q.Delete(context.WithoutCancel(ctx), m.Area, m.Owner, m.ID)
		}
		return fileserve.Meta{}, qr.err
	}
	return m, err
}

// Adopt counts the file at path against the owner before taking it in.
func (q *Store) Adopt(ctx context.Context, f fileserve.NewFile, path string) (fileserve.Meta, error) {
	if err := q.load(ctx); err != nil {
		return fileserve.Meta{}, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fileserve.Meta{}, fmt.Errorf("fileserve: adopt: %w", err)
	}
	q.mu.Lock()
	u := usageIn(q.owners, f.Owner)
	claimed := u.claim(f.Reservation)
	need := max(fi.Size()-claimed, 0)
	if err := q.reserve(f.Owner, claimed, need); err != nil {
		u.inflight -= claimed
		u.setHold(f.Reservation, u.holds[f.Reservation]+claimed)
		q.mu.Unlock()
		return fileserve.Meta{}, err
	}
	q.mu.Unlock()
	m, err := q.Store.Adopt(ctx, f, path)
	q.settle(f.Owner, f.Reservation, claimed+need, claimed, m, err == nil)
	return m, err
}

// Delete removes the file and stops counting it.
func (q *Store) Delete(ctx context.Context, area fileserve.Area, owner, id string) error {
	err := q.Store.Delete(ctx, area, owner, id)
	if err == nil {
		q.mu.Lock()
		q.forget(owner, id)
		q.mu.Unlock()
	}
	return err
}

// forget stops counting owner's file id. q.mu is held.
func (q *Store) forget(owner, id string) {
	if u := q.owners[owner]; u != nil {
		u.remove(id)
	}
	if q.walking {
		q.walkLog = append(q.walkLog, quotaChange{owner: owner, id: id, deleted: true})
	}
}

// Forget stops counting the file id, which another process sharing the
// store deleted: its space is free here at once, not at the next refresh.
func (q *Store) Forget(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for owner, u := range q.owners {
		if _, ok := u.files[id]; ok {
			q.forget(owner, id)
			return
		}
	}
}

// Reserve holds n bytes of owner's quota under key; see [Reserver].
func (q *Store) Reserve(ctx context.Context, owner, key string, n int64) error {
	if err := q.load(ctx); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	u := usageIn(q.owners, owner)
	old := u.holds[key]
	if !q.fits(u, n-old) {
		return q.exceeded(owner, u, old)
	}
	u.setHold(key, n)
	return nil
}

// Hold counts n bytes under key whether or not they fit; see [Reserver].
func (q *Store) Hold(owner, key string, n int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	usageIn(q.owners, owner).setHold(key, n)
}

// Release ends the reservation key; see [Reserver].
func (q *Store) Release(owner, key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if u := q.owners[owner]; u != nil {
		u.setHold(key, 0)
	}
}

// quotaReader counts what it reads against its owner and fails with the
// Error once the owner would pass the quota. It draws on credit (a
// reservation the file claimed) first.
type quotaReader struct {
	q      *Store
	owner  string
	r      io.Reader
	n      int64 // bytes in flight for this file: credit claimed and bytes reserved
	credit int64 // claimed bytes not read yet
	err    error // the Error, once hit
}

func (qr *quotaReader) Read(p []byte) (int, error) {
	if qr.err != nil {
		return 0, qr.err
	}
	n, err := qr.r.Read(p)
	if n > 0 {
		use := min(qr.credit, int64(n))
		qr.credit -= use
		if need := int64(n) - use; need > 0 {
			qr.q.mu.Lock()
			qerr := qr.q.reserve(qr.owner, qr.n, need)
			qr.q.mu.Unlock()
			if qerr != nil {
				qr.err = qerr
				return 0, qerr
			}
			qr.n += need
		}
	}
	return n, err
}
