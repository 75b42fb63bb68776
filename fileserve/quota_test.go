package fileserve

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestQuotaStore(t *testing.T) {
	ctx := context.Background()
	disk := newTestStore(t)
	q, err := NewQuotaStore(disk, QuotaConfig{Limit: 1000, Setting: "AGENT_OWNER_QUOTA_BYTES",
		TTL: func(a Area) time.Duration { return time.Hour }})
	if err != nil {
		t.Fatal(err)
	}
	put := func(owner string, n int) (Meta, error) {
		return q.Put(ctx, NewFile{Area: Staging, Owner: owner, Name: "f.bin"}, bytes.NewReader(make([]byte, n)))
	}
	first, err := put("alice", 600)
	if err != nil {
		t.Fatal(err)
	}
	_, err = put("alice", 600)
	var qe *QuotaError
	if !errors.As(err, &qe) || !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("second put: want a QuotaError, got %v", err)
	}
	for _, want := range []string{`owner "alice" holds 600 B of its 1000 B quota`, "AGENT_OWNER_QUOTA_BYTES", "space frees up at " + first.Created.Add(time.Hour).UTC().Format(time.RFC3339)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	n := 0
	disk.Walk(ctx, Staging, func(Meta) error { n++; return nil })
	if n != 1 {
		t.Errorf("store holds %d files after the refused put, want 1 (nothing partial)", n)
	}
	if _, err := put("bob", 900); err != nil {
		t.Errorf("another owner is limited by alice's use: %v", err)
	}
	// An adopted file counts before it is taken in.
	p := filepath.Join(t.TempDir(), "out.bin")
	os.WriteFile(p, make([]byte, 500), 0o600)
	if _, err := q.Adopt(ctx, NewFile{Area: Outputs, Owner: "alice", Name: "out.bin"}, p); !errors.As(err, &qe) {
		t.Errorf("adopt over the quota: want a QuotaError, got %v", err)
	}
	// Deleting frees the space.
	if err := q.Delete(ctx, Staging, "alice", first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Adopt(ctx, NewFile{Area: Outputs, Owner: "alice", Name: "out.bin"}, p); err != nil {
		t.Errorf("adopt after delete: %v", err)
	}
	if used, _ := q.Used(ctx, "alice"); used != 500 {
		t.Errorf("alice uses %d, want 500", used)
	}

	// A second process on the same store reads the usage from it.
	q2, _ := NewQuotaStore(disk, QuotaConfig{Limit: 1000})
	if used, _ := q2.Used(ctx, "bob"); used != 900 {
		t.Errorf("a fresh QuotaStore sees bob use %d, want 900", used)
	}
}

// BenchmarkQuotaFirstLoad is what a QuotaStore's first reading costs: a
// Walk of a disk store holding 2000 files of 20 owners.
func BenchmarkQuotaFirstLoad(b *testing.B) {
	ctx := context.Background()
	disk := newTestStore(b)
	for i := range 2000 {
		if _, err := disk.Put(ctx, NewFile{Area: Staging, Owner: "o" + string(rune('a'+i%20)), Name: "f"}, bytes.NewReader([]byte("x"))); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		q, _ := NewQuotaStore(disk, QuotaConfig{Limit: 1 << 30})
		if _, err := q.Used(ctx, "oa"); err != nil {
			b.Fatal(err)
		}
	}
}
