package agentcore

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
)

// a2aTaskStore keeps A2A tasks in memory for tasks/get, each with the owner
// that created it: another caller asking for it is told there is no such
// task. A finished task is kept as long as its download URLs live (URLTTL),
// any task at most OutputTTL, and at most a2aMaxTasks at once, holding at
// most a2aMaxTaskBytes of JSON (a message's arguments stay in its task's
// history); the sweep runs as tasks are saved. Tasks are kept as JSON, so
// what a caller holds is always its own copy.
type a2aTaskStore struct {
	keepDone time.Duration
	keepAny  time.Duration
	max      int
	maxBytes int64 // budget of the kept JSON; finished tasks give way

	mu        sync.Mutex
	tasks     map[a2a.TaskID]*keptTask
	bytes     int64 // JSON kept, all tasks
	lastSweep time.Time
}

type keptTask struct {
	owner   string
	data    []byte
	done    bool
	created time.Time
	updated time.Time
}

// a2aSweepEvery is the least time between two sweeps of the task store.
const a2aSweepEvery = time.Minute

// a2aMaxTasks bounds the task store: a new task beyond it pushes out the
// finished task saved longest ago (its files stay downloadable; only
// tasks/get forgets it).
const a2aMaxTasks = 4096

// a2aMaxTaskBytes bounds the JSON the task store keeps: beyond it, the
// finished tasks saved longest ago are forgotten (tasks/get no longer finds
// them; their files stay downloadable). Without it, callers sending large
// arguments would have them kept for URLTTL, up to a2aMaxTasks times.
const a2aMaxTaskBytes = 256 << 20

func newA2ATaskStore(keepDone, keepAny time.Duration) *a2aTaskStore {
	return &a2aTaskStore{keepDone: keepDone, keepAny: keepAny, max: a2aMaxTasks, maxBytes: a2aMaxTaskBytes, tasks: map[a2a.TaskID]*keptTask{}}
}

// Save implements a2asrv.TaskStore.
func (s *a2aTaskStore) Save(ctx context.Context, task *a2a.Task) error {
	data, err := json.Marshal(task)
	if err != nil {
		return fmt.Errorf("encode task: %w", err)
	}
	owner := ownerFromContext(ctx)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.tasks[task.ID]
	switch {
	case !ok:
		if len(s.tasks) >= s.max {
			s.sweepLocked(now)
			s.evictOldestDoneLocked(task.ID)
		}
		k = &keptTask{owner: owner, created: now}
		s.tasks[task.ID] = k
	case k.owner != owner:
		return fmt.Errorf("task %s: %w", task.ID, a2a.ErrTaskNotFound)
	}
	s.bytes += int64(len(data) - len(k.data))
	k.data, k.done, k.updated = data, task.Status.State.Terminal(), now
	if now.Sub(s.lastSweep) >= a2aSweepEvery {
		s.sweepLocked(now)
	}
	for s.bytes > s.maxBytes {
		if !s.evictOldestDoneLocked(task.ID) {
			break // only running tasks (and this one) are left
		}
	}
	return nil
}

// Get implements a2asrv.TaskStore: a task of another owner is not found.
func (s *a2aTaskStore) Get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	owner := ownerFromContext(ctx)
	s.mu.Lock()
	k, ok := s.tasks[id]
	var data []byte
	if ok && k.owner == owner {
		data = k.data
	}
	s.mu.Unlock()
	if data == nil {
		return nil, fmt.Errorf("task %s: %w", id, a2a.ErrTaskNotFound)
	}
	var t a2a.Task
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("decode task %s: %w", id, err)
	}
	return &t, nil
}

func (s *a2aTaskStore) sweepLocked(now time.Time) {
	s.lastSweep = now
	for id, k := range s.tasks {
		if (k.done && now.Sub(k.updated) > s.keepDone) || now.Sub(k.created) > s.keepAny {
			s.deleteLocked(id)
		}
	}
}

// evictOldestDoneLocked drops the finished task updated longest ago, other
// than keep (the task being saved), and reports whether there was one.
func (s *a2aTaskStore) evictOldestDoneLocked(keep a2a.TaskID) bool {
	var oldest a2a.TaskID
	var at time.Time
	for id, k := range s.tasks {
		if k.done && id != keep && (oldest == "" || k.updated.Before(at)) {
			oldest, at = id, k.updated
		}
	}
	if oldest == "" {
		return false
	}
	s.deleteLocked(oldest)
	return true
}

func (s *a2aTaskStore) deleteLocked(id a2a.TaskID) {
	if k, ok := s.tasks[id]; ok {
		s.bytes -= int64(len(k.data))
		delete(s.tasks, id)
	}
}

// len is the number of tasks kept.
func (s *a2aTaskStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks)
}
