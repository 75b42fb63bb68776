package storetest

import (
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
)

// testRecords checks a store's fileserve.RecordStore, when it has one:
// records are replaced whole, kept per owner, seen by another store on the
// same backing, listed, deleted and expired.
func testRecords(t *testing.T, h Harness) {
	st, rs := newWith[fileserve.RecordStore](t, h, "keeps no records")
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

// testCreateRecord checks a store's fileserve.RecordCreator, when it has
// one: a record is created once; a second create, from this store or
// another on the same backing, fails with ErrExists and leaves the first;
// of creates racing for one name exactly one succeeds.
func testCreateRecord(t *testing.T, h Harness) {
	st, rc := newWith[fileserve.RecordCreator](t, h, "cannot create a record only where none is")
	rs := st.(fileserve.RecordStore)
	other := h.Another(t, st).(fileserve.RecordCreator)
	const kind = "task-ends"
	if err := rc.CreateRecord(bg, kind, "o", "e1", []byte("first")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []fileserve.RecordCreator{rc, other} {
		if err := c.CreateRecord(bg, kind, "o", "e1", []byte("second")); !errors.Is(err, fileserve.ErrExists) {
			t.Errorf("a second CreateRecord = %v, want ErrExists", err)
		}
	}
	if b, err := rs.GetRecord(bg, kind, "o", "e1"); err != nil || string(b) != "first" {
		t.Errorf("after a refused create the record reads %q, %v; want the first", b, err)
	}
	if err := rc.CreateRecord(bg, kind, "p", "e1", []byte("p's")); err != nil {
		t.Errorf("another owner's record of the same name: %v", err)
	}
	const racers = 8
	var wg sync.WaitGroup
	results := make(chan error, racers)
	for i := range racers {
		c := rc
		if i%2 == 1 {
			c = other
		}
		wg.Go(func() { results <- c.CreateRecord(bg, kind, "o", "race", []byte(strconv.Itoa(i))) })
	}
	wg.Wait()
	close(results)
	won := 0
	for err := range results {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, fileserve.ErrExists):
			t.Errorf("a racing create failed otherwise: %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d racing creates succeeded, want exactly 1", won, racers)
	}
}
