package tasks

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/fault"
	"github.com/agentura/agentura/internal/lib/quota"
)

// MCP tasks (the MCP binding speaks them on each revision) are records of
// kind MCPKind, one per task and owner, written by the replica running the
// task and read by any; leases and cancel markers are the ledger's. A task keeps no arguments, only its tool's name, status and,
// once ended, its result: the text, the structured fields and the stored
// files' metadata, from which each read makes fresh signed URLs.

// MCPKind is the kind of the records of MCP tasks.
const MCPKind = "mcp-tasks"

// Statuses of an MCP task (both revisions).
const (
	Working   = "working"
	Completed = "completed"
	Failed    = "failed"
	Cancelled = "cancelled"
)

// Bounds of MCP tasks.
const (
	// mcpMaxTasksPerOwner bounds the task records one owner keeps: a new
	// task beyond it pushes out the owner's ended task written longest ago.
	mcpMaxTasksPerOwner = 1000
	// mcpMaxTaskBytes bounds a task's record, its result included: a
	// result larger than this is not kept (the task fails, saying so).
	mcpMaxTaskBytes = 16 << 20
	// taskProgressEvery is the least time between two writes of a running
	// task's progress to its record.
	taskProgressEvery = time.Second
)

// Task is the record of an MCP task.
type Task struct {
	ID       string        `json:"id"`
	Owner    string        `json:"owner"`
	Scope    string        `json:"scope,omitempty"` // the anonymous caller's scope (ownerscope.go), for tasks/list
	Handle   string        `json:"handle,omitempty"`
	Tool     string        `json:"tool"`
	Status   string        `json:"status"`
	Message  string        `json:"message,omitempty"`
	Progress *Progress     `json:"progress,omitempty"`
	Created  time.Time     `json:"created"`
	Updated  time.Time     `json:"updated"`
	TTL      time.Duration `json:"ttl"`
	Result   *KeptResult   `json:"result,omitempty"` // completed
	Error    *Error        `json:"error,omitempty"`  // failed
	// Trace is the trace context of the task's work span (trace.go): a
	// replica recording the task's end in its stead continues it, a read
	// links to it. Never sent to a client.
	Trace Trace `json:"trace,omitempty"`
}

// Progress is the last progress report of a running task.
type Progress struct {
	Done  float64 `json:"progress"`
	Total float64 `json:"total,omitempty"`
}

// KeptResult is a tool's result as a task keeps it: its files by their
// metadata (URLs are signed afresh on each read).
type KeptResult struct {
	IsError bool             `json:"isError,omitempty"`
	Text    string           `json:"text,omitempty"`
	Data    map[string]any   `json:"data,omitempty"`
	Files   []fileserve.Meta `json:"files,omitempty"`
	Images  []bool           `json:"images,omitempty"`
}

// Error is the JSON-RPC error a failed task ended with.
type Error struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// Ended reports whether the task is in a terminal status.
func (t *Task) Ended() bool { return t.Status != Working }

// expires is when the task is forgotten.
func (t *Task) expires() time.Time { return t.Created.Add(t.TTL) }

// Errors of reading a task, which the protocols answer with -32602.
var (
	ErrNotFound = errors.New("Task not found")
	ErrExpired  = errors.New("Task has expired")
)

// MCP are the MCP tasks of an agent.
type MCP struct {
	ledger *Ledger
	ttl    time.Duration // the longest a task lives: AGENT_OUTPUT_TTL, as its files
	run    calls.Runner
	// discard deletes outputs nobody will take; produced places the
	// outputs of a completed call in the caller's scope.
	discard  func(context.Context, []fileserve.Meta)
	produced func(ctx context.Context, scope string, stored []fileserve.Meta)
	log      *slog.Logger

	ended sync.Map // id → chan struct{}: the tasks running here, closed when recorded ended
}

// NewMCP keeps MCP tasks on ledger, each at most ttl, run by run; discard
// deletes outputs nobody will take, produced places a completed call's
// outputs in its caller's scope.
func NewMCP(ledger *Ledger, ttl time.Duration, run calls.Runner, discard func(context.Context, []fileserve.Meta),
	produced func(ctx context.Context, scope string, stored []fileserve.Meta), log *slog.Logger) *MCP {
	return &MCP{ledger: ledger, ttl: ttl, run: run, discard: discard, produced: produced, log: log}
}

// newTaskID is an unguessable task id: 128 random bits. Under
// AGENT_AUTH=none it is what reaches a task, like a signed URL a file.
func newTaskID() string { return rand.Text() }

