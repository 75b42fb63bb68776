package fileserve

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Internals the external tests (package fileserve_test) need to build the
// remains of interrupted writes in a store's own layout.

// Seed writes n files of area straight into d's layout, one byte each,
// spread over 100 owners and created a microsecond apart from created on, as
// commit leaves them but without its syncs; indexed false leaves out the
// expiry index entries, as the layout before the index did. Benchmarks use
// it to build stores of 100,000 files in seconds.
func Seed(d *DiskStore, area Area, n int, created time.Time, indexed bool) error {
	for i := range n {
		m := Meta{ID: NewID(), Area: area, Owner: fmt.Sprintf("owner-%d", i%100), Name: "f.txt", MIMEType: "text/plain; charset=utf-8",
			Size: 1, SHA256: "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb", Created: created.Add(time.Duration(i) * time.Microsecond).UTC()}
		dir := filepath.Join(d.root, string(area), OwnerKey(m.Owner), m.ID)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, dataFile), []byte("a"), 0o600); err != nil {
			return err
		}
		b, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(dir, metaFile), b, 0o600); err != nil {
			return err
		}
		if indexed {
			if err := d.writeIndex(m); err != nil {
				return err
			}
		}
	}
	return nil
}
