package agentcore

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP tasks (tasks_wire.go speaks them on each revision) are records of
// kind mcpTaskKind, one per task and owner, written by the replica running
// the task and read by any; leases and cancel markers are the ledger's
// (tasks.go). A task keeps no arguments, only its tool's name, status and,
// once ended, its result: the text, the structured fields and the stored
// files' metadata, from which each read makes fresh signed URLs.

// mcpTaskKind is the kind of the records of MCP tasks.
const mcpTaskKind = "mcp-tasks"

// Statuses of an MCP task (both revisions).
const (
	taskWorking   = "working"
	taskCompleted = "completed"
	taskFailed    = "failed"
	taskCancelled = "cancelled"
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

// mcpTask is the record of an MCP task.
type mcpTask struct {
	ID       string        `json:"id"`
	Owner    string        `json:"owner"`
	Scope    string        `json:"scope,omitempty"` // the anonymous caller's scope (ownerscope.go), for tasks/list
	Handle   string        `json:"handle,omitempty"`
	Tool     string        `json:"tool"`
	Status   string        `json:"status"`
	Message  string        `json:"message,omitempty"`
	Progress *taskProgress `json:"progress,omitempty"`
	Created  time.Time     `json:"created"`
	Updated  time.Time     `json:"updated"`
	TTL      time.Duration `json:"ttl"`
	Result   *keptResult   `json:"result,omitempty"` // completed
	Error    *taskError    `json:"error,omitempty"`  // failed
}

// taskProgress is the last Call.Progress of a running task.
type taskProgress struct {
	Done  float64 `json:"progress"`
	Total float64 `json:"total,omitempty"`
}

// keptResult is a tool's result as a task keeps it: its files by their
// metadata (URLs are signed afresh on each read).
type keptResult struct {
	IsError bool             `json:"isError,omitempty"`
	Text    string           `json:"text,omitempty"`
	Data    map[string]any   `json:"data,omitempty"`
	Files   []fileserve.Meta `json:"files,omitempty"`
	Images  []bool           `json:"images,omitempty"`
}

// taskError is the JSON-RPC error a failed task ended with.
type taskError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// ended reports whether the task is in a terminal status.
func (t *mcpTask) ended() bool { return t.Status != taskWorking }

// expires is when the task is forgotten.
func (t *mcpTask) expires() time.Time { return t.Created.Add(t.TTL) }

// Errors of reading a task, which the protocols answer with -32602.
var (
	errTaskNotFound = errors.New("Task not found")
	errTaskExpired  = errors.New("Task has expired")
)

// mcpTasks are the MCP tasks of a Service.
type mcpTasks struct {
	svc    *Service
	ledger *taskLedger
	ttl    time.Duration // the longest a task lives: AGENT_OUTPUT_TTL, as its files

	mu    sync.Mutex
	ended map[string]chan struct{} // tasks running here, closed when recorded ended
}

// newTaskID is an unguessable task id: 128 random bits. Under
// AGENT_AUTH=none it is what reaches a task, like a signed URL a file.
func newTaskID() string { return rand.Text() }

// get reads task id of owner. A task that has not ended is reported
// cancelled when a cancel marker says so, and failed when its replica's
// lease ran out (which is then recorded).
func (m *mcpTasks) get(ctx context.Context, owner, id string) (*mcpTask, error) {
	t, err := m.read(ctx, owner, id)
	if err != nil || t.ended() {
		return t, err
	}
	if c, err := m.ledger.canceled(ctx, owner, id); err != nil {
		return nil, err
	} else if c {
		t.Status, t.Message, t.Progress = taskCancelled, "canceled by the caller", nil
		return t, nil
	}
	reason, err := m.ledger.lapsed(ctx, owner, id, t.Updated)
	if err != nil || reason == "" {
		return t, err
	}
	t.Status, t.Message, t.Progress, t.Updated = taskFailed, reason, nil, time.Now()
	t.Error = &taskError{Code: -32603, Message: reason}
	if err := m.put(ctx, t); err != nil && !errors.Is(err, errTaskEnded) {
		m.svc.log.Warn("lapsed task not recorded failed; it is reported failed on every read", "task", id, "err", err)
	}
	return m.read(ctx, owner, id)
}

// read reads the record of task id as it is.
func (m *mcpTasks) read(ctx context.Context, owner, id string) (*mcpTask, error) {
	data, err := m.ledger.records.GetRecord(ctx, mcpTaskKind, owner, id)
	if errors.Is(err, fileserve.ErrNotFound) {
		return nil, errTaskNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read task %s: %w", id, err)
	}
	var t mcpTask
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("decode task %s: %w", id, err)
	}
	if t.Owner != owner || t.ID != id {
		return nil, errTaskNotFound
	}
	if !time.Now().Before(t.expires()) {
		return nil, errTaskExpired
	}
	return &t, nil
}

