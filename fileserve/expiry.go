package fileserve

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ExpiryIndex is an optional capability of a [Store]: it finds the files
// created before a time without reading every file's metadata, so that a
// sweep costs what expires, not what is stored. DiskStore and S3Store have
// it; the cleanup sweeper uses it when a store does and falls back to
// Store.Walk otherwise.
//
// A store with an index keeps one small entry per file, ordered by the
// file's creation time, written before the file becomes visible. Files written
// before the store had an index (an older layout) have no entry: the store's
// Prune adds the missing entries, so the sweeper's periodic full Prune
// migrates them and they expire as usual.
type ExpiryIndex interface {
	// Expired calls fn with every file of area created before cutoff,
	// oldest first as far as the index orders them. Its cost is that of
	// the entries it returns, plus a listing of time buckets. Returning an
	// error from fn stops the listing with that error.
	Expired(ctx context.Context, area Area, cutoff time.Time, fn func(Expired) error) error
	// Expire removes the file e names; its index entry goes with it or at
	// the next Tidy. A reader that has the file open reads on to its end. A file found already gone
	// yields an error wrapping ErrNotFound (its entry is removed all the
	// same); S3 cannot tell, so S3Store reports success.
	Expire(ctx context.Context, e Expired) error
	// Tidy is the part of Prune whose cost does not grow with the number
	// of stored files: temporary remains and empty owner folders last
	// changed before olderThan, and the index of files created before
	// olderThan, which the caller has expired.
	Tidy(ctx context.Context, area Area, olderThan time.Time) error
}

// Expired names a file found by [ExpiryIndex.Expired].
type Expired struct {
	Area    Area
	ID      string
	Size    int64
	Created time.Time
	// OwnerKey is the owner's folder or key name; the owner string itself
	// is not in the index.
	OwnerKey string
}

// IndexDir is the folder (DiskStore) or key prefix (S3Store) of the index.
const IndexDir = "index"

// indexEntry is the name of e's index entry:
// <created, Unix nanoseconds, 19 digits>.<size>.<ownerkey>.<id>. Names sort
// by creation time.
func IndexEntry(m Meta) string {
	return Expired{Area: m.Area, ID: m.ID, Size: m.Size, Created: m.Created, OwnerKey: OwnerKey(m.Owner)}.Entry()
}

// entry is the name of e's index entry (see indexEntry).
func (e Expired) Entry() string {
	return fmt.Sprintf("%019d.%d.%s.%s", e.Created.UnixNano(), e.Size, e.OwnerKey, e.ID)
}

// parseIndexEntry reads an entry name written by indexEntry.
func ParseIndexEntry(area Area, name string) (Expired, bool) {
	parts := strings.Split(name, ".")
	if len(parts) != 4 || len(parts[2]) != len(OwnerKey("")) || !ValidID(parts[2]) || !ValidID(parts[3]) {
		return Expired{}, false
	}
	ns, err1 := strconv.ParseInt(parts[0], 10, 64)
	size, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || ns < 0 || size < 0 {
		return Expired{}, false
	}
	return Expired{Area: area, ID: parts[3], Size: size, Created: time.Unix(0, ns).UTC(), OwnerKey: parts[2]}, true
}
