package agentcore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
)

// Tasks keep their artifacts whole (and a bounded part of their messages):
// the store holds a bounded amount of them, giving up the finished tasks
// saved longest ago.
func TestA2ATaskStoreKeepsABoundedNumberOfBytes(t *testing.T) {
	s := newA2ATaskStore(time.Hour, 24*time.Hour)
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
