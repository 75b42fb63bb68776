package fileserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// ErrQuotaExceeded is what a QuotaError wraps: the owner would hold more
// than the per-owner quota.
var ErrQuotaExceeded = errors.New("owner quota exceeded")

// QuotaError is the error of a Put or Adopt that would take an owner past
// the quota of a QuotaStore. Nothing of the file is left behind.
type QuotaError struct {
	Owner   string
	Limit   int64     // the quota, in bytes
	Used    int64     // what the owner holds (and is adding elsewhere) now
	FreesAt time.Time // when the owner's earliest file expires; zero if none
	Setting string    // the name of the setting of the quota, for the message
}

// Error says what the quota is, what the owner holds, and when space frees
// up, in words a caller can act on.
func (e *QuotaError) Error() string {
	msg := fmt.Sprintf("%v: owner %q holds %s of its %s quota", ErrQuotaExceeded, e.Owner, FormatBytes(e.Used), FormatBytes(e.Limit))
	if e.Setting != "" {
		msg += " (" + e.Setting + ")"
	}
	msg += " and this file does not fit"
	if !e.FreesAt.IsZero() {
		msg += "; space frees up at " + e.FreesAt.UTC().Format(time.RFC3339) + ", when its oldest file expires"
	}
	return msg + "; try again then, or with a smaller file"
}

// Unwrap makes errors.Is(err, ErrQuotaExceeded) hold.
func (e *QuotaError) Unwrap() error { return ErrQuotaExceeded }

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

// QuotaConfig is what a QuotaStore is built from.
type QuotaConfig struct {
	// Limit is the most bytes one owner may hold, all areas together.
	// Required: positive.
	Limit int64
	// TTL gives each area's lifetime, to say when space frees up; nil: the
	// error names no time.
	TTL func(Area) time.Duration
	// Refresh is how often the usage is read again from the store with
	// Walk, to see what other processes sharing the store added and
	// removed. 0: never after the first reading.
	Refresh time.Duration
	// Setting names the quota's setting in errors ("AGENT_OWNER_QUOTA_BYTES").
	Setting string
}

// QuotaStore is a Store that bounds the bytes each owner holds. It counts
// them while streaming: a Put is refused with a *QuotaError as soon as the
// bytes read would take the owner past the limit, an Adopt before it
// starts, and in both cases nothing of the file is left.
//
// The usage is this process's accounting, read from the store (Walk over
// every area) on first use and again every Refresh: files this process
// adds or deletes count at once, those of other processes sharing the
// store from the next refresh. With N replicas an owner can briefly hold
// up to about N × Limit if it writes to all of them at once within a
// refresh interval.
type QuotaStore struct {
	Store
	cfg QuotaConfig

	mu        sync.Mutex
	owners    map[string]*ownerUsage
	loaded    time.Time // when the usage was last read from the store; zero: never
	walking   bool      // a refresh is reading the store
	walkLog   []quotaChange
	firstLoad sync.Mutex // held by the first reading
}

// ownerUsage is what one owner holds and is adding.
type ownerUsage struct {
	files    map[string]quotaFile // by id
	held     int64                // sum of files' sizes
	reserved int64                // bytes of Puts in flight
}