// errTaskEnded is the error of a write over a task that already ended:
// its terminal status stays.
var errTaskEnded = errors.New("the task already ended")

// put writes t's record, unless the record says the task ended already.
func (m *mcpTasks) put(ctx context.Context, t *mcpTask) error {
	if prev, err := m.read(ctx, t.Owner, t.ID); err == nil && prev.ended() {
		return errTaskEnded
	}
	data, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encode task: %w", err)
	}
	if len(data) > mcpMaxTaskBytes {
		return fmt.Errorf("the task's record would be %s, over the %s a task keeps", fileserve.FormatBytes(int64(len(data))), fileserve.FormatBytes(mcpMaxTaskBytes))
	}
	return m.ledger.records.PutRecord(ctx, mcpTaskKind, t.Owner, t.ID, data)
}

// makeRoom deletes the owner's ended tasks written longest ago until a new
// one fits under mcpMaxTasksPerOwner.
func (m *mcpTasks) makeRoom(ctx context.Context, owner string) error {
	infos, err := m.ledger.records.Records(ctx, mcpTaskKind, owner)
	if err != nil || len(infos) < mcpMaxTasksPerOwner {
		return err
	}
	slices.SortFunc(infos, func(a, b fileserve.RecordInfo) int { return a.Changed.Compare(b.Changed) })
	for _, r := range infos[:len(infos)-mcpMaxTasksPerOwner+1] {
		if err := m.ledger.records.DeleteRecord(ctx, mcpTaskKind, owner, r.Name); err != nil {
			return err
		}
	}
	return nil
}

// taskCall is a tools/call to run as a task.
type taskCall struct {
	tool      string
	owner     string
	scope     string // the anonymous caller's scope, for its produced files
	handle    string // the owner handle to return with the result
	requestID string
	raw       json.RawMessage
	staged    []fileserve.Meta // the request's inline files, removed when the task ends
	ttl       time.Duration    // asked for by the client; 0: the agent's
	// progress forwards Call.Progress to the request that made the task
	// (its progressToken stays valid for the task's life on 2025-11-25);
	// nil: none.
	progress func(calls.Progress)
	// changed is told each status the task reaches, for notifications;
	// nil: none.
	changed func(*mcpTask)
}

