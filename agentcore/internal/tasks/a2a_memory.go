package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
)

// Memory keeps A2A tasks in memory for tasks/get, each with the owner
// that created it: another caller asking for it is told there is no such
// task. A finished task is kept as long as its download URLs live (URLTTL),
// any task at most OutputTTL, and at most a2aMaxTasks at once, holding at
// most a2aMaxTaskBytes of JSON (a message's arguments stay in its task's
// history); the sweep runs as tasks are saved. Tasks are kept as JSON, so
// what a caller holds is always its own copy.
//
// The limits are per owner as well: an owner's new task beyond
// a2aMaxTasksPerOwner (or its bytes beyond a2aMaxTaskBytesPerOwner) pushes
// out that owner's own oldest finished task, and when the store as a whole
// is full the owner holding most gives way, so one caller cannot evict
// another's tasks. tasks/get of a task given up says it was forgotten.
type Memory struct {
	owner    func(context.Context) string // the owner of a request
	keepDone time.Duration
	keepAny  time.Duration
	max      int
	maxBytes int64 // budget of the kept JSON; finished tasks give way

	maxPerOwner      int   // tasks one owner may keep
	maxBytesPerOwner int64 // JSON one owner may keep

	mu        sync.Mutex
	tasks     map[a2a.TaskID]*keptTask
	bytes     int64 // JSON kept, all tasks
	lastSweep time.Time
	owners    map[string]*ownerUse // tasks and bytes kept per owner
	forgotten forgottenTasks
}

// ownerUse is what one owner has in the store.
type ownerUse struct {
	tasks int
	bytes int64
}

// forgottenTasks remembers the ids (and owners) of the last tasks given up,
// a bounded ring, so tasks/get can say "forgotten" rather than "not found".
type forgottenTasks struct {
	owner map[a2a.TaskID]string
	ring  []a2a.TaskID
	next  int
}

const a2aForgottenKept = 4096

