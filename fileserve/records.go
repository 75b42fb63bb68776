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

// RecordStore is an optional capability of a [Store]: small documents kept
// beside the files, by kind, owner and name, each replaced whole by a write.
// agentcore keeps its A2A tasks in it, so that every replica sharing the
// store sees them and they outlive a restart. Like files, a record is
// reached only through its owner: another owner's record of the same name is
// another record. DiskStore and S3Store have it.
type RecordStore interface {
	// PutRecord writes the record, replacing any of the same kind, owner
	// and name at once: readers see the old or the new document whole.
	PutRecord(ctx context.Context, kind, owner, name string, data []byte) error
	// GetRecord reads a record, or fails with an error wrapping ErrNotFound.
	GetRecord(ctx context.Context, kind, owner, name string) ([]byte, error)
	// DeleteRecord removes a record; removing a missing one is not an error.
	DeleteRecord(ctx context.Context, kind, owner, name string) error
	// Records lists the records of kind that owner holds.
	Records(ctx context.Context, kind, owner string) ([]RecordInfo, error)
	// ExpireRecords removes the records of kind, of every owner, last
	// written before olderThan, and returns how many it removed. It lists
	// the records, and reads none.
	ExpireRecords(ctx context.Context, kind string, olderThan time.Time) (int, error)
}

// RecordCreator is an optional capability of a [RecordStore]: a record
// written only if none of its kind, owner and name exists, in one step, so
// that of replicas creating the same record at once exactly one succeeds.
// agentcore decides by it who ends a task (the replica that finishes it,
// or one that finds its lease run out), so that no output appears for a
// task already ended. DiskStore and S3Store have it (S3: a conditional
// PutObject, If-None-Match: *).
type RecordCreator interface {
	// CreateRecord writes the record if none exists; else it fails with
	// an error wrapping ErrExists and leaves the record as it is.
	CreateRecord(ctx context.Context, kind, owner, name string, data []byte) error
}

// ErrExists is the error of CreateRecord over an existing record.
var ErrExists = errors.New("record exists")

// RecordInfo describes a record listed by [RecordStore.Records].
type RecordInfo struct {
	Name    string
	Size    int64
	Changed time.Time // when it was last written
}

// RecordsDir is the folder (DiskStore) or key prefix (S3Store) of records.
const RecordsDir = "records"

// checkRecord validates the parts of a record's name: kind is 1 to 64
// lowercase letters, digits and '-'; name 1 to 128 letters, digits, '-',
// '_' and '.', not starting with '.'; owner is not empty.
func CheckRecord(kind, owner, name string) error {
	if !validRecordPart(kind, 64, false) {
		return fmt.Errorf("fileserve: record kind %q is not valid (1 to 64 of a-z, 0-9, '-')", kind)
	}
	if owner == "" {
		return errors.New("fileserve: a record needs an owner")
	}
	if name != "" && !validRecordPart(name, 128, true) {
		return fmt.Errorf("fileserve: record name %q is not valid (1 to 128 of A-Z, a-z, 0-9, '-', '_', '.', not starting with '.'): %w", name, ErrNotFound)
	}
	return nil
}

// CheckRecordName is CheckRecord of one record: a name is required, and an
// empty or malformed one is a record that does not exist (ErrNotFound), as a
// lookup by a caller's id must find nothing rather than read a folder.
func CheckRecordName(kind, owner, name string) error {
	if name == "" {
		return fmt.Errorf("fileserve: a record needs a name: %w", ErrNotFound)
	}
	return CheckRecord(kind, owner, name)
}

func validRecordPart(s string, max int, wide bool) bool {
	if s == "" || len(s) > max || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
		case wide && (c >= 'A' && c <= 'Z' || c == '_' || c == '.'):
		default:
			return false
		}
	}
	return true
}

var _ RecordStore = (*DiskStore)(nil)

// recordPath is the file of a record: <root>/records/<kind>/<ownerkey>/<name>.
func (d *DiskStore) recordPath(kind, owner, name string) string {
	return filepath.Join(d.root, RecordsDir, kind, OwnerKey(owner), name)
}

// PutRecord writes the record into tmp/ and renames it into place.
func (d *DiskStore) PutRecord(ctx context.Context, kind, owner, name string, data []byte) error {
	return d.writeRecord(kind, owner, name, data, os.Rename)
}

