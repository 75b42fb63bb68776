package s3store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/minio/minio-go/v7"
)

// Walk calls fn with the metadata of every file of area: it lists the
// area's keys and reads each metadata object (one GET per file). Files
// whose metadata cannot be read are skipped (Prune removes them once old).
func (s *Store) Walk(ctx context.Context, area fileserve.Area, fn func(fileserve.Meta) error) error {
	if !area.Valid() {
		return fmt.Errorf("s3store: walk: unknown area %q (want outputs or staging)", area)
	}
	return s.list(ctx, s.prefix+string(area)+"/", func(obj minio.ObjectInfo) error {
		id, name, ok := s.parseKey(area, obj.Key)
		if !ok || name != metaFile {
			return nil
		}
		m, err := s.getMeta(ctx, obj.Key)
		if err != nil || m.Area != area || m.ID != id {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return nil
		}
		return fn(m)
	})
}

// Prune removes, when last changed before olderThan: content of area
// without metadata (left by a crash between the two uploads of a file, or
// between the two removals of a delete), multipart uploads of area never
// completed, and readiness probes left behind. Uploads in progress in this
// process are left alone whatever their age; those of other processes are
// as young as the upload, which olderThan (a TTL of minutes or hours in the
// past) leaves alone too. Several processes may prune at once: removing a
// missing key is not an error in S3. It lists every key of area, and gives
// each file without an expiry index entry (written by an older layout) its
// entry: Tidy is the cheap part of Prune that a frequent sweep runs instead.
func (s *Store) Prune(ctx context.Context, area fileserve.Area, olderThan time.Time) error {
	if !area.Valid() {
		return fmt.Errorf("s3store: prune: unknown area %q (want outputs or staging)", area)
	}
	type files struct {
		data, meta bool
		changed    time.Time
		id         string
	}
	byDir := map[string]*files{}
	err := s.list(ctx, s.prefix+string(area)+"/", func(obj minio.ObjectInfo) error {
		id, name, ok := s.parseKey(area, obj.Key)
		if !ok {
			return nil
		}
		dir := strings.TrimSuffix(obj.Key, name)
		f := byDir[dir]
		if f == nil {
			f = &files{id: id}
			byDir[dir] = f
		}
		if _, busy := s.inflight.Load(id); busy {
			f.changed = time.Now() // never old
		} else if obj.LastModified.After(f.changed) {
			f.changed = obj.LastModified
		}
		f.data = f.data || name == dataFile
		f.meta = f.meta || name == metaFile
		return nil
	})
	if err != nil {
		return fmt.Errorf("s3store: prune %s: %w", area, err)
	}
	var errs []error
	stored := map[string]string{} // id → key folder of every complete file
	for dir, f := range byDir {
		switch {
		case f.data && f.meta:
			stored[f.id] = dir
		case f.data && f.changed.Before(olderThan):
			if err := s.client.RemoveObject(ctx, s.bucket, dir+dataFile, minio.RemoveObjectOptions{}); err != nil && !isNoSuchKey(err) {
				errs = append(errs, s.s3Error("remove", dir+dataFile, err))
			}
		}
	}
	errs = append(errs, s.repairIndex(ctx, area, stored), s.abortUploads(ctx, area, olderThan), s.pruneTmp(ctx, olderThan))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("s3store: prune %s: %w", area, err)
	}
	return nil
}

// abortUploads aborts the multipart uploads of area begun before olderThan,
// except this process's uploads in progress.
func (s *Store) abortUploads(ctx context.Context, area fileserve.Area, olderThan time.Time) error {
	var errs []error
	for up := range s.client.ListIncompleteUploads(ctx, s.bucket, s.prefix+string(area)+"/", true) {
		if up.Err != nil {
			errs = append(errs, s.s3Error("list uploads", s.prefix+string(area)+"/", up.Err))
			break
		}
		id, _, ok := s.parseKey(area, up.Key)
		if _, busy := s.inflight.Load(id); !ok || busy || !up.Initiated.Before(olderThan) {
			continue
		}
		if err := s.core.AbortMultipartUpload(ctx, s.bucket, up.Key, up.UploadID); err != nil && !isNoSuchUpload(err) {
			errs = append(errs, s.s3Error("abort upload", up.Key, err))
		}
	}
	return errors.Join(errs...)
}

// pruneTmp removes the readiness probes under tmp/ written before olderThan.
func (s *Store) pruneTmp(ctx context.Context, olderThan time.Time) error {
	var errs []error
	err := s.list(ctx, s.prefix+tmpDir+"/", func(obj minio.ObjectInfo) error {
		if obj.LastModified.Before(olderThan) {
			if err := s.client.RemoveObject(ctx, s.bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil && !isNoSuchKey(err) {
				errs = append(errs, s.s3Error("remove", obj.Key, err))
			}
		}
		return nil
	})
	return errors.Join(append(errs, err)...)
}

// errListDone, returned by list's fn, ends the listing without an error.
var errListDone = errors.New("s3store: listing done")

// list calls fn with every object under prefix, in key order, until fn
// returns errListDone.
func (s *Store) list(ctx context.Context, prefix string, fn func(minio.ObjectInfo) error) error {
	for obj := range s.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			if err := ctx.Err(); err != nil {
				return err
			}
			return s.s3Error("list", prefix, obj.Err)
		}
		if err := fn(obj); err == errListDone {
			break
		} else if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// parseKey splits a key <prefix><area>/<ownerkey>/<id>/<name> of area.
func (s *Store) parseKey(area fileserve.Area, key string) (id, name string, ok bool) {
	rest, ok := strings.CutPrefix(key, s.prefix+string(area)+"/")
	if !ok {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || len(parts[0]) != len(fileserve.OwnerKey("")) || !fileserve.ValidID(parts[1]) || (parts[2] != dataFile && parts[2] != metaFile) {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// isNoSuchUpload reports whether err is S3's answer for a multipart upload
// that is gone (completed or aborted by someone else).
func isNoSuchUpload(err error) bool {
	return minio.ToErrorResponse(err).Code == "NoSuchUpload"
}
