package agentcore

import (
	"testing"
	"time"
)

// The rate limit lets a burst through, then one report per interval; it
// drops a report below an earlier one and always lets the end through, once.
func TestProgressRateLimit(t *testing.T) {
	var p progressState
	now := time.Now()
	sent := 0
	for i := range 1000 { // a tight loop
		if p.allow(float64(i), 1000, now) {
			sent++
		}
	}
	if sent != ProgressBurst {
		t.Errorf("a tight loop of 1000 reports sent %d, want the burst of %d", sent, ProgressBurst)
	}
	if !p.allow(1000, 1000, now) {
		t.Error("the report reaching the total was dropped")
	}
	if p.allow(1000, 1000, now.Add(time.Second)) {
		t.Error("the end was told twice")
	}
	var q progressState
	q.allow(5, 10, now)
	if q.allow(4, 10, now.Add(time.Second)) {
		t.Error("a report below an earlier one went out")
	}
	if !q.allow(6, 10, now.Add(time.Second)) {
		t.Error("a report after the interval was dropped")
	}
}