var _ RecordCreator = (*DiskStore)(nil)

// CreateRecord writes the record into tmp/ and links it into place: a
// hard link fails, as one step, where a file of the name exists.
func (d *DiskStore) CreateRecord(ctx context.Context, kind, owner, name string, data []byte) error {
	err := d.writeRecord(kind, owner, name, data, func(tmp, p string) error {
		err := os.Link(tmp, p)
		if !errors.Is(err, fs.ErrNotExist) { // else its folder was removed: tried again
			os.Remove(tmp)
		}
		return err
	})
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("fileserve: %s record %s: %w", kind, name, ErrExists)
	}
	return err
}

// writeRecord writes data into tmp/ and places it as the record with
// place (a rename, or a link).
func (d *DiskStore) writeRecord(kind, owner, name string, data []byte, place func(tmp, p string) error) error {
	if err := CheckRecord(kind, owner, name); err != nil {
		return err
	}
	if name == "" {
		return errors.New("fileserve: a record needs a name")
	}
	// Tagged as the store's other temporary entries: what a process that
	// stopped mid-write left is removed as soon as it is known to be gone
	// (RemoveTemp), not only after the shortest TTL.
	tmp := d.tempName("rec-")
	d.inflight.Store(tmp, true)
	defer d.inflight.Delete(tmp)
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		os.Remove(tmp) // a full disk leaves no part of the record behind
		return fmt.Errorf("fileserve: write %s record %s: %w", kind, name, err)
	}
	p := d.recordPath(kind, owner, name)
	var err error
	// ExpireRecords may remove an owner folder left empty in between; retry.
	for range 5 {
		if err = os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			break
		}
		if err = place(tmp, p); !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("fileserve: write %s record %s: %w", kind, name, err)
	}
	return nil
}

// GetRecord reads a record.
func (d *DiskStore) GetRecord(ctx context.Context, kind, owner, name string) ([]byte, error) {
	if err := CheckRecordName(kind, owner, name); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(d.recordPath(kind, owner, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("fileserve: %s record %s: %w", kind, name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("fileserve: read %s record %s: %w", kind, name, err)
	}
	return b, nil
}

// DeleteRecord removes a record.
func (d *DiskStore) DeleteRecord(ctx context.Context, kind, owner, name string) error {
	if err := CheckRecord(kind, owner, name); err != nil {
		return nil // no such record
	}
	if err := os.Remove(d.recordPath(kind, owner, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("fileserve: delete %s record %s: %w", kind, name, err)
	}
	return nil
}

// Records lists the records of kind that owner holds.
func (d *DiskStore) Records(ctx context.Context, kind, owner string) ([]RecordInfo, error) {
	if err := CheckRecord(kind, owner, ""); err != nil {
		return nil, err
	}
	dir := filepath.Dir(d.recordPath(kind, owner, "x"))
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fileserve: list %s records: %w", kind, err)
	}
	infos := make([]RecordInfo, 0, len(entries))
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			infos = append(infos, RecordInfo{Name: e.Name(), Size: fi.Size(), Changed: fi.ModTime()})
		}
	}
	return infos, nil
}

// ExpireRecords removes the records of kind last written before olderThan,
// and the owner folders it leaves empty.
func (d *DiskStore) ExpireRecords(ctx context.Context, kind string, olderThan time.Time) (int, error) {
	if err := CheckRecord(kind, "-", ""); err != nil {
		return 0, err
	}
	kindDir := filepath.Join(d.root, RecordsDir, kind)
	owners, err := os.ReadDir(kindDir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("fileserve: list %s records: %w", kind, err)
	}
	n := 0
	var errs []error
	for _, o := range owners {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		dir := filepath.Join(kindDir, o.Name())
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // removed meanwhile
		}
		left := len(entries)
		for _, e := range entries {
			fi, err := e.Info()
			if err != nil || !fi.ModTime().Before(olderThan) {
				continue
			}
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
				continue
			}
			n++
			left--
		}
		if left == 0 {
			os.Remove(dir) // fails, as it should, if a record arrived meanwhile
		}
	}
	if err := errors.Join(errs...); err != nil {
		return n, fmt.Errorf("fileserve: expire %s records: %w", kind, err)
	}
	return n, nil
}
