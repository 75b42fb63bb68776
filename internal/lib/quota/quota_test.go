package quota

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
)

func TestQuotaStore(t *testing.T) {
	ctx := context.Background()
	disk := newTestStore(t)
	q, err := New(disk, Config{Limit: 1000, Setting: "AGENT_OWNER_QUOTA_BYTES",
		TTL: func(a fileserve.Area) time.Duration { return time.Hour }})
	if err != nil {
		t.Fatal(err)
	}
	put := func(owner string, n int) (fileserve.Meta, error) {
		return q.Put(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: owner, Name: "f.bin"}, bytes.NewReader(make([]byte, n)))
	}
	first, err := put("alice", 600)
	if err != nil {
		t.Fatal(err)
	}
	_, err = put("alice", 600)
	var qe *Error
	if !errors.As(err, &qe) || !errors.Is(err, ErrExceeded) {
		t.Fatalf("second put: want a Error, got %v", err)
	}
	for _, want := range []string{`owner "alice" holds 600 B of its 1000 B quota`, "AGENT_OWNER_QUOTA_BYTES", "space frees up at " + first.Created.Add(time.Hour).UTC().Format(time.RFC3339)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	n := 0
	disk.Walk(ctx, fileserve.Staging, func(fileserve.Meta) error { n++; return nil })
	if n != 1 {
		t.Errorf("store holds %d files after the refused put, want 1 (nothing partial)", n)
	}
	if _, err := put("bob", 900); err != nil {
		t.Errorf("another owner is limited by alice's use: %v", err)
	}
	// An adopted file counts before it is taken in.
	p := filepath.Join(t.TempDir(), "out.bin")
	os.WriteFile(p, make([]byte, 500), 0o600)
	if _, err := q.Adopt(ctx, fileserve.NewFile{Area: fileserve.Outputs, Owner: "alice", Name: "out.bin"}, p); !errors.As(err, &qe) {
		t.Errorf("adopt over the quota: want a Error, got %v", err)
	}
	// Deleting frees the space.
	if err := q.Delete(ctx, fileserve.Staging, "alice", first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Adopt(ctx, fileserve.NewFile{Area: fileserve.Outputs, Owner: "alice", Name: "out.bin"}, p); err != nil {
		t.Errorf("adopt after delete: %v", err)
	}
	if used, _ := q.Used(ctx, "alice"); used != 500 {
		t.Errorf("alice uses %d, want 500", used)
	}

	// A second process on the same store reads the usage from it.
	q2, _ := New(disk, Config{Limit: 1000})
	if used, _ := q2.Used(ctx, "bob"); used != 900 {
		t.Errorf("a fresh Store sees bob use %d, want 900", used)
	}
}

// BenchmarkQuotaFirstLoad is what a Store's first reading costs: a
// Walk of a disk store holding 2000 files of 20 owners.
func BenchmarkQuotaFirstLoad(b *testing.B) {
	ctx := context.Background()
	disk := newTestStore(b)
	for i := range 2000 {
		if _, err := disk.Put(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: "o" + string(rune('a'+i%20)), Name: "f"}, bytes.NewReader([]byte("x"))); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		q, _ := New(disk, Config{Limit: 1 << 30})
		if _, err := q.Used(ctx, "oa"); err != nil {
			b.Fatal(err)
		}
	}
}

// A file past its TTL stops counting when it expires, before the sweeper
// deletes it: what the sweeper deletes is free at once, on every process.
func TestQuotaExpiredFilesStopCounting(t *testing.T) {
	ctx := context.Background()
	disk := newTestStore(t)
	var ahead time.Duration
	clock := func() time.Time { return time.Now().Add(ahead) }
	q, err := New(disk, Config{Limit: 1000, TTL: func(fileserve.Area) time.Duration { return time.Minute }, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Put(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: "alice", Name: "a"}, bytes.NewReader(make([]byte, 800))); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Put(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: "alice", Name: "b"}, bytes.NewReader(make([]byte, 800))); !errors.Is(err, ErrExceeded) {
		t.Fatalf("second put within the TTL: %v; want the quota refused", err)
	}
	ahead = 2 * time.Minute // the first file expired; nobody swept it
	if used, _ := q.Used(ctx, "alice"); used != 0 {
		t.Errorf("alice uses %d once her file expired, want 0", used)
	}
	if _, err := q.Put(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: "alice", Name: "b"}, bytes.NewReader(make([]byte, 800))); err != nil {
		t.Fatalf("put once the first file expired: %v", err)
	}
}

// A reservation counts like a file; a file adopted against it draws on it
// first; what is left stays until released; a failed adoption gives the
// reservation back.
func TestQuotaReservations(t *testing.T) {
	ctx := context.Background()
	disk := newTestStore(t)
	q, err := New(disk, Config{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Reserve(ctx, "alice", "up1", 700); err != nil {
		t.Fatal(err)
	}
	if err := q.Reserve(ctx, "alice", "up2", 400); !errors.Is(err, ErrExceeded) {
		t.Fatalf("a second reservation over the quota: %v; want refused", err)
	}
	if _, err := q.Put(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: "alice", Name: "x"}, bytes.NewReader(make([]byte, 400))); !errors.Is(err, ErrExceeded) {
		t.Fatalf("a put over the reserved quota: %v; want refused", err)
	}
	p := filepath.Join(t.TempDir(), "part")
	os.WriteFile(p, make([]byte, 600), 0o600)
	// A failed adoption (no such file) keeps the reservation.
	if _, err := q.Adopt(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: "alice", Name: "x", Reservation: "up1"}, p+".missing"); err == nil {
		t.Fatal("adopting a missing file succeeded")
	}
	if used, _ := q.Used(ctx, "alice"); used != 700 {
		t.Fatalf("after a failed adoption alice uses %d, want the 700 reserved", used)
	}
	m, err := q.Adopt(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: "alice", Name: "x", Reservation: "up1"}, p)
	if err != nil {
		t.Fatalf("adopting against the reservation: %v", err)
	}
	if used, _ := q.Used(ctx, "alice"); used != 700 {
		t.Fatalf("after the adoption alice uses %d, want 600 of file and 100 still reserved", used)
	}
	q.Release("alice", "up1")
	if used, _ := q.Used(ctx, "alice"); used != 600 {
		t.Fatalf("after the release alice uses %d, want 600", used)
	}
	// Another process deleted the file: Forget frees its space here.
	if err := disk.Delete(ctx, m.Area, m.Owner, m.ID); err != nil {
		t.Fatal(err)
	}
	q.Forget(m.ID)
	if used, _ := q.Used(ctx, "alice"); used != 0 {
		t.Fatalf("after Forget alice uses %d, want 0", used)
	}
	q.Hold("alice", "found", 5000) // what is on disk counts, fitting or not
	if err := q.Reserve(ctx, "alice", "up3", 1); !errors.Is(err, ErrExceeded) {
		t.Fatalf("a reservation beside a hold over the quota: %v; want refused", err)
	}
}

// newTestStore is a disk store in a fresh folder.
func newTestStore(t testing.TB) *fileserve.DiskStore {
	t.Helper()
	d, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
