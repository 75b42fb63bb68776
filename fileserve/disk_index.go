package fileserve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The DiskStore's expiry index is one file per area and minute,
// <root>/index/<area>/<bucket>.idx, a bucket being the UTC minute of the
// files' creation ("20060102T1504"): commit appends one line (indexEntry)
// per file. os.ReadDir lists the buckets oldest first, so a sweep reads only
// the buckets that start before its cutoff, and removes a bucket with one
// unlink once its files are gone. Lines are never removed: Delete leaves
// its file's line, which the sweep that reaches it finds gone.
const (
	bucketWidth  = time.Minute
	bucketLayout = "20060102T1504"
	bucketExt    = ".idx"
)

var _ ExpiryIndex = (*DiskStore)(nil)

// bucketOf is the bucket file name of a creation time.
func bucketOf(t time.Time) string { return t.UTC().Format(bucketLayout) + bucketExt }

// bucketStart parses a bucket file name.
func bucketStart(name string) (time.Time, bool) {
	base, ok := strings.CutSuffix(name, bucketExt)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(bucketLayout, base)
	return t, err == nil
}

// writeIndex appends m's line to its bucket. commit calls it before the
// file becomes visible, so that no file lacks a line (a crash in between
// leaves a line without a file, which the sweep that finds it skips). One
// write of a line shorter than a page with O_APPEND is not interleaved
// with another process's.
func (d *DiskStore) writeIndex(m Meta) error {
	p := filepath.Join(d.root, IndexDir, string(m.Area), bucketOf(m.Created))
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
			f, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		}
	}
	if err == nil {
		_, err = f.Write([]byte(IndexEntry(m) + "\n"))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("write expiry index: %w", err)
	}
	return nil
}

// indexed returns the ids of area that have a line in the index.
func (d *DiskStore) indexed(ctx context.Context, area Area) (map[string]bool, error) {
	ids := map[string]bool{}
	err := d.eachIndexed(ctx, area, time.Time{}, true, func(x Expired) error {
		ids[x.ID] = true
		return nil
	})
	return ids, err
}

// eachIndexed calls fn with the lines of area's buckets that start before
// cutoff (all buckets when all is true) and name files created before it.
func (d *DiskStore) eachIndexed(ctx context.Context, area Area, cutoff time.Time, all bool, fn func(Expired) error) error {
	areaDir := filepath.Join(d.root, IndexDir, string(area))
	buckets, err := os.ReadDir(areaDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing was ever indexed
	}
	if err != nil {
		return fmt.Errorf("fileserve: list %s: %w", areaDir, err)
	}
	for _, b := range buckets { // sorted by name, that is by time
		start, ok := bucketStart(b.Name())
		if !ok || !b.Type().IsRegular() {
			continue
		}
		if !all && !start.Before(cutoff) {
			break
		}
		data, err := os.ReadFile(filepath.Join(areaDir, b.Name()))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // tidied meanwhile
			}
			return fmt.Errorf("fileserve: read %s: %w", filepath.Join(areaDir, b.Name()), err)
		}
		for len(data) > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			var line []byte
			line, data, _ = bytes.Cut(data, []byte("\n"))
			x, ok := ParseIndexEntry(area, string(line))
			if !ok || (!all && !x.Created.Before(cutoff)) {
				continue // a torn line of a crash, or still alive
			}
			if err := fn(x); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// Expired calls fn with every file of area created before cutoff, read from
// the index: only the buckets that start before cutoff are read. Files
// deleted by Delete since may be named too; Expire finds them gone.
func (d *DiskStore) Expired(ctx context.Context, area Area, cutoff time.Time, fn func(Expired) error) error {
	if !area.Valid() {
		return fmt.Errorf("fileserve: expired: unknown area %q (want outputs or staging)", area)
	}
	return d.eachIndexed(ctx, area, cutoff, false, fn)
}

// Expire removes the file e names: its metadata first, so it is gone for
// Stat, Open and Walk at once, then its content and its folder (three
// system calls). Unlinked content stays readable to whoever has it open.
// Its index line stays until Tidy removes the bucket.
func (d *DiskStore) Expire(ctx context.Context, e Expired) error {
	if !e.Area.Valid() || !ValidID(e.ID) || !ValidID(e.OwnerKey) {
		return fmt.Errorf("fileserve: expire: %w (invalid area, owner or id)", ErrNotFound)
	}
	dir := filepath.Join(d.root, string(e.Area), e.OwnerKey, e.ID)
	gone := 0
	for _, step := range []struct {
		rm   func(string) error
		path string
	}{{syscall.Unlink, filepath.Join(dir, metaFile)}, {syscall.Unlink, filepath.Join(dir, dataFile)}, {syscall.Rmdir, dir}} {
		if err := step.rm(step.path); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("fileserve: expire %s file %s: %w", e.Area, e.ID, &fs.PathError{Op: "remove", Path: step.path, Err: err})
			}
			gone++
		}
	}
	d.metas.Forget(e.ID)
	d.open.forget(e.ID)
	if gone == 3 {
		return notFound(e.Area, e.ID)
	}
	return nil
}

// Tidy removes, when last changed before olderThan, the empty owner folders
// of area and everything in tmp/, and the index buckets of area that ended
// before olderThan: call it after the files they name were expired (a file
// still there whose bucket went is indexed again by the next full Prune).
// Unlike Prune it does not look at every stored file.
func (d *DiskStore) Tidy(ctx context.Context, area Area, olderThan time.Time) error {
	if !area.Valid() {
		return fmt.Errorf("fileserve: tidy: unknown area %q (want outputs or staging)", area)
	}
	if err := errors.Join(d.pruneOwners(area, olderThan), d.pruneBuckets(area, olderThan), d.pruneTmp(olderThan)); err != nil {
		return fmt.Errorf("fileserve: tidy %s: %w", area, err)
	}
	return ctx.Err()
}

// pruneBuckets removes the index buckets of area that ended before olderThan.
func (d *DiskStore) pruneBuckets(area Area, olderThan time.Time) error {
	areaDir := filepath.Join(d.root, IndexDir, string(area))
	buckets, err := os.ReadDir(areaDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var errs []error
	for _, b := range buckets {
		start, ok := bucketStart(b.Name())
		if !ok || !start.Add(bucketWidth).Before(olderThan) {
			if ok {
				break // sorted: the rest is younger
			}
			continue
		}
		if err := os.Remove(filepath.Join(areaDir, b.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
