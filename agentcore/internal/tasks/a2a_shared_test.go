package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/fileserve"
)

// newTestLedger is a ledger over a fresh disk store.
func newTestLedger(t *testing.T) (fileserve.RecordStore, *Ledger) {
	t.Helper()
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := NewLedger(disk, nil, defaultLease, defaultPerOwner, slog.New(slog.DiscardHandler), MCPKind, A2AKind)
	t.Cleanup(func() { l.Close(ErrShutdown) })
	return disk, l
}

// An owner's tasks in the shared store are bounded: a new task beyond the
// bound pushes out that owner's task written longest ago, and no other
// owner's.
func TestSharedTaskStoreBoundsTasksPerOwner(t *testing.T) {
	rs, ledger := newTestLedger(t)
	s := NewShared(rs, ledger, testOwner)
	s.maxPerOwner = 3
	ctx := context.Background()
	theirs := &a2a.Task{ID: a2a.NewTaskID(), ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
	if err := s.save(ctx, "bob", theirs); err != nil {
		t.Fatal(err)
	}
	var ids []a2a.TaskID
	for range 5 {
		task := &a2a.Task{ID: a2a.NewTaskID(), ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
		if err := s.Save(ctx, task); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
		time.Sleep(10 * time.Millisecond) // distinct modification times
	}
	if infos, _ := rs.Records(ctx, A2AKind, calls.AnonymousOwner); len(infos) != 3 {
		t.Errorf("the owner has %d tasks, want 3", len(infos))
	}
	for i, id := range ids {
		_, err := s.Get(ctx, id)
		if kept := i >= 2; kept != (err == nil) {
			t.Errorf("task %d of 5: found %v, want %v (%v)", i+1, err == nil, kept, err)
		}
	}
	if _, _, err := s.get(ctx, "bob", theirs.ID); err != nil {
		t.Errorf("another owner's task was pushed out: %v", err)
	}
	if _, err := s.Get(ctx, theirs.ID); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("another owner's task is visible: %v", err)
	}
	// An ended task keeps its state.
	ended := &a2a.Task{ID: ids[4], ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if err := s.Save(ctx, ended); err == nil {
		t.Error("a completed task was saved back to working")
	}
}

// A cancel made on one replica survives a status update that the replica
// running the task read before it and writes after it (the record is last
// writer wins): reads see the task canceled, and the running replica's
// next save is refused, which ends its execution.
func TestSharedTaskCancelSurvivesAStaleWrite(t *testing.T) {
	rs, ledger := newTestLedger(t)
	s := NewShared(rs, ledger, testOwner)
	s.maxPerOwner = 10
	ctx := context.Background()
	task := &a2a.Task{ID: a2a.NewTaskID(), ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if err := s.Save(ctx, task); err != nil {
		t.Fatal(err)
	}
	stale, _ := json.Marshal(keptRecord{Owner: calls.AnonymousOwner, Task: task}) // what the running replica read
	canceled := *task
	canceled.Status = a2a.TaskStatus{State: a2a.TaskStateCanceled}
	if err := s.Save(ctx, &canceled); err != nil { // the other replica's tasks/cancel
		t.Fatal(err)
	}
	// The running replica's status update, checked against what it read before the cancel.
	if err := s.records.PutRecord(ctx, A2AKind, calls.AnonymousOwner, string(task.ID), stale); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, task.ID); err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("after a stale write over the cancel: %v, %+v; want it canceled", err, got)
	}
	if err := s.Save(ctx, task); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Errorf("the running replica's next status update: %v, want it refused", err)
	}
}
