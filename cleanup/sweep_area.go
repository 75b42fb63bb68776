package cleanup

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentura/agentura/fileserve"
)

// victim is an expired file on its way out.
type victim struct {
	id      string
	size    int64
	created time.Time
	// remove deletes the file; an error wrapping fileserve.ErrNotFound
	// means someone else deleted it first.
	remove func(context.Context) error
}

// maxRounds bounds how often one sweep of an area moves its cutoff forward.
const maxRounds = 10

// sweepArea deletes the files of r.Area created before cutoff, then prunes
// the area. A store with an expiry index is asked for what expired; the
// others are walked whole.
func (s *Sweeper) sweepArea(ctx context.Context, r Rule, cutoff time.Time, st *Stats, fail func(error)) {
	ctx, span := startArea(ctx, r.Area)
	defer endArea(span, *st, st)
	var mu sync.Mutex // guards st and fail, which the deleting workers share
	failed := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		fail(err)
	}
	done := func(v victim) {
		mu.Lock()
		defer mu.Unlock()
		st.Files++
		st.Bytes += v.size
		st.Lag = max(st.Lag, s.now().Sub(v.created.Add(r.TTL)))
		if s.metrics != nil {
			s.metrics.files.WithLabelValues(string(r.Area)).Inc()
			s.metrics.bytes.WithLabelValues(string(r.Area)).Add(float64(v.size))
		}
		s.log.DebugContext(ctx, "cleanup: deleted expired file", "area", r.Area, "id", v.id, "size", v.size, "created", v.created)
	}
	errorsBefore := st.Errors
	idx, indexed := fileserve.As[fileserve.ExpiryIndex](s.store)
	full := s.fullPruneDue(r.Area, indexed)
	if indexed && full {
		// The full Prune first: it indexes the files of an older layout,
		// which then expire in this very sweep.
		if err := s.store.Prune(ctx, r.Area, cutoff); err != nil && ctx.Err() == nil {
			failed(fmt.Errorf("prune %s: %w", r.Area, err))
		}
	}
	if indexed {
		// A long sweep moves its cutoff forward: files that expired while
		// it ran go in the same sweep, not a scheduled period later.
		// Each round lists everything created before its cutoff, so once the
		// last round is done, everything before its cutoff was seen: that is
		// the cutoff Tidy gets.
		for round := 1; ; round++ {
			n := s.deleteAll(ctx, r.Area, done, failed, func(emit func(victim) error) error {
				return idx.Expired(ctx, r.Area, cutoff, func(e fileserve.Expired) error {
					mu.Lock()
					st.Examined++
					mu.Unlock()
					return emit(victim{id: e.ID, size: e.Size, created: e.Created, remove: func(ctx context.Context) error { return idx.Expire(ctx, e) }})
				})
			})
			next := s.now().Add(-r.TTL)
			if n == 0 || ctx.Err() != nil || !next.After(cutoff) || round == maxRounds {
				break
			}
			cutoff = next
		}
	} else {
		// Collect first, delete after: deleting while a store lists may make
		// some stores skip or repeat entries.
		var expired []victim
		err := s.store.Walk(ctx, r.Area, func(m fileserve.Meta) error {
			mu.Lock()
			st.Examined++
			mu.Unlock()
			if m.Created.Before(cutoff) {
				expired = append(expired, victim{id: m.ID, size: m.Size, created: m.Created, remove: func(ctx context.Context) error {
					return s.store.Delete(ctx, r.Area, m.Owner, m.ID)
				}})
			}
			return ctx.Err()
		})
		if err != nil && ctx.Err() == nil {
			// Delete what was listed before the walk failed all the same.
			failed(fmt.Errorf("walk %s: %w", r.Area, err))
		}
		s.deleteAll(ctx, r.Area, done, failed, func(emit func(victim) error) error {
			for _, v := range expired {
				if err := emit(v); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if ctx.Err() != nil {
		return
	}
	var err error
	switch {
	case !indexed:
		err = s.store.Prune(ctx, r.Area, cutoff)
	case st.Errors == errorsBefore:
		// Tidy also drops the index buckets before cutoff: only once every
		// file they name is gone.
		err = idx.Tidy(ctx, r.Area, cutoff)
	}
	if err != nil && ctx.Err() == nil {
		failed(fmt.Errorf("prune %s: %w", r.Area, err))
	}
}

// deleteAll removes the victims list emits, s.workers at a time, and
// returns how many it removed. A listing error is reported through failed.
func (s *Sweeper) deleteAll(ctx context.Context, area fileserve.Area, done func(victim), failed func(error), list func(emit func(victim) error) error) int {
	work := make(chan victim)
	var wg sync.WaitGroup
	var removed atomic.Int64
	for range s.workers {
		wg.Go(func() {
			for v := range work {
				if ctx.Err() != nil {
					continue // drain
				}
				err := v.remove(ctx)
				switch {
				case errors.Is(err, fileserve.ErrNotFound):
					// Gone already: another sweeper was first.
				case err != nil:
					if ctx.Err() == nil {
						failed(fmt.Errorf("delete %s file %s: %w", area, v.id, err))
					}
				default:
					removed.Add(1)
					done(v)
				}
			}
		})
	}
	err := list(func(v victim) error {
		select {
		case work <- v:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(work)
	wg.Wait()
	if err != nil && ctx.Err() == nil {
		failed(fmt.Errorf("list expired %s files: %w", area, err))
	}
	return int(removed.Load())
}

// fullPruneDue reports whether this sweep of area runs the store's full
// Prune: always on stores without an index; with one, on the area's first
// sweep and then every s.fullEvery (the sweeps in between only tidy).
func (s *Sweeper) fullPruneDue(area fileserve.Area, indexed bool) bool {
	now := time.Now()
	s.pruneMu.Lock()
	defer s.pruneMu.Unlock()
	last, seen := s.lastFull[area]
	if indexed && seen && now.Sub(last) < s.fullEvery {
		return false
	}
	s.lastFull[area] = now
	return true
}
