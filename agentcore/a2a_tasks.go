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
// any task at most OutputTTL, and at most a2aMaxTasks at once; the sweep
// runs as tasks are saved. Tasks are
// kept as JSON, so what a caller holds is always its own copy.
type a2aTaskStore struct {
	keepDone time.Duration
	keepAny  time.Duration
	max      int

	mu        sync.Mutex
	tasks     map[a2a.TaskID]*keptTask
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

func newA2ATaskStore(keepDone, keepAny time.Duration) *a2aTaskStore {
	return &a2aTaskStore{keepDone: keepDone, keepAny: keepAny, max: a2aMaxTasks, tasks: map[a2a.TaskID]*keptTask{}}
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
			s.evictOldestDoneLocked()
		}
		k = &keptTask{owner: owner, created: now}
		s.tasks[task.ID] = k
	case k.owner != owner:
		return fmt.Errorf("task %s: %w", task.ID, a2a.ErrTaskNotFound)
	}
	k.data, k.done, k.updated = data, task.Status.State.Terminal(), now
	if now.Sub(s.lastSweep) >= a2aSweepEvery {
		s.sweepLocked(now)
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
			delete(s.tasks, id)
		}
	}
}

// evictOldestDoneLocked drops the finished task updated longest ago.
func (s *a2aTaskStore) evictOldestDoneLocked() {
	var oldest a2a.TaskID
	var at time.Time
	for id, k := range s.tasks {
		if k.done && (oldest == "" || k.updated.Before(at)) {
			oldest, at = id, k.updated
		}
	}
	if oldest != "" {
		delete(s.tasks, oldest)
	}
}

// len is the number of tasks kept.
func (s *a2aTaskStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks)
}
