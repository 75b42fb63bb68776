package storetest

import (
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
)

// testExpiryIndex checks a store's fileserve.ExpiryIndex, when it has one:
// Expired finds exactly the files created before its cutoff, Expire removes
// one (and a reader already reading it reads on), Tidy keeps live files and
// drops the index of what went, and nothing is left behind.
func testExpiryIndex(t *testing.T, h Harness) {
	st, idx := newWith[fileserve.ExpiryIndex](t, h, "has no expiry index")
	old := put(t, st, fileserve.Outputs, "o", "old.bin", Pattern(70_000))
	staged := put(t, st, fileserve.Staging, "o", "staged.bin", []byte("staged"))
	time.Sleep(2 * time.Millisecond)
	cutoff := time.Now()
	time.Sleep(2 * time.Millisecond)
	young := put(t, st, fileserve.Outputs, "p", "young.bin", []byte("young"))

	expired := func(area fileserve.Area, cutoff time.Time) []fileserve.Expired {
		t.Helper()
		var found []fileserve.Expired
		if err := idx.Expired(bg, area, cutoff, func(e fileserve.Expired) error { found = append(found, e); return nil }); err != nil {
			t.Fatal(err)
		}
		return found
	}
	found := expired(fileserve.Outputs, cutoff)
	if len(found) != 1 || found[0].ID != old.ID || found[0].Size != old.Size || !found[0].Created.Equal(old.Created) || found[0].Area != fileserve.Outputs {
		t.Fatalf("Expired(outputs, cutoff) = %+v; want only %s (size %d, created %v)", found, old.ID, old.Size, old.Created)
	}
	if n := len(expired(fileserve.Outputs, time.Now().Add(time.Hour))); n != 2 {
		t.Errorf("Expired(outputs, in an hour) found %d files, want 2", n)
	}
	if n := len(expired(fileserve.Staging, cutoff)); n != 1 {
		t.Errorf("Expired(staging, cutoff) found %d files, want 1 (areas are indexed apart)", n)
	}
	stop := errors.New("stop")
	if err := idx.Expired(bg, fileserve.Outputs, time.Now().Add(time.Hour), func(fileserve.Expired) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Expired stopped by fn returned %v", err)
	}
	if err := idx.Expired(bg, "elsewhere", cutoff, func(fileserve.Expired) error { return nil }); err == nil {
		t.Error("Expired of an unknown area succeeded")
	}

	// A download under way when its file expires reads on to its end.
	obj, _, err := st.Open(bg, fileserve.Outputs, "o", old.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	head := make([]byte, 1000)
	if _, err := io.ReadFull(obj, head); err != nil {
		t.Fatal(err)
	}
	if err := idx.Expire(bg, found[0]); err != nil {
		t.Fatalf("Expire: %v", err)
	}
	rest, err := io.ReadAll(obj)
	if err != nil || string(append(head, rest...)) != string(Pattern(70_000)) {
		t.Errorf("reading an expired file that was open: %d bytes, %v; want all 70000", len(head)+len(rest), err)
	}
	if _, err := st.Stat(bg, fileserve.Outputs, "o", old.ID); !errors.Is(err, fileserve.ErrNotFound) {
		t.Errorf("Stat after Expire = %v, want ErrNotFound", err)
	}
	if err := idx.Expire(bg, found[0]); err != nil && !errors.Is(err, fileserve.ErrNotFound) {
		t.Errorf("Expire of a file already gone: %v", err)
	}
	// The index may keep an expired file's entry until Tidy.
	if found := expired(fileserve.Outputs, time.Now().Add(time.Hour)); !slices.ContainsFunc(found, func(e fileserve.Expired) bool { return e.ID == young.ID }) ||
		slices.ContainsFunc(found, func(e fileserve.Expired) bool { return e.ID != young.ID && e.ID != old.ID }) {
		t.Errorf("after Expire, Expired(outputs) = %+v; want %s (and perhaps the expired %s)", found, young.ID, old.ID)
	}
	// Tidy keeps live files.
	for _, area := range []fileserve.Area{fileserve.Outputs, fileserve.Staging} {
		if err := idx.Tidy(bg, area, time.Now().Add(time.Hour)); err != nil {
			t.Fatalf("Tidy(%s): %v", area, err)
		}
	}
	if err := idx.Tidy(bg, "nowhere", time.Now()); err == nil {
		t.Error("Tidy of an unknown area succeeded")
	}
	if b := readAll(t, st, fileserve.Outputs, "p", young.ID); string(b) != "young" {
		t.Errorf("Tidy damaged a live file: %q", b)
	}
	if b := readAll(t, st, fileserve.Staging, "o", staged.ID); string(b) != "staged" {
		t.Errorf("Tidy damaged a live file: %q", b)
	}
	// A deleted file may still be named (the index may keep its entry);
	// expiring it finds it gone.
	if err := st.Delete(bg, fileserve.Outputs, "p", young.ID); err != nil {
		t.Fatal(err)
	}
	for _, e := range expired(fileserve.Outputs, time.Now().Add(time.Hour)) {
		if e.ID != young.ID {
			t.Errorf("after Delete, Expired(outputs) names %s", e.ID)
		}
		if err := idx.Expire(bg, e); err != nil && !errors.Is(err, fileserve.ErrNotFound) {
			t.Errorf("Expire of a deleted file: %v", err)
		}
	}
	if err := idx.Tidy(bg, fileserve.Outputs, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if found := expired(fileserve.Outputs, time.Now().Add(time.Hour)); len(found) != 0 {
		t.Errorf("after Tidy, Expired(outputs) = %+v; want nothing", found)
	}
	if n := h.Remains(t, st); n != 0 {
		t.Errorf("%d remains after Expire and Delete", n)
	}
}