// start makes the task of c durably (a tasks/get on any replica finds it
// once start returns) and runs it on this replica; ended is closed once
// its end is recorded.
func (m *mcpTasks) start(ctx context.Context, c taskCall) (_ *mcpTask, ended <-chan struct{}, _ error) {
	ttl := m.ttl
	if c.ttl > 0 && c.ttl < ttl {
		ttl = max(c.ttl, time.Minute)
	}
	now := time.Now()
	t := &mcpTask{ID: newTaskID(), Owner: c.owner, Scope: c.scope, Handle: c.handle, Tool: c.tool,
		Status: taskWorking, Message: "running " + c.tool, Created: now, Updated: now, TTL: ttl}
	started := false
	defer func() {
		if !started {
			m.svc.discardStored(ctx, c.staged)
		}
	}()
	if err := m.makeRoom(ctx, c.owner); err != nil {
		return nil, nil, fmt.Errorf("make room for a task: %w", err)
	}
	if err := m.ledger.begin(ctx, c.owner, t.ID, taskRecordCharge); err != nil {
		return nil, nil, err
	}
	if err := m.put(ctx, t); err != nil {
		m.ledger.finish(ctx, c.owner, t.ID)
		return nil, nil, fmt.Errorf("record the task: %w", err)
	}
	tctx, done, err := m.ledger.track(context.WithoutCancel(ctx), c.owner, t.ID)
	if err != nil {
		m.end(context.WithoutCancel(ctx), t, nil, nil, err, c)
		m.ledger.finish(ctx, c.owner, t.ID)
		return nil, nil, err
	}
	endedCh := make(chan struct{})
	m.mu.Lock()
	if m.ended == nil {
		m.ended = map[string]chan struct{}{}
	}
	m.ended[t.ID] = endedCh
	m.mu.Unlock()
	first := *t
	started = true
	go func() {
		defer func() {
			m.mu.Lock()
			delete(m.ended, t.ID)
			m.mu.Unlock()
			close(endedCh)
		}()
		pw := &progressWriter{tasks: m, task: t, forward: c.progress, changed: c.changed}
		res, err := m.svc.invoke(calls.WithHooks(calls.WithFileScope(tctx, c.scope), &calls.Hooks{Progress: pw.report}), c.tool, c.owner, c.requestID, c.raw)
		pw.stop()
		m.svc.discardStored(tctx, c.staged)
		m.end(tctx, t, res, err, context.Cause(tctx), c)
		done()
		m.ledger.finish(tctx, c.owner, t.ID)
	}()
	return &first, endedCh, nil
}

// forget deletes the record of an ended task nobody was told of (its call
// was answered with the result).
func (m *mcpTasks) forget(ctx context.Context, t *mcpTask) {
	if err := m.ledger.records.DeleteRecord(ctx, mcpTaskKind, t.Owner, t.ID); err != nil {
		m.svc.log.Debug("answered task not forgotten; it expires", "task", t.ID, "err", err)
	}
	_ = m.ledger.charge(ctx, t.Owner, 0, false)
}

// endedHere returns a channel closed once task id, running on this
// replica, has recorded its end; nil when it does not run here.
func (m *mcpTasks) endedHere(id string) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch, ok := m.ended[id]; ok {
		return ch
	}
	return nil
}

// end records how task t ended: the tool's result or error, or the cause
// that stopped it (canceled, lease lost, shutdown).
func (m *mcpTasks) end(ctx context.Context, t *mcpTask, res *Result, toolErr, cause error, c taskCall) {
	ctx = context.WithoutCancel(ctx)
	s := m.svc
	t.Progress = nil
	if cause == nil {
		// A cancel that came as the tool returned still wins over its result.
		if canceled, _ := m.ledger.canceled(ctx, t.Owner, t.ID); canceled {
			cause = errTaskCanceled
		}
	}
	switch {
	case errors.Is(cause, errTaskCanceled):
		if res != nil {
			s.discardStored(ctx, res.stored)
		}
		t.Status, t.Message = taskCancelled, "canceled by the caller"
	case cause != nil:
		if res != nil {
			s.discardStored(ctx, res.stored)
		}
		msg := fmt.Sprintf("%s stopped: %v; call the tool again", t.Tool, cause)
		t.Status, t.Message, t.Error = taskFailed, msg, &taskError{Code: -32603, Message: msg}
	case toolErr != nil:
		t.Status, t.Message = taskCompleted, toolErr.Error()
		t.Result = &keptResult{IsError: true, Text: toolErr.Error()}
	default:
		s.producedChanged(ctx, c.scope, res.stored)
		t.Status, t.Message = taskCompleted, completedText(t.Tool, res)
		t.Result = &keptResult{Text: res.Text, Data: res.Data, Files: res.stored, Images: res.images}
	}
	t.Updated = time.Now()
	err := m.put(ctx, t)
	if err != nil && !errors.Is(err, errTaskEnded) && t.Result != nil {
		// Too large to keep, or the store failed: nobody will read the
		// outputs, so they go.
		s.discardStored(ctx, t.Result.Files)
		msg := fmt.Sprintf("%s finished but its result could not be kept: %v; call the tool again", t.Tool, err)
		t.Status, t.Message, t.Result, t.Error = taskFailed, msg, nil, &taskError{Code: -32603, Message: msg}
		err = m.put(ctx, t)
	}
	if err != nil && !errors.Is(err, errTaskEnded) {
		s.log.Warn("task end not recorded; its lease runs out and it is reported failed", "task", t.ID, "err", err)
	}
	if err := m.ledger.charge(ctx, t.Owner, 0, false); err != nil {
		s.log.Debug("task records not counted", "err", err)
	}
	if c.changed != nil && err == nil {
		c.changed(t)
	}
}

