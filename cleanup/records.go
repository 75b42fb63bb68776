package cleanup

import (
	"context"
	"fmt"
	"time"

	"github.com/agentura/agentura/fileserve"
)

// RecordRule says how long records of one kind ([fileserve.RecordStore])
// are kept.
type RecordRule struct {
	// Kind is the kind of record, as the store names it ("a2a-tasks").
	Kind string
	// TTL is the time after a record's last write at which it is deleted.
	// 0 keeps the records forever.
	TTL time.Duration
}

// checkRecordRules copies rules after checking that no kind is empty or
// repeated and no TTL negative.
func checkRecordRules(rules []RecordRule) ([]RecordRule, error) {
	seen := map[string]bool{}
	for _, r := range rules {
		if r.Kind == "" || seen[r.Kind] {
			return nil, fmt.Errorf("cleanup: record rule kind %q is empty or named twice", r.Kind)
		}
		seen[r.Kind] = true
		if r.TTL < 0 {
			return nil, fmt.Errorf("cleanup: TTL of records %q is %v; it must be positive, or 0 to keep them forever", r.Kind, r.TTL)
		}
	}
	return append([]RecordRule(nil), rules...), nil
}

// sweepRecords deletes the records last written longer ago than their
// kind's TTL, when the store keeps records.
func (s *Sweeper) sweepRecords(ctx context.Context, now time.Time, st *Stats, fail func(error)) {
	rs, ok := fileserve.As[fileserve.RecordStore](s.store)
	if !ok {
		return
	}
	for _, r := range s.records {
		if r.TTL == 0 || ctx.Err() != nil {
			continue
		}
		n, err := rs.ExpireRecords(ctx, r.Kind, now.Add(-r.TTL))
		st.Records += n
		if err != nil && ctx.Err() == nil {
			fail(fmt.Errorf("expire %s records: %w", r.Kind, err))
		}
	}
}
