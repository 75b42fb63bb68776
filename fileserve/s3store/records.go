package s3store

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentura/agentura/fileserve"
	"io"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

var _ fileserve.RecordStore = (*Store)(nil)

// recordPrefix is the key prefix of the records of kind held by the owner
// whose key is okey: <prefix>records/<kind>/<ownerkey>/.
func (s *Store) recordPrefix(kind, okey string) string {
	return s.prefix + fileserve.RecordsDir + "/" + kind + "/" + okey + "/"
}

// PutRecord writes the record in one PUT, which S3 makes visible whole.
func (s *Store) PutRecord(ctx context.Context, kind, owner, name string, data []byte) error {
	if err := fileserve.CheckRecord(kind, owner, name); err != nil {
		return err
	}
	if name == "" {
		return errors.New("s3store: a record needs a name")
	}
	key := s.recordPrefix(kind, fileserve.OwnerKey(owner)) + name
	if err := s.putBytes(ctx, key, data, minio.PutObjectOptions{ContentType: "application/json"}); err != nil {
		return s.s3Error("write record", key, err)
	}
	return nil
}

var _ fileserve.RecordCreator = (*Store)(nil)

// CreateRecord writes the record with a conditional PutObject
// (If-None-Match: *): the server refuses it (412) where the key exists.
// A conflict with another conditional write in flight (409) is tried again.
func (s *Store) CreateRecord(ctx context.Context, kind, owner, name string, data []byte) error {
	if err := fileserve.CheckRecord(kind, owner, name); err != nil {
		return err
	}
	if name == "" {
		return errors.New("s3store: a record needs a name")
	}
	key := s.recordPrefix(kind, fileserve.OwnerKey(owner)) + name
	opts := minio.PutObjectOptions{ContentType: "application/json"}
	opts.SetMatchETagExcept("*")
	var err error
	for range putTries {
		err = s.putBytes(ctx, key, data, opts)
		if code := minio.ToErrorResponse(err).Code; code != "ConditionalRequestConflict" {
			if code == "PreconditionFailed" {
				return fmt.Errorf("s3store: %s record %s: %w", kind, name, fileserve.ErrExists)
			}
			break
		}
	}
	if err != nil {
		return s.s3Error("create record", key, err)
	}
	return nil
}

// GetRecord reads a record.
func (s *Store) GetRecord(ctx context.Context, kind, owner, name string) ([]byte, error) {
	if err := fileserve.CheckRecordName(kind, owner, name); err != nil {
		return nil, err
	}
	key := s.recordPrefix(kind, fileserve.OwnerKey(owner)) + name
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err == nil {
		var b []byte
		if b, err = io.ReadAll(obj); err == nil {
			obj.Close()
			return b, nil
		}
		obj.Close()
	}
	if isNoSuchKey(err) {
		return nil, fmt.Errorf("s3store: %s record %s: %w", kind, name, fileserve.ErrNotFound)
	}
	return nil, s.s3Error("read record", key, err)
}

// DeleteRecord removes a record.
func (s *Store) DeleteRecord(ctx context.Context, kind, owner, name string) error {
	if err := fileserve.CheckRecord(kind, owner, name); err != nil {
		return nil // no such record
	}
	key := s.recordPrefix(kind, fileserve.OwnerKey(owner)) + name
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil && !isNoSuchKey(err) {
		return s.s3Error("remove record", key, err)
	}
	return nil
}

// Records lists the records of kind that owner holds.
func (s *Store) Records(ctx context.Context, kind, owner string) ([]fileserve.RecordInfo, error) {
	if err := fileserve.CheckRecord(kind, owner, ""); err != nil {
		return nil, err
	}
	prefix := s.recordPrefix(kind, fileserve.OwnerKey(owner))
	var infos []fileserve.RecordInfo
	err := s.list(ctx, prefix, func(obj minio.ObjectInfo) error {
		if name := strings.TrimPrefix(obj.Key, prefix); fileserve.CheckRecord(kind, owner, name) == nil {
			infos = append(infos, fileserve.RecordInfo{Name: name, Size: obj.Size, Changed: obj.LastModified})
		}
		return nil
	})
	return infos, err
}

// ExpireRecords removes the records of kind last written before olderThan,
// from a listing (no record is read).
func (s *Store) ExpireRecords(ctx context.Context, kind string, olderThan time.Time) (int, error) {
	if err := fileserve.CheckRecord(kind, "-", ""); err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	err := s.list(ctx, s.prefix+fileserve.RecordsDir+"/"+kind+"/", func(obj minio.ObjectInfo) error {
		if !obj.LastModified.Before(olderThan) {
			return nil
		}
		if err := s.client.RemoveObject(ctx, s.bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil && !isNoSuchKey(err) {
			errs = append(errs, s.s3Error("remove record", obj.Key, err))
			return nil
		}
		n++
		return nil
	})
	if err := errors.Join(append(errs, err)...); err != nil {
		return n, fmt.Errorf("s3store: expire %s records: %w", kind, err)
	}
	return n, nil
}
