package tasks

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/agentcore/internal/calls"
)

// ownerKey carries a test's owner.
type ownerKey struct{}

// withOwner is a context carrying owner as the caller.
func withOwner(owner string) context.Context {
	return context.WithValue(context.Background(), ownerKey{}, owner)
}

// testOwner is the owner of ctx: withOwner's, else calls.AnonymousOwner.
func testOwner(ctx context.Context) string {
	if o, ok := ctx.Value(ownerKey{}).(string); ok {
		return o
	}
	return calls.AnonymousOwner
}

// Tasks keep their artifacts whole (and a bounded part of their messages):
// the store holds a bounded amount of them, giving up the finished tasks
// saved longest ago.
func TestA2ATaskStoreKeepsABoundedNumberOfBytes(t *testing.T) {
	s := NewMemory(time.Hour, 24*time.Hour, testOwner)
	s.maxBytes = 3 << 20
	ctx := context.Background()
	big := strings.Repeat("x", 1<<20)
	var ids []a2a.TaskID
	save := func(state a2a.TaskState) a2a.TaskID {
		t.Helper()
		art := &a2a.Artifact{ID: a2a.NewArtifactID(), Parts: a2a.ContentParts{a2a.TextPart{Text: big}}}
		id := a2a.NewTaskID()
		if err := s.Save(ctx, &a2a.Task{ID: id, ContextID: "c", Artifacts: []*a2a.Artifact{art}, Status: a2a.TaskStatus{State: state}}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		return id
	}
	running := save(a2a.TaskStateWorking)
	for range 10 {
		save(a2a.TaskStateCompleted)
	}
	s.mu.Lock()
	kept, n := s.bytes, 0
	for _, k := range s.tasks {
		n += len(k.data)
	}
	s.mu.Unlock()
	if kept > s.maxBytes || int64(n) != kept {
		t.Errorf("the store keeps %d bytes (counted %d), over the budget of %d", n, kept, s.maxBytes)
	}
	// The running task and the newest finished one stay.
	for _, id := range []a2a.TaskID{running, ids[len(ids)-1]} {
		if _, err := s.Get(ctx, id); err != nil {
			t.Errorf("task %s: %v", id, err)
		}
	}
	if _, err := s.Get(ctx, ids[1]); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("the oldest finished task is still kept: %v", err)
	}
}

func TestA2ATaskStoreForgetsByAgeAndCount(t *testing.T) {
	s := NewMemory(time.Hour, 24*time.Hour, testOwner)
	s.max = 3
	ctx := context.Background()
	save := func(id string, state a2a.TaskState) {
		t.Helper()
		if err := s.Save(ctx, &a2a.Task{ID: a2a.TaskID(id), ContextID: "c", Status: a2a.TaskStatus{State: state}}); err != nil {
			t.Fatal(err)
		}
	}
	save("running", a2a.TaskStateWorking)
	save("done-1", a2a.TaskStateCompleted)
	save("done-2", a2a.TaskStateFailed)
	save("new", a2a.TaskStateSubmitted) // over the bound: the oldest finished task goes
	if _, err := s.Get(ctx, "done-1"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("done-1 kept beyond the bound: %v", err)
	}
	for _, id := range []a2a.TaskID{"running", "done-2", "new"} {
		if _, err := s.Get(ctx, id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	// Finished tasks age out after keepDone; running ones stay.
	s.mu.Lock()
	for _, k := range s.tasks {
		k.updated = k.updated.Add(-2 * time.Hour)
	}
	s.sweepLocked(time.Now())
	s.mu.Unlock()
	if n := s.len(); n != 2 {
		t.Errorf("%d tasks after the sweep, want the 2 unfinished", n)
	}
}

// E11: one owner's flood of tasks evicts its own, never another's; a task
// given up says it was forgotten.
func TestA2ATaskLimitsArePerOwner(t *testing.T) {
	s := NewMemory(time.Hour, 24*time.Hour, testOwner)
	s.max, s.maxPerOwner = 40, 10
	alice, mallory := withOwner("alice"), withOwner("mallory")
	done := a2a.TaskStatus{State: a2a.TaskStateCompleted}
	if err := s.Save(alice, &a2a.Task{ID: "alice-1", ContextID: "c", Status: done}); err != nil {
		t.Fatal(err)
	}
	var first a2a.TaskID
	for i := range 200 {
		id := a2a.NewTaskID()
		if i == 0 {
			first = id
		}
		if err := s.Save(mallory, &a2a.Task{ID: id, ContextID: "c", Status: done}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Get(alice, "alice-1"); err != nil {
		t.Errorf("mallory's 200 tasks evicted alice's: %v", err)
	}
	_, err := s.Get(mallory, first)
	if !errors.Is(err, a2a.ErrTaskNotFound) || !strings.Contains(err.Error(), "forgotten") {
		t.Errorf("mallory's first task: %v, want a not-found error saying it was forgotten", err)
	}
	if _, err := s.Get(alice, first); err == nil || strings.Contains(err.Error(), "forgotten") {
		t.Errorf("another owner learns of mallory's forgotten task: %v", err)
	}
}
