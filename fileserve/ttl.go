package fileserve

import (
	"context"
	"fmt"
	"time"
)

// TTLStore is a Store in which a file past its time to live is gone: Stat,
// Open, Walk and ReadSmall treat it as deleted from the moment it expires,
// whether or not the sweeper has removed it yet. Every read of a file for
// a caller (downloads, URL inputs, MCP resources) goes through it, so a
// sweeper that lags (a slow disk, a huge store) holds disk for longer but
// never serves a file past its TTL. The sweeper itself works on the store
// underneath, which still lists the files it must delete.
type TTLStore struct {
	Store
	ttl func(Area) time.Duration
	now func() time.Time
}

// NewTTLStore wraps st so that a file of area a expires ttl(a) after its
// Meta.Created; a TTL of 0 keeps the area's files forever. now is the
// clock; nil means time.Now. The wrapper has the Store's methods and
// SmallReader (see [TTLStore.SmallReader]); other capabilities are found
// below it with [As].
func NewTTLStore(st Store, ttl func(Area) time.Duration, now func() time.Time) *TTLStore {
	if now == nil {
		now = time.Now
	}
	return &TTLStore{Store: st, ttl: ttl, now: now}
}

// Unwrap returns the store underneath, whose files it filters.
func (t *TTLStore) Unwrap() Store { return t.Store }

// Expired reports whether m is past its time to live.
func (t *TTLStore) Expired(m Meta) bool {
	d := t.ttl(m.Area)
	return d > 0 && !t.now().Before(m.Created.Add(d))
}

// expired is the error for a file past its TTL: not found, as once swept.
func expired(id string) error {
	return fmt.Errorf("fileserve: file %s has expired: %w", id, ErrNotFound)
}

// Stat returns the metadata of a file that has not expired.
func (t *TTLStore) Stat(ctx context.Context, area Area, owner, id string) (Meta, error) {
	m, err := t.Store.Stat(ctx, area, owner, id)
	if err == nil && t.Expired(m) {
		return Meta{}, expired(id)
	}
	return m, err
}

// Open opens a file that has not expired.
func (t *TTLStore) Open(ctx context.Context, area Area, owner, id string) (Object, Meta, error) {
	obj, m, err := t.Store.Open(ctx, area, owner, id)
	if err == nil && t.Expired(m) {
		obj.Close()
		return nil, Meta{}, expired(id)
	}
	return obj, m, err
}

// Walk calls fn for the files of area that have not expired.
func (t *TTLStore) Walk(ctx context.Context, area Area, fn func(Meta) error) error {
	return t.Store.Walk(ctx, area, func(m Meta) error {
		if t.Expired(m) {
			return nil
		}
		return fn(m)
	})
}

// SmallReader returns the SmallReader of the store underneath, checked
// against the TTL as Open is, or nil when that store has none.
func (t *TTLStore) SmallReader() SmallReader {
	sr, ok := t.Store.(SmallReader)
	if !ok {
		return nil
	}
	return ttlSmall{t: t, sr: sr}
}

// ttlSmall is the SmallReader of a TTLStore.
type ttlSmall struct {
	t  *TTLStore
	sr SmallReader
}

// ReadSmall reads a small file that has not expired.
func (s ttlSmall) ReadSmall(ctx context.Context, area Area, owner, id string, buf []byte) (Meta, []byte, bool, error) {
	m, content, ok, err := s.sr.ReadSmall(ctx, area, owner, id, buf)
	if err == nil && s.t.Expired(m) {
		return Meta{}, nil, false, expired(id)
	}
	return m, content, ok, err
}
