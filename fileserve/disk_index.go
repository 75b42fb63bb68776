package fileserve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The DiskStore's expiry index lives under <root>/index/<area>/<bucket>/,
// one empty file per stored file named by indexEntry; a bucket is the UTC
// minute of the files' creation ("20060102T1504"), so os.ReadDir lists the
// buckets oldest first and a sweep opens only the buckets that reach back
// before its cutoff.
const (
	bucketWidth  = time.Minute
	bucketLayout = "20060102T1504"
)

var _ ExpiryIndex = (*DiskStore)(nil)

// bucketOf is the bucket folder name of a creation time.
func bucketOf(t time.Time) string { return t.UTC().Format(bucketLayout) }

// indexPath is the path of m's index entry.
func (d *DiskStore) indexPath(m Meta) string {
	return filepath.Join(d.root, indexDir, string(m.Area), bucketOf(m.Created), indexEntry(m))
}

// writeIndex creates m's index entry. commit calls it before the file
// becomes visible, so that no file lacks an entry; an entry without a file
// (a crash in between) is dropped by the sweep that finds it.
func (d *DiskStore) writeIndex(m Meta) error {
	p := d.indexPath(m)
	var err error
	// Tidy may remove an empty bucket between MkdirAll and the create; retry.
	for range 5 {
		if err = os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			break
		}
		var f *os.File
		if f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o600); err == nil {
			return f.Close()
		}
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	return fmt.Errorf("write expiry index entry: %w", err)
}

// ensureIndex gives a stored file that has no index entry (written by the
// layout before the index existed) its entry. Prune calls it for every file.
func (d *DiskStore) ensureIndex(m Meta) error {
	if _, err := os.Lstat(d.indexPath(m)); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return d.writeIndex(m)
}

// Expired calls fn with every file of area created before cutoff, read from
// the index: the bucket folders are listed, and only those starting before
// cutoff are opened.
func (d *DiskStore) Expired(ctx context.Context, area Area, cutoff time.Time, fn func(Expired) error) error {
	if !area.Valid() {
		return fmt.Errorf("fileserve: expired: unknown area %q (want outputs or staging)", area)
	}
	areaDir := filepath.Join(d.root, indexDir, string(area))
	buckets, err := os.ReadDir(areaDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing was ever indexed
	}
	if err != nil {
		return fmt.Errorf("fileserve: list %s: %w", areaDir, err)
	}
	for _, b := range buckets { // sorted by name, that is by time
		start, err := time.Parse(bucketLayout, b.Name())
		if err != nil || !b.IsDir() {
			continue
		}
		if !start.Before(cutoff) {
			break
		}
		entries, err := os.ReadDir(filepath.Join(areaDir, b.Name()))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // tidied meanwhile
			}
			return fmt.Errorf("fileserve: list %s: %w", filepath.Join(areaDir, b.Name()), err)
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			x, ok := parseIndexEntry(area, e.Name())
			if !ok || !x.Created.Before(cutoff) || bucketOf(x.Created) != b.Name() {
				continue
			}
			if err := fn(x); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// Expire removes the file e names: its metadata first, so it is gone for
// Stat, Open and Walk at once, then its content, its folder and last its
// index entry, so that a crash half-way leaves an entry the next sweep
// finds again. Unlinked content stays readable to whoever has it open.
func (d *DiskStore) Expire(ctx context.Context, e Expired) error {
	if !e.Area.Valid() || !validID(e.ID) || !validID(e.ownerKey) {
		return fmt.Errorf("fileserve: expire: %w (invalid area, owner or id)", ErrNotFound)
	}
	dir := filepath.Join(d.root, string(e.Area), e.ownerKey, e.ID)
	gone := 0
	for _, p := range []string{filepath.Join(dir, metaFile), filepath.Join(dir, dataFile), dir} {
		if err := os.Remove(p); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("fileserve: expire %s file %s: %w", e.Area, e.ID, err)
			}
			gone++
		}
	}
	d.metas.forget(e.ID)
	entry := filepath.Join(d.root, indexDir, string(e.Area), bucketOf(e.Created), e.entry())
	if err := os.Remove(entry); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("fileserve: %s file %s is deleted, but removing its index entry failed (the next sweep retries): %w", e.Area, e.ID, err)
	}
	if gone == 3 {
		return notFound(e.Area, e.ID)
	}
	return nil
}

// Tidy removes, when last changed before olderThan, the empty owner folders
// and index buckets of area and everything in tmp/; unlike Prune it does not
// look at every stored file.
func (d *DiskStore) Tidy(ctx context.Context, area Area, olderThan time.Time) error {
	if !area.Valid() {
		return fmt.Errorf("fileserve: tidy: unknown area %q (want outputs or staging)", area)
	}
	var errs []error
	if err := d.pruneOwners(area, olderThan); err != nil {
		errs = append(errs, err)
	}
	if err := d.pruneBuckets(area, olderThan); err != nil {
		errs = append(errs, err)
	}
	if err := d.pruneTmp(olderThan); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("fileserve: tidy %s: %w", area, err)
	}
	return ctx.Err()
}

// pruneBuckets removes the empty index buckets of area that ended before
// olderThan.
func (d *DiskStore) pruneBuckets(area Area, olderThan time.Time) error {
	areaDir := filepath.Join(d.root, indexDir, string(area))
	buckets, err := os.ReadDir(areaDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	d.owners.Lock()
	defer d.owners.Unlock()
	for _, b := range buckets {
		start, err := time.Parse(bucketLayout, b.Name())
		if err != nil || !start.Add(bucketWidth).Before(olderThan) {
			continue
		}
		os.Remove(filepath.Join(areaDir, b.Name())) // fails, as it should, unless empty
	}
	return nil
}