// validTaskID reports whether id has the form newTaskID gives: 26 of the
// base32 alphabet. Any other id names no task, and is never looked up.
func validTaskID(id string) bool {
	if len(id) != 26 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// Get reads task id of owner. A task that has not ended is reported
// cancelled when a cancel marker says so, and failed when its replica's
// lease ran out (which is then recorded, a span in the task's trace). A
// request reading a task links its span to the task's with Link.
func (m *MCP) Get(ctx context.Context, owner, id string) (*Task, error) {
	t, err := m.Read(ctx, owner, id)
	if err != nil || t.Ended() {
		return t, err
	}
	if c, err := m.ledger.Canceled(ctx, owner, id); err != nil {
		return nil, err
	} else if c {
		t.Status, t.Message, t.Progress = Cancelled, "canceled by the caller", nil
		return t, nil
	}
	reason, err := m.ledger.Lapsed(ctx, owner, id, t.Updated)
	if err != nil || reason == "" {
		return t, err
	}
	holds, _, err := m.ledger.Claim(ctx, owner, id, End{Status: Failed, Reason: reason})
	if err != nil {
		return nil, err
	}
	switch {
	case holds.Status == Completed && !m.ledger.Settled(holds):
		return t, nil // its replica is recording the result
	case holds.Status == Cancelled:
		t.Status, t.Message = Cancelled, "canceled by the caller"
	default:
		if holds.Status == Completed {
			holds.Reason = "the agent replica running this task stopped after it finished, before it recorded the result; call the tool again"
		}
		t.Status, t.Message, t.Error = Failed, holds.Reason, &Error{Code: -32603, Message: holds.Reason}
	}
	t.Progress, t.Updated = nil, time.Now()
	if err := m.put(ctx, t); err != nil && !errors.Is(err, errTaskEnded) {
		m.log.Warn("lapsed task not recorded failed; it is reported failed on every read", "task", id, "err", err)
	} else if err == nil {
		recordTakeover(ctx, t.Trace, t.Tool, "mcp", t.Status, t.Message)
	}
	return m.Read(ctx, owner, id)
}

// Read reads the record of task id as it is.
func (m *MCP) Read(ctx context.Context, owner, id string) (*Task, error) {
	if !validTaskID(id) {
		return nil, ErrNotFound
	}
	var t Task
	found, err := readRecord(ctx, m.ledger.records, MCPKind, owner, id, &t, "read the task", "decode the task")
	if err != nil {
		return nil, err
	}
	if !found || t.Owner != owner || t.ID != id {
		return nil, ErrNotFound
	}
	if !time.Now().Before(t.expires()) {
		return nil, ErrExpired
	}
	return &t, nil
}

// errTaskEnded is the error of a write over a task that already ended:
// its terminal status stays.
var errTaskEnded = errors.New("the task already ended")

// put writes t's record, unless the record says the task ended already.
func (m *MCP) put(ctx context.Context, t *Task) error {
	if prev, err := m.Read(ctx, t.Owner, t.ID); err == nil && prev.Ended() {
		return errTaskEnded
	}
	t.Message = calls.Truncate(t.Message, calls.MaxStatus-len("…"))
	data, err := json.Marshal(t)
	if err != nil {
		return fault.Of("encode the task", err)
	}
	if len(data) > mcpMaxTaskBytes {
		return fmt.Errorf("the task's record would be %s, over the %s a task keeps", quota.FormatBytes(int64(len(data))), quota.FormatBytes(mcpMaxTaskBytes))
	}
	if err := m.ledger.records.PutRecord(ctx, MCPKind, t.Owner, t.ID, data); err != nil {
		return fault.Of("record the task", err)
	}
	return nil
}

// Call is a tools/call to run as a task.
type Call struct {
	Tool      string
	Owner     string
	Scope     string // the anonymous caller's scope, for its produced files
	Handle    string // the owner handle to return with the result
	RequestID string
	Args      json.RawMessage
	Staged    []fileserve.Meta // the request's inline files, removed when the task ends
	TTL       time.Duration    // asked for by the client; 0: the agent's
	// Progress forwards the call's progress to the request that made the
	// task (its progressToken stays valid for the task's life on
	// 2025-11-25); nil: none.
	Progress func(calls.Progress)
	// Changed is told each status the task reaches, for notifications;
	// nil: none.
	Changed func(*Task)
}

// Start makes the task of c durably (a tasks/get on any replica finds it
// once start returns) and runs it on this replica; ended is closed once
// its end is recorded.
func (m *MCP) Start(ctx context.Context, c Call) (_ *Task, ended <-chan struct{}, _ error) {
	ttl := m.ttl
	if c.TTL > 0 && c.TTL < ttl {
		ttl = max(c.TTL, time.Minute)
	}
	now := time.Now()
	// The work's span: under the request's, until the task ends.
	ctx, span := startWork(ctx, c.Tool, "mcp")
	t := &Task{ID: newTaskID(), Owner: c.Owner, Scope: c.Scope, Handle: c.Handle, Tool: c.Tool,
		Status: Working, Message: "running " + c.Tool, Created: now, Updated: now, TTL: ttl, Trace: traceOf(ctx)}
	started, why := false, ""
	defer func() {
		if !started {
			m.discard(ctx, c.Staged)
			if t.Status == Working {
				endWork(span, Failed, c.Tool+" was not started: "+why, false)
			} else {
				endTask(span, t)
			}
		}
	}()
	if err := makeRoom(ctx, m.ledger.records, MCPKind, c.Owner, mcpMaxTasksPerOwner, "forget an old task"); err != nil {
		why = err.Error()
		return nil, nil, err
	}
	if err := m.ledger.Begin(ctx, c.Owner, t.ID, RecordCharge); err != nil {
		why = err.Error()
		return nil, nil, err
	}
	if err := m.put(ctx, t); err != nil {
		m.ledger.Finish(ctx, c.Owner, t.ID)
		why = "the task could not be recorded"
		return nil, nil, fault.Of("record the task", err)
	}
	tctx, done, err := m.ledger.Track(context.WithoutCancel(ctx), c.Owner, t.ID)
	if err != nil {
		m.end(context.WithoutCancel(ctx), t, nil, nil, err, c)
		m.ledger.Finish(ctx, c.Owner, t.ID)
		return nil, nil, err
	}
	endedCh := make(chan struct{})
	m.ended.Store(t.ID, endedCh)
	first := *t
	started = true
	go func() {
		defer func() {
			m.ended.Delete(t.ID)
			close(endedCh)
		}()
		pw := &progressWriter{tasks: m, task: t, forward: c.Progress, changed: c.Changed}
		rctx := calls.WithFence(calls.WithHooks(calls.WithFileScope(tctx, c.Scope), &calls.Hooks{Progress: pw.report}), m.ledger.Fence(c.Owner, t.ID))
		res, err := m.run.Run(rctx, calls.Request{Tool: c.Tool, Owner: c.Owner, RequestID: c.RequestID, Args: c.Args})
		pw.stop()
		m.discard(tctx, c.Staged)
		m.end(tctx, t, res, err, context.Cause(tctx), c)
		done()
		m.ledger.Finish(tctx, c.Owner, t.ID)
		endTask(span, t)
	}()
	return &first, endedCh, nil
}

// Forget deletes the record of an ended task nobody was told of (its call
// was answered with the result).
func (m *MCP) Forget(ctx context.Context, t *Task) {
	if err := m.ledger.records.DeleteRecord(ctx, MCPKind, t.Owner, t.ID); err != nil {
		m.log.Debug("answered task not forgotten; it expires", "task", t.ID, "err", err)
	}
	_ = m.ledger.Charge(ctx, t.Owner, 0, false)
}

// EndedHere returns a channel closed once task id, running on this
// replica, has recorded its end; nil when it does not run here.
func (m *MCP) EndedHere(id string) <-chan struct{} {
	ch, _ := m.ended.Load(id)
	c, _ := ch.(chan struct{})
	return c
}

// end records how task t ended: the tool's result or error, or the cause
// that stopped it (canceled, lease lost, shutdown), as the claim of its
// end decides (Ledger.Claim): when another replica ended the task first,
// its end is recorded and the outputs go.
func (m *MCP) end(ctx context.Context, t *Task, res *calls.Result, toolErr, cause error, c Call) {
	ctx = context.WithoutCancel(ctx)
	t.Progress = nil
	if cause == nil {
		// A cancel that came as the tool returned still wins over its result.
		if canceled, _ := m.ledger.Canceled(ctx, t.Owner, t.ID); canceled {
			cause = ErrCanceled
		}
	}
	want := End{Status: Completed}
	switch {
	case errors.Is(cause, ErrCanceled):
		want = End{Status: Cancelled, Reason: "canceled by the caller"}
	case cause != nil:
		want = End{Status: Failed, Reason: fmt.Sprintf("%s stopped: %v; call the tool again", t.Tool, cause)}
	}
	holds, _, err := m.ledger.Claim(ctx, t.Owner, t.ID, want)
	if err != nil {
		// Nothing can be recorded: the lease runs out, and any replica
		// asked reports the task failed. Its outputs were never kept
		// (the fence claims before they are).
		m.log.Warn("task end not claimed; its lease runs out and it is reported failed", "task", t.ID, "err", err)
		return
	}
	if holds.Status != Completed && res != nil {
		m.discard(ctx, res.Stored)
	}
	switch {
	case holds.Status == Cancelled:
		t.Status, t.Message = Cancelled, "canceled by the caller"
	case holds.Status == Failed:
		t.Status, t.Message, t.Error = Failed, holds.Reason, &Error{Code: -32603, Message: holds.Reason}
	case toolErr != nil || res == nil:
		toolErr = cmp.Or(toolErr, cause)
		t.Status, t.Message = Completed, toolErr.Error()
		t.Result = &KeptResult{IsError: true, Text: toolErr.Error()}
	default:
		m.produced(ctx, c.Scope, res.Stored)
		t.Status, t.Message = Completed, res.Summary(t.Tool)
		t.Result = &KeptResult{Text: res.Text, Data: res.Data, Files: res.Stored, Images: res.Images}
	}
	t.Updated = time.Now()
	err = m.put(ctx, t)
	if err != nil && !errors.Is(err, errTaskEnded) && t.Result != nil {
		// Too large to keep, or the store failed: nobody will read the
		// outputs, so they go.
		m.discard(ctx, t.Result.Files)
		msg := fmt.Sprintf("%s finished but its result could not be kept: %v; call the tool again", t.Tool, err)
		t.Status, t.Message, t.Result, t.Error = Failed, msg, nil, &Error{Code: -32603, Message: msg}
		err = m.put(ctx, t)
	}
	if err != nil && !errors.Is(err, errTaskEnded) {
		m.log.Warn("task end not recorded; its lease runs out and it is reported failed", "task", t.ID, "err", err)
	}
	if err := m.ledger.Charge(ctx, t.Owner, 0, false); err != nil {
		m.log.Debug("task records not counted", "err", err)
	}
	if c.Changed != nil && err == nil {
		c.Changed(t)
	}
}

// Cancel cancels task id of owner, wherever it runs. It reports the task
// as it is afterwards.
func (m *MCP) Cancel(ctx context.Context, owner, id string) (*Task, error) {
	t, err := m.Get(ctx, owner, id)
	if err != nil || t.Ended() {
		return t, err
	}
	holds, _, err := m.ledger.Claim(ctx, owner, id, End{Status: Cancelled, Reason: "canceled by the caller"})
	if err != nil {
		return nil, err
	}
	if holds.Status != Cancelled {
		return m.Get(ctx, owner, id) // it ended otherwise, or its result is being recorded
	}
	if err := m.ledger.Cancel(ctx, owner, id); err != nil {
		return nil, err
	}
	t.Status, t.Message, t.Progress = Cancelled, "canceled by the caller", nil
	return t, nil
}

// List lists the tasks of owner (and, for an anonymous caller, of its
// scope), newest first.
func (m *MCP) List(ctx context.Context, owner, scope string) ([]*Task, error) {
	infos, err := m.ledger.records.Records(ctx, MCPKind, owner)
	if err != nil {
		return nil, fault.Of("list your tasks", err)
	}
	slices.SortFunc(infos, func(a, b fileserve.RecordInfo) int { return b.Changed.Compare(a.Changed) })
	var out []*Task
	for _, in := range infos {
		t, err := m.Get(ctx, owner, in.Name)
		if err != nil || (owner == calls.AnonymousOwner && t.Scope != scope) {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// progressWriter keeps a running task's record up to date with the
// tool's progress: at most one write every taskProgressEvery, the latest
// report winning.
type progressWriter struct {
	tasks   *MCP
	task    *Task
	forward func(calls.Progress)
	changed func(*Task)

	mu      sync.Mutex
	last    time.Time
	pending *calls.Progress
	timer   *time.Timer
	stopped bool
}

// report is the task's Call.Progress hook.
func (p *progressWriter) report(r calls.Progress) {
	if p.forward != nil {
		p.forward(r)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.pending = &r
	if wait := taskProgressEvery - time.Since(p.last); wait > 0 {
		if p.timer == nil {
			p.timer = time.AfterFunc(wait, p.flush)
		}
		return
	}
	go p.flush()
}

// flush writes the latest report.
func (p *progressWriter) flush() {
	p.mu.Lock()
	r := p.pending
	p.pending, p.timer = nil, nil
	if r == nil || p.stopped {
		p.mu.Unlock()
		return
	}
	p.last = time.Now()
	t := *p.task
	t.Progress = &Progress{Done: r.Done, Total: r.Total}
	if r.Message != "" {
		t.Message = r.Message
	}
	t.Updated = p.last
	// Written under the lock, so that stop waits for it: the end is
	// written after and never overwritten by a progress report.
	err := p.tasks.put(context.Background(), &t)
	p.mu.Unlock()
	if err == nil && p.changed != nil {
		p.changed(&t)
	}
}

// stop ends the writes; what the tool reported last is not written (its
// end is, next).
func (p *progressWriter) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.timer != nil {
		p.timer.Stop()
	}
}
