package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/fault"
	"github.com/agentura/agentura/internal/lib/mcptrace"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// A2AKind is the kind of record A2A tasks are kept as in the store.
const A2AKind = "a2a-tasks"

// a2aMaxSharedTasksPerOwner bounds the tasks one owner has in a shared task
// store: a new task beyond it pushes out the owner's task written longest
// ago (its files stay downloadable; only tasks/get forgets it).
const a2aMaxSharedTasksPerOwner = 1000

// a2aFollowEvery is how often a resubscription to a task running on another
// replica reads the task again.
const a2aFollowEvery = 500 * time.Millisecond

// Shared keeps A2A tasks as records of the file store
// (fileserve.RecordStore), one per task and owner: every replica sharing
// the store finds them, and they outlive a restart. Another owner's task is
// not found. The sweeper deletes a task AGENT_OUTPUT_TTL after its last
// update; each owner has at most maxPerOwner, and they count against the
// owner's quota with its MCP tasks (the ledger's charge), holding a bounded
// part of each message (boundHistory).
//
// What MCP tasks share with these is the ledger: a cancel is a
// marker record of its own (a replica running the task rewrites its record
// with every status update from what it read a moment before, so a cancel
// written into the record by another replica could be lost in between),
// read on every read of a task that has not ended; a task whose replica's
// lease ran out is failed on read, with the reason.
type Shared struct {
	records     fileserve.RecordStore
	ledger      *Ledger
	maxPerOwner int
	owner       func(context.Context) string // the owner of a request
}

// NewShared keeps A2A tasks as records of rs, on ledger; owner is the
// owner of a request's context. It is an a2asrv.TaskStore; Follow makes a
// request handler follow its tasks across replicas.
func NewShared(rs fileserve.RecordStore, ledger *Ledger, owner func(context.Context) string) *Shared {
	return &Shared{records: rs, ledger: ledger, maxPerOwner: a2aMaxSharedTasksPerOwner, owner: owner}
}

// keptRecord is the JSON of a task record.
type keptRecord struct {
	Owner   string    `json:"owner"`
	Task    *a2a.Task `json:"task"`
	Updated time.Time `json:"updated"`
	// Trace is the trace context the task was made in (trace.go): a
	// replica recording its end in its stead continues it, a read links
	// to it.
	Trace Trace `json:"trace,omitempty"`
}

// Save implements a2asrv.TaskStore. A task that already ended (canceled on
// another replica, say) is not overwritten with another state: the save
// fails, which ends the execution still running it here.
func (s *Shared) Save(ctx context.Context, task *a2a.Task) error {
	return s.save(ctx, s.owner(ctx), task)
}

func (s *Shared) save(ctx context.Context, owner string, task *a2a.Task) error {
	prev, tr, err := s.get(ctx, owner, task.ID)
	if tr == nil {
		tr = a2aTraceOf(ctx, task)
	}
	data, merr := json.Marshal(keptRecord{Owner: owner, Task: boundHistory(task), Updated: time.Now(), Trace: tr})
	if merr != nil {
		return fault.Of("encode the task", merr)
	}
	switch {
	case errors.Is(err, a2a.ErrTaskNotFound):
		if err := makeRoom(ctx, s.records, A2AKind, owner, s.maxPerOwner, "make room for a task"); err != nil {
			return err
		}
		if err := s.ledger.Charge(ctx, owner, int64(len(data)), true); err != nil {
			return fmt.Errorf("task %s not kept: %w", task.ID, err)
		}
	case err != nil:
		return err
	case prev.Status.State.Terminal() && prev.Status.State != task.Status.State:
		return fmt.Errorf("task %s already ended %s; its state stays: %w", task.ID, prev.Status.State, a2a.ErrTaskNotCancelable)
	}
	if task.Status.State.Terminal() {
		want := a2aEnd(task.Status.State)
		holds, ours, err := s.ledger.Claim(ctx, owner, string(task.ID), End{Status: want})
		if err != nil {
			return err
		}
		if !ours && holds.Status != want {
			return fmt.Errorf("task %s ended %s on another replica; its state stays: %w", task.ID, holds.Status, a2a.ErrTaskNotCancelable)
		}
	}
	if task.Status.State == a2a.TaskStateCanceled {
		if err := s.ledger.Cancel(ctx, owner, string(task.ID)); err != nil {
			return err
		}
	}
	if err := s.records.PutRecord(ctx, A2AKind, owner, string(task.ID), data); err != nil {
		return fault.Of("record the task", err)
	}
	if task.Status.State.Terminal() {
		// What an ended task holds (its artifacts) counts whether or not
		// it fits: the result is made.
		_ = s.ledger.Charge(ctx, owner, 0, false)
	}
	return nil
}

// Get implements a2asrv.TaskStore: a task of another owner is not found.
// The span of ctx (the request reading the task) is linked to the trace
// the task was made in.
func (s *Shared) Get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	t, tr, err := s.get(ctx, s.owner(ctx), id)
	if err == nil {
		Link(ctx, tr)
	}
	return t, err
}

