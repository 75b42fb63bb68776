package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
)

// testRecords checks a store's fileserve.RecordStore, when it has one:
// records are replaced whole, kept per owner, seen by another store on the
// same backing, listed, deleted and expired.
func testRecords(t *testing.T, h Harness) {
	st := h.New(t)
	rs, ok := st.(fileserve.RecordStore)
	if !ok {
		t.Skipf("%T keeps no records", st)
	}
	other := h.Another(t, st).(fileserve.RecordStore)
	const kind = "a2a-tasks"
	if _, err := rs.GetRecord(bg, kind, "o", "t1"); !errors.Is(err, fileserve.ErrNotFound) {
		t.Fatalf("GetRecord of a missing record = %v, want ErrNotFound", err)
	}
	if err := rs.PutRecord(bg, kind, "o", "t0", []byte("0")); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.GetRecord(bg, kind, "o", ""); !errors.Is(err, fileserve.ErrNotFound) {
		t.Fatalf("GetRecord of the empty name, beside a record of the owner = %v, want ErrNotFound", err)
	}
	if err := rs.DeleteRecord(bg, kind, "o", "t0"); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{`{"v":1}`, `{"v":2,"longer":true}`} {
		if err := rs.PutRecord(bg, kind, "o", "t1", []byte(v)); err != nil {
			t.Fatal(err)
		}
		if b, err := other.GetRecord(bg, kind, "o", "t1"); err != nil || string(b) != v {
			t.Fatalf("another store reads %q, %v; want %q", b, err, v)
		}
	}
	if _, err := rs.GetRecord(bg, kind, "p", "t1"); !errors.Is(err, fileserve.ErrNotFound) {
		t.Errorf("another owner's GetRecord = %v, want ErrNotFound", err)
	}
	if err := rs.PutRecord(bg, kind, "o", "t2", []byte("2")); err != nil {
		t.Fatal(err)
	}
	infos, err := other.Records(bg, kind, "o")
	if err != nil || len(infos) != 2 {
		t.Fatalf("Records = %+v, %v; want t1 and t2", infos, err)
	}
	if infos, _ := rs.Records(bg, kind, "p"); len(infos) != 0 {
		t.Errorf("Records of an owner with none = %+v", infos)
	}
	for _, bad := range [][2]string{{"Bad Kind", "t"}, {kind, "../x"}, {kind, ".hidden"}, {kind, "a/b"}} {
		if err := rs.PutRecord(bg, bad[0], "o", bad[1], []byte("x")); err == nil {
			t.Errorf("PutRecord(%q, %q) succeeded", bad[0], bad[1])
		}
	}
	if err := rs.DeleteRecord(bg, kind, "o", "t2"); err != nil {
		t.Fatal(err)
	}
	if err := rs.DeleteRecord(bg, kind, "o", "t2"); err != nil {
		t.Errorf("deleting a missing record: %v", err)
	}
	if n, err := rs.ExpireRecords(bg, kind, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Errorf("ExpireRecords(an hour ago) = %d, %v; want nothing removed", n, err)
	}
	if n, err := other.ExpireRecords(bg, kind, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Errorf("ExpireRecords(in an hour) = %d, %v; want 1 removed", n, err)
	}
	if _, err := rs.GetRecord(bg, kind, "o", "t1"); !errors.Is(err, fileserve.ErrNotFound) {
		t.Errorf("an expired record is still there: %v", err)
	}
}
