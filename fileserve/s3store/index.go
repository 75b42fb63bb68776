package s3store

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentura/agentura/fileserve"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// The Store's expiry index is one empty object per file,
// <prefix>index/<area>/<entry> (entry from indexEntry). S3 lists keys in
// order, and entries begin with the creation time, so the expired files are
// the first keys of the listing: a sweep lists them, 1,000 to a request,
// and stops at the first one still alive; it reads no metadata object.

var _ fileserve.ExpiryIndex = (*Store)(nil)

// indexPrefix is the key prefix of area's index entries.
func (s *Store) indexPrefix(area fileserve.Area) string {
	return s.prefix + fileserve.IndexDir + "/" + string(area) + "/"
}

// putIndex writes m's index entry; add calls it before the metadata makes
// the file visible, so that no file lacks an entry.
func (s *Store) putIndex(ctx context.Context, m fileserve.Meta) error {
	key := s.indexPrefix(m.Area) + fileserve.IndexEntry(m)
	if err := s.putBytes(ctx, key, nil, minio.PutObjectOptions{}); err != nil {
		return s.s3Error("write expiry index entry", key, err)
	}
	return nil
}

// Expired calls fn with every file of area created before cutoff, oldest
// first, from a listing of the index that stops at the first live entry.
func (s *Store) Expired(ctx context.Context, area fileserve.Area, cutoff time.Time, fn func(fileserve.Expired) error) error {
	if !area.Valid() {
		return fmt.Errorf("s3store: expired: unknown area %q (want outputs or staging)", area)
	}
	prefix := s.indexPrefix(area)
	return s.list(ctx, prefix, func(obj minio.ObjectInfo) error {
		x, ok := fileserve.ParseIndexEntry(area, strings.TrimPrefix(obj.Key, prefix))
		switch {
		case !ok:
			return nil
		case !x.Created.Before(cutoff):
			return errListDone // the rest is younger
		}
		return fn(x)
	})
}

// Expire removes the file e names: its metadata first, so it is gone for
// every reader at once, then its content, then its index entry. S3 does not
// say whether a removed key existed, so a file already gone is not reported
// as such.
func (s *Store) Expire(ctx context.Context, e fileserve.Expired) error {
	if !e.Area.Valid() || !fileserve.ValidID(e.ID) || !fileserve.ValidID(e.OwnerKey) {
		return fmt.Errorf("s3store: expire: %w (invalid area, owner or id)", fileserve.ErrNotFound)
	}
	dir := s.prefix + string(e.Area) + "/" + e.OwnerKey + "/" + e.ID + "/"
	for _, key := range []string{dir + metaFile, dir + dataFile, s.indexPrefix(e.Area) + e.Entry()} {
		if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil && !isNoSuchKey(err) {
			return fmt.Errorf("s3store: expire %s file %s: %w", e.Area, e.ID, s.s3Error("remove", key, err))
		}
	}
	return nil
}

// Tidy aborts the multipart uploads of area and removes the readiness
// probes left behind before olderThan; unlike Prune it does not list every
// stored file.
func (s *Store) Tidy(ctx context.Context, area fileserve.Area, olderThan time.Time) error {
	if !area.Valid() {
		return fmt.Errorf("s3store: tidy: unknown area %q (want outputs or staging)", area)
	}
	if err := errors.Join(s.abortUploads(ctx, area, olderThan), s.pruneTmp(ctx, olderThan)); err != nil {
		return fmt.Errorf("s3store: tidy %s: %w", area, err)
	}
	return nil
}

// repairIndex gives the files of area, named by their key folders in dirs,
// that have no index entry (written by the layout before the index, or
// whose entry a failure lost) their entry. It lists the index and reads the
// metadata of the files without an entry only: once per file, when a store
// of the older layout is first pruned.
func (s *Store) repairIndex(ctx context.Context, area fileserve.Area, dirs map[string]string) error {
	indexed := map[string]bool{}
	prefix := s.indexPrefix(area)
	err := s.list(ctx, prefix, func(obj minio.ObjectInfo) error {
		if x, ok := fileserve.ParseIndexEntry(area, strings.TrimPrefix(obj.Key, prefix)); ok {
			indexed[x.ID] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	var errs []error
	for id, dir := range dirs {
		if indexed[id] {
			continue
		}
		m, err := s.getMeta(ctx, dir+metaFile)
		if err != nil {
			if !errors.Is(err, fileserve.ErrNotFound) { // else deleted meanwhile
				errs = append(errs, err)
			}
			continue
		}
		if m.ID == id && m.Area == area {
			errs = append(errs, s.putIndex(ctx, m))
		}
	}
	return errors.Join(errs...)
}