// discardStored deletes outputs nobody will take.
func (s *Service) discardStored(ctx context.Context, metas []fileserve.Meta) {
	for _, m := range metas {
		_ = s.store.Delete(context.WithoutCancel(ctx), m.Area, m.Owner, m.ID)
	}
}

// cancel cancels task id of owner, wherever it runs. It reports the task
// as it is afterwards.
func (m *mcpTasks) cancel(ctx context.Context, owner, id string) (*mcpTask, error) {
	t, err := m.get(ctx, owner, id)
	if err != nil || t.ended() {
		return t, err
	}
	if err := m.ledger.cancel(ctx, owner, id); err != nil {
		return nil, err
	}
	t.Status, t.Message, t.Progress = taskCancelled, "canceled by the caller", nil
	return t, nil
}

// list lists the tasks of owner (and, for an anonymous caller, of its
// scope), newest first.
func (m *mcpTasks) list(ctx context.Context, owner, scope string) ([]*mcpTask, error) {
	infos, err := m.ledger.records.Records(ctx, mcpTaskKind, owner)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(infos, func(a, b fileserve.RecordInfo) int { return b.Changed.Compare(a.Changed) })
	var out []*mcpTask
	for _, in := range infos {
		t, err := m.get(ctx, owner, in.Name)
		if err != nil || (owner == AnonymousOwner && t.Scope != scope) {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// callResult is the CallToolResult of an ended task, its files' URLs
// signed now.
func (m *mcpTasks) callResult(ctx context.Context, t *mcpTask) (*mcp.CallToolResult, error) {
	k := t.Result
	if k == nil {
		return nil, fmt.Errorf("task %s has no result", t.ID)
	}
	var out *mcp.CallToolResult
	if k.IsError {
		out = &mcp.CallToolResult{}
		out.SetError(errors.New(k.Text))
	} else {
		res := &Result{Text: k.Text, Data: k.Data, stored: k.Files, images: k.Images}
		for _, f := range k.Files {
			pf, err := m.svc.producedFile(f)
			if err != nil {
				return nil, err
			}
			res.Files = append(res.Files, pf)
		}
		out = m.svc.renderMCP(ctx, res)
	}
	if t.Handle != "" {
		out.Meta = mcp.Meta{transfer.MetaOwner: t.Handle}
	}
	return out, nil
}

// progressWriter keeps a running task's record up to date with the
// tool's progress: at most one write every taskProgressEvery, the latest
// report winning.
type progressWriter struct {
	tasks   *mcpTasks
	task    *mcpTask
	forward func(calls.Progress)
	changed func(*mcpTask)

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
	t.Progress = &taskProgress{Done: r.Done, Total: r.Total}
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
