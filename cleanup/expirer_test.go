package cleanup_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/cleanup"
)

// An Expirer is swept with its own TTL; what it removed counts in Stats,
// and its failure is a sweep error.
func TestSweepRunsExpirers(t *testing.T) {
	now := time.Now()
	var cutoffs []time.Time
	fail := false
	exp := cleanup.Expirer{Name: "tus", TTL: time.Hour, Expire: func(_ context.Context, cutoff time.Time) (int, int64, error) {
		cutoffs = append(cutoffs, cutoff)
		if fail {
			return 0, 0, errors.New("disk gone")
		}
		return 2, 300, nil
	}}
	s := newSweeper(t, cleanup.Config{Store: newStore(t), Now: at(now), Expirers: []cleanup.Expirer{exp, {Name: "kept", Expire: exp.Expire}}})
	st := sweep(t, s)
	if st.Files != 2 || st.Bytes != 300 || len(cutoffs) != 1 || !cutoffs[0].Equal(now.Add(-time.Hour)) {
		t.Errorf("stats %+v, cutoffs %v", st, cutoffs)
	}
	fail = true
	if _, err := s.Sweep(context.Background()); err == nil || !strings.Contains(err.Error(), "expire tus: disk gone") {
		t.Errorf("failing expirer: %v", err)
	}
	if _, err := cleanup.New(cleanup.Config{Store: newStore(t), Rules: defaultRules, Expirers: []cleanup.Expirer{{Name: "x"}}}); err == nil {
		t.Error("an expirer without Expire was accepted")
	}
}
