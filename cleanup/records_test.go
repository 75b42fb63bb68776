package cleanup_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentura/agentura/cleanup"
	"github.com/agentura/agentura/fileserve"
)

// TestSweepExpiresRecords: records last written longer ago than their
// kind's TTL go; younger ones and other kinds stay.
func TestSweepExpiresRecords(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	for _, kind := range []string{"a2a-tasks", "other"} {
		if err := st.PutRecord(ctx, kind, "alice", "r1", []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	s := newSweeper(t, cleanup.Config{Store: st, Now: at(time.Now().Add(2 * time.Hour)),
		Records: []cleanup.RecordRule{{Kind: "a2a-tasks", TTL: time.Hour}}})
	if stats := sweep(t, s); stats.Records != 1 {
		t.Errorf("sweep deleted %d records, want 1", stats.Records)
	}
	if _, err := st.GetRecord(ctx, "a2a-tasks", "alice", "r1"); !errors.Is(err, fileserve.ErrNotFound) {
		t.Errorf("expired record: %v, want ErrNotFound", err)
	}
	if _, err := st.GetRecord(ctx, "other", "alice", "r1"); err != nil {
		t.Errorf("a record of a kind without a rule was swept: %v", err)
	}
	for _, bad := range [][]cleanup.RecordRule{{{Kind: ""}}, {{Kind: "a"}, {Kind: "a"}}, {{Kind: "a", TTL: -1}}} {
		if _, err := cleanup.New(cleanup.Config{Store: st, Rules: defaultRules, Records: bad}); err == nil {
			t.Errorf("New accepted record rules %+v", bad)
		}
	}
}