// quotaFile is one file counted against its owner.
type quotaFile struct {
	area    Area
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

// NewQuotaStore wraps st with the per-owner quota of cfg. The wrapper has
// only the Store's methods: capabilities (Presigner, LocalRoot) are asked
// of st itself.
func NewQuotaStore(st Store, cfg QuotaConfig) (*QuotaStore, error) {
	if cfg.Limit <= 0 {
		return nil, fmt.Errorf("fileserve: quota %d must be positive", cfg.Limit)
	}
	return &QuotaStore{Store: st, cfg: cfg, owners: map[string]*ownerUsage{}}, nil
}

// Used returns the bytes owner holds, with those of its Puts in flight.
func (q *QuotaStore) Used(ctx context.Context, owner string) (int64, error) {
	if err := q.load(ctx); err != nil {
		return 0, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if u := q.owners[owner]; u != nil {
		return u.held + u.reserved, nil
	}
	return 0, nil
}

// EachOwner calls fn with every owner that holds something and its use,
// under the store's lock: fn must be quick and must not call q.
func (q *QuotaStore) EachOwner(fn func(owner string, used int64)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for o, u := range q.owners {
		if u.held+u.reserved > 0 {
			fn(o, u.held+u.reserved)
		}
	}
}

// Limit returns the quota in bytes.
func (q *QuotaStore) Limit() int64 { return q.cfg.Limit }

// load reads the usage from the store on first use (again on the next
// call when that failed), and starts a refresh in the background once the
// last reading is older than Refresh.
func (q *QuotaStore) load(ctx context.Context) error {
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
func (q *QuotaStore) refresh(ctx context.Context) error {
	found := map[string]*ownerUsage{}
	var err error
	for _, area := range []Area{Outputs, Staging} {
		err = q.Store.Walk(ctx, area, func(m Meta) error {
			u := found[m.Owner]
			if u == nil {
				u = &ownerUsage{files: map[string]quotaFile{}}
				found[m.Owner] = u
			}
			u.add(m.ID, quotaFile{area: m.Area, size: m.Size, created: m.Created})
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
		u := found[c.owner]
		if u == nil {
			u = &ownerUsage{files: map[string]quotaFile{}}
			found[c.owner] = u
		}
		if c.deleted {
			u.remove(c.id)
		} else {
			u.add(c.id, c.file)
		}
	}
	q.walkLog = nil
	for o, u := range q.owners { // Puts in flight go on counting
		if u.reserved > 0 {
			if found[o] == nil {
				found[o] = &ownerUsage{files: map[string]quotaFile{}}
			}
			found[o].reserved = u.reserved
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

// usage returns owner's record, made if missing. q.mu is held.
func (q *QuotaStore) usage(owner string) *ownerUsage {
	u := q.owners[owner]
	if u == nil {
		u = &ownerUsage{files: map[string]quotaFile{}}
		q.owners[owner] = u
	}
	return u
}

// reserve counts n more bytes against owner for an addition that has
// reserved own bytes before, or returns the QuotaError of a file that does
// not fit. q.mu is held.
func (q *QuotaStore) reserve(owner string, own, n int64) error {
	u := q.usage(owner)
	if u.held+u.reserved+n > q.cfg.Limit {
		return q.exceeded(owner, u, own)
	}
	u.reserved += n
	return nil
}

// exceeded is the error for owner, whose refused addition had reserved
// own bytes. q.mu is held.
func (q *QuotaStore) exceeded(owner string, u *ownerUsage, own int64) *QuotaError {
	e := &QuotaError{Owner: owner, Limit: q.cfg.Limit, Used: u.held + u.reserved - own, Setting: q.cfg.Setting}
	if q.cfg.TTL != nil {
		for _, f := range u.files {
			if at := f.created.Add(q.cfg.TTL(f.area)); e.FreesAt.IsZero() || at.Before(e.FreesAt) {
				e.FreesAt = at
			}
		}
	}
	return e
}

// settle ends a reservation of n bytes and counts m when it was stored.
func (q *QuotaStore) settle(owner string, n int64, m Meta, stored bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	u := q.usage(owner)
	u.reserved -= n
	if stored {
		f := quotaFile{area: m.Area, size: m.Size, created: m.Created}
		u.add(m.ID, f)
		if q.walking {
			q.walkLog = append(q.walkLog, quotaChange{owner: owner, id: m.ID, file: f})
		}
	}
}

// Put streams r into the store while counting its bytes against the owner.
func (q *QuotaStore) Put(ctx context.Context, f NewFile, r io.Reader) (Meta, error) {
	if err := q.load(ctx); err != nil {
		return Meta{}, err
	}
	qr := &quotaReader{q: q, owner: f.Owner, r: r}
	m, err := q.Store.Put(ctx, f, qr)
	q.settle(f.Owner, qr.n, m, err == nil)
	if qr.err != nil { // whatever the store made of it
		if err == nil { // the store ignored the read error: take the file back
			q.Delete(context.WithoutCancel(ctx), m.Area, m.Owner, m.ID)
		}
		return Meta{}, qr.err
	}
	return m, err
}

// Adopt counts the file at path against the owner before taking it in.
func (q *QuotaStore) Adopt(ctx context.Context, f NewFile, path string) (Meta, error) {
	if err := q.load(ctx); err != nil {
		return Meta{}, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return Meta{}, fmt.Errorf("fileserve: adopt: %w", err)
	}
	q.mu.Lock()
	err = q.reserve(f.Owner, 0, fi.Size())
	q.mu.Unlock()
	if err != nil {
		return Meta{}, err
	}
	m, err := q.Store.Adopt(ctx, f, path)
	q.settle(f.Owner, fi.Size(), m, err == nil)
	return m, err
}

// Delete removes the file and stops counting it.
func (q *QuotaStore) Delete(ctx context.Context, area Area, owner, id string) error {
	err := q.Store.Delete(ctx, area, owner, id)
	if err == nil {
		q.mu.Lock()
		if u := q.owners[owner]; u != nil {
			u.remove(id)
		}
		if q.walking {
			q.walkLog = append(q.walkLog, quotaChange{owner: owner, id: id, deleted: true})
		}
		q.mu.Unlock()
	}
	return err
}

// quotaReader counts what it reads against its owner and fails with the
// QuotaError once the owner would pass the quota.
type quotaReader struct {
	q     *QuotaStore
	owner string
	r     io.Reader
	n     int64 // bytes reserved
	err   error // the QuotaError, once hit
}

func (qr *quotaReader) Read(p []byte) (int, error) {
	if qr.err != nil {
		return 0, qr.err
	}
	n, err := qr.r.Read(p)
	if n > 0 {
		qr.q.mu.Lock()
		qerr := qr.q.reserve(qr.owner, qr.n, int64(n))
		qr.q.mu.Unlock()
		if qerr != nil {
			qr.err = qerr
			return 0, qerr
		}
		qr.n += int64(n)
	}
	return n, err
}