// get reads task id of owner, and the trace it was made in.
func (s *Shared) get(ctx context.Context, owner string, id a2a.TaskID) (*a2a.Task, Trace, error) {
	var r keptRecord
	found, err := readRecord(ctx, s.records, A2AKind, owner, string(id), &r, "read the task", "decode the task")
	if err != nil {
		return nil, nil, err
	}
	if !found || r.Owner != owner || r.Task == nil {
		return nil, nil, fmt.Errorf("task %s: %w", id, a2a.ErrTaskNotFound)
	}
	if r.Task.Status.State.Terminal() {
		return r.Task, r.Trace, nil
	}
	switch canceled, err := s.ledger.Canceled(ctx, owner, string(id)); {
	case err != nil:
		return nil, nil, fault.Of("read the task", err)
	case canceled:
		// Canceled, though a status update of the replica running it
		// wrote over the record since.
		t := *r.Task
		t.Status = a2a.TaskStatus{State: a2a.TaskStateCanceled}
		return &t, r.Trace, nil
	}
	if r.Task.Status.State == a2a.TaskStateSubmitted || r.Task.Status.State == a2a.TaskStateWorking {
		reason, err := s.ledger.Lapsed(ctx, owner, string(id), r.Updated)
		if err != nil {
			return nil, nil, fault.Of("read the task", err)
		}
		if reason != "" {
			t, err := s.failLapsed(ctx, owner, r.Task, r.Trace, reason)
			return t, r.Trace, err
		}
	}
	return r.Task, r.Trace, nil
}

// a2aTraceOf is the trace context a new A2A task is made in: its message's
// metadata's (as the executor's span continues it), else ctx's (the
// request's traceparent header).
func a2aTraceOf(ctx context.Context, task *a2a.Task) Trace {
	if len(task.History) > 0 && task.History[0] != nil {
		md := task.History[0].Metadata
		if tp, ok := md["traceparent"].(string); ok {
			tr := Trace{"traceparent": tp}
			if ts, ok := md["tracestate"].(string); ok {
				tr["tracestate"] = ts
			}
			if tr.spanContext().IsValid() {
				return tr
			}
		}
	}
	return traceOf(ctx)
}

// a2aEnd is the status of an End a terminal A2A state is.
func a2aEnd(state a2a.TaskState) string {
	switch state {
	case a2a.TaskStateCompleted:
		return Completed
	case a2a.TaskStateCanceled:
		return Cancelled
	}
	return Failed
}

// failLapsed records and returns task failed because its replica's lease
// ran out, unless its end was claimed otherwise (Ledger.Claim): canceled,
// or completed by its replica, which is recording it.
func (s *Shared) failLapsed(ctx context.Context, owner string, task *a2a.Task, tr Trace, reason string) (*a2a.Task, error) {
	holds, _, err := s.ledger.Claim(ctx, owner, string(task.ID), End{Status: Failed, Reason: reason})
	if err != nil {
		return nil, err
	}
	state := a2a.TaskStateFailed
	switch {
	case holds.Status == Completed && !s.ledger.Settled(holds):
		return task, nil
	case holds.Status == Completed:
		reason = "the agent replica running this task stopped after it finished, before it recorded the result; send the message again"
	case holds.Status == Cancelled:
		state, reason = a2a.TaskStateCanceled, "canceled by the caller"
	case holds.Reason != "":
		reason = holds.Reason
	}
	t := *task
	now := time.Now()
	msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, &t, a2a.TextPart{Text: reason})
	t.Status = a2a.TaskStatus{State: state, Message: msg, Timestamp: &now}
	data, err := json.Marshal(keptRecord{Owner: owner, Task: boundHistory(&t), Updated: now, Trace: tr})
	if err == nil {
		err = s.records.PutRecord(ctx, A2AKind, owner, string(t.ID), data)
	}
	if err != nil {
		s.ledger.log.Warn("lapsed A2A task not recorded failed; it is reported failed on every read", "task", t.ID, "err", err)
	} else {
		recordTakeover(ctx, tr, "", "a2a", a2aEnd(state), reason)
	}
	return &t, nil
}

// Follow is h with resubscription across replicas to the tasks of s.
func Follow(h a2asrv.RequestHandler, s *Shared) a2asrv.RequestHandler {
	return &a2aFollower{RequestHandler: h, tasks: s, every: a2aFollowEvery}
}

// a2aFollower is the A2A request handler with resubscription across
// replicas: a2a-go resubscribes a caller only to a task this process
// executes; a task executed elsewhere is followed in the shared task store,
// its latest state sent whenever it changes, until it ends.
type a2aFollower struct {
	a2asrv.RequestHandler
	tasks *Shared
	every time.Duration
}

// OnGetTask implements a2asrv.RequestHandler: tasks/get is a server span
// of its own, continuing the request's trace, linked to the task's
// (Shared.Get), so that a poll on any replica is found from the task's
// trace.
func (h *a2aFollower) OnGetTask(ctx context.Context, query *a2a.TaskQueryParams) (*a2a.Task, error) {
	ctx, span := tracer().Start(ctx, "a2a tasks/get", trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	t, err := h.RequestHandler.OnGetTask(ctx, query)
	if err != nil && span.IsRecording() {
		span.SetStatus(codes.Error, mcptrace.Scrub(err.Error()))
	}
	return t, err
}

// OnResubscribeToTask implements a2asrv.RequestHandler.
func (h *a2aFollower) OnResubscribeToTask(ctx context.Context, params *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		local := false
		for ev, err := range h.RequestHandler.OnResubscribeToTask(ctx, params) {
			if !local && errors.Is(err, a2a.ErrTaskNotFound) {
				break // not executed here
			}
			local = true
			if !yield(ev, err) {
				return
			}
		}
		if local {
			return
		}
		var last []byte
		for {
			task, _, err := h.tasks.get(ctx, h.tasks.owner(ctx), params.ID)
			if err != nil {
				yield(nil, err)
				return
			}
			if b, _ := json.Marshal(task); string(b) != string(last) {
				last = b
				if !yield(task, nil) {
					return
				}
			}
			if task.Status.State.Terminal() {
				return
			}
			select {
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			case <-time.After(h.every):
			}
		}
	}
}