func (f *forgottenTasks) add(id a2a.TaskID, owner string) {
	if f.owner == nil {
		f.owner = map[a2a.TaskID]string{}
		f.ring = make([]a2a.TaskID, a2aForgottenKept)
	}
	if old := f.ring[f.next]; old != "" {
		delete(f.owner, old)
	}
	f.ring[f.next], f.owner[id] = id, owner
	f.next = (f.next + 1) % len(f.ring)
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

// a2aMaxTasksPerOwner and a2aMaxTaskBytesPerOwner bound what one owner keeps.
const (
	a2aMaxTasksPerOwner     = a2aMaxTasks / 4
	a2aMaxTaskBytesPerOwner = a2aMaxTaskBytes / 4
)

// NewMemory keeps A2A tasks in memory: a finished one keepDone, any one at
// most keepAny; owner is the owner of a request's context.
func NewMemory(keepDone, keepAny time.Duration, owner func(context.Context) string) *Memory {
	return &Memory{keepDone: keepDone, keepAny: keepAny, owner: owner, max: a2aMaxTasks, maxBytes: a2aMaxTaskBytes,
		maxPerOwner: a2aMaxTasksPerOwner, maxBytesPerOwner: a2aMaxTaskBytesPerOwner,
		tasks: map[a2a.TaskID]*keptTask{}, owners: map[string]*ownerUse{}}
}

// Save implements a2asrv.TaskStore.
func (s *Memory) Save(ctx context.Context, task *a2a.Task) error {
	data, err := json.Marshal(boundHistory(task))
	if err != nil {
		return fmt.Errorf("encode task: %w", err)
	}
	owner := s.owner(ctx)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.tasks[task.ID]
	switch {
	case !ok:
		if len(s.tasks) >= s.max || s.use(owner).tasks >= s.maxPerOwner {
			s.sweepLocked(now)
		}
		if s.use(owner).tasks >= s.maxPerOwner {
			s.evictOldestDoneLocked(task.ID, owner)
		}
		if len(s.tasks) >= s.max {
			s.evictOldestDoneLocked(task.ID, s.largestOwnerLocked(false))
		}
		k = &keptTask{owner: owner, created: now}
		s.tasks[task.ID] = k
		s.use(owner).tasks++
	case k.owner != owner:
		return fmt.Errorf("task %s: %w", task.ID, a2a.ErrTaskNotFound)
	}
	delta := int64(len(data) - len(k.data))
	s.bytes += delta
	s.use(owner).bytes += delta
	k.data, k.done, k.updated = data, task.Status.State.Terminal(), now
	if now.Sub(s.lastSweep) >= a2aSweepEvery {
		s.sweepLocked(now)
	}
	for s.use(owner).bytes > s.maxBytesPerOwner {
		if !s.evictOldestDoneLocked(task.ID, owner) {
			break // only running tasks (and this one) are left
		}
	}
	for s.bytes > s.maxBytes {
		if !s.evictOldestDoneLocked(task.ID, s.largestOwnerLocked(true)) && !s.evictOldestDoneLocked(task.ID, "") {
			break
		}
	}
	return nil
}

// use returns owner's counters, creating them.
func (s *Memory) use(owner string) *ownerUse {
	u := s.owners[owner]
	if u == nil {
		u = &ownerUse{}
		s.owners[owner] = u
	}
	return u
}

// largestOwnerLocked names the owner keeping the most bytes (byBytes) or tasks.
func (s *Memory) largestOwnerLocked(byBytes bool) string {
	best, most := "", int64(-1)
	for o, u := range s.owners {
		n := int64(u.tasks)
		if byBytes {
			n = u.bytes
		}
		if n > most {
			best, most = o, n
		}
	}
	return best
}

// Get implements a2asrv.TaskStore: a task of another owner is not found.
func (s *Memory) Get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	owner := s.owner(ctx)
	s.mu.Lock()
	k, ok := s.tasks[id]
	var data []byte
	if ok && k.owner == owner {
		data = k.data
	}
	forgotten := !ok && s.forgotten.owner[id] == owner
	s.mu.Unlock()
	if forgotten {
		return nil, fmt.Errorf("task %s was forgotten: the agent keeps a bounded number of finished tasks per caller (and each at most as long as its download URLs live); its output files stay downloadable by the URLs the task gave: %w", id, a2a.ErrTaskNotFound)
	}
	if data == nil {
		return nil, fmt.Errorf("task %s: %w", id, a2a.ErrTaskNotFound)
	}
	var t a2a.Task
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("decode task %s: %w", id, err)
	}
	return &t, nil
}

func (s *Memory) sweepLocked(now time.Time) {
	s.lastSweep = now
	for id, k := range s.tasks {
		if (k.done && now.Sub(k.updated) > s.keepDone) || now.Sub(k.created) > s.keepAny {
			s.forgotten.add(id, k.owner)
			s.deleteLocked(id)
		}
	}
}

// evictOldestDoneLocked drops the finished task of owner ("": any owner)
// updated longest ago, other than keep (the task being saved), and reports
// whether there was one.
func (s *Memory) evictOldestDoneLocked(keep a2a.TaskID, owner string) bool {
	var oldest a2a.TaskID
	var at time.Time
	for id, k := range s.tasks {
		if k.done && id != keep && (owner == "" || k.owner == owner) && (oldest == "" || k.updated.Before(at)) {
			oldest, at = id, k.updated
		}
	}
	if oldest == "" {
		return false
	}
	s.forgotten.add(oldest, s.tasks[oldest].owner)
	s.deleteLocked(oldest)
	return true
}

func (s *Memory) deleteLocked(id a2a.TaskID) {
	if k, ok := s.tasks[id]; ok {
		s.bytes -= int64(len(k.data))
		delete(s.tasks, id)
		if u := s.owners[k.owner]; u != nil {
			if u.tasks--; u.tasks <= 0 {
				delete(s.owners, k.owner)
			} else {
				u.bytes -= int64(len(k.data))
			}
		}
	}
}

// len is the number of tasks kept.
func (s *Memory) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks)
}
