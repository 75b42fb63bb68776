//go:build unix

package fileserve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TagTemp tags the temporary folders this store writes from now on with
// tag (a store's id form: letters, digits and '-'), so that what a crashed
// process left is removed as soon as it is known to be gone (RemoveTemp)
// rather than after the shortest TTL (Prune). agentcore tags a store it
// opened itself with its instance id.
func (d *DiskStore) TagTemp(tag string) { d.tempTag.Store(&tag) }

// tempName is the path of a new temporary entry: tmp/<prefix><tag>.<id>,
// or tmp/<prefix><id> untagged.
func (d *DiskStore) tempName(prefix string) string {
	name := prefix + NewID()
	if tag := d.tempTag.Load(); tag != nil && *tag != "" {
		name = prefix + *tag + "." + NewID()
	}
	return filepath.Join(d.root, tmpDir, name)
}

// RemoveTemp removes from tmp/ the folders of writes and deletes made by
// processes that are gone, whatever their age.
func (d *DiskStore) RemoveTemp(gone func(tag string) bool) (int, error) {
	tmp := filepath.Join(d.root, tmpDir)
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return 0, fmt.Errorf("fileserve: list %s: %w", tmp, err)
	}
	n := 0
	var errs []error
	for _, e := range entries {
		_, rest, ok := strings.Cut(e.Name(), "-")
		tag, _, tagged := strings.Cut(rest, ".")
		if !ok || !tagged || tag == "" {
			continue
		}
		p := filepath.Join(tmp, e.Name())
		if _, busy := d.inflight.Load(p); busy || !gone(tag) {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if err := errors.Join(errs...); err != nil {
		return n, fmt.Errorf("fileserve: remove the temporary files of stopped processes: %w", err)
	}
	return n, nil
}
