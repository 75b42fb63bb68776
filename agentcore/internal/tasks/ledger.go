// Package tasks is the one task engine of MCP and A2A: tasks, of either
// protocol, are records of the file store
// (fileserve.RecordStore): every replica sharing the store reads them, and
// they outlive a restart. What the two kinds share lives here, once:
//
//   - a lease: the replica running a task writes a lease record and renews
//     it every lease/4; a task whose lease ran out (its replica died, or
//     lost the store) is reported failed, with the reason, by whichever
//     replica is asked, never "working" forever;
//
//   - a cancel marker: a cancel on any replica writes it (and stops the
//     work at once when this replica runs it); the running replica polls
//     for it every CancelPoll, so the work stops within a second
//     wherever it runs;
//
//   - the owner's charge: task records count against the owner's quota
//     (AGENT_OWNER_QUOTA_BYTES) like files, and an owner has at most
//     maxLive tasks running at once.
//
//   - an end claim: who ends a task is decided once, by a record created
//     only where none exists (fileserve.RecordCreator): the replica that
//     finishes the task claims it before its outputs are kept, one that
//     finds the lease run out or is asked to cancel claims it before it
//     records so. The loser follows the winner, so that no output appears
//     for a task already ended and the record and the outputs agree.
//
// The protocol's own record (an a2a.Task, an MCP task) is written by its
// store (a2a_shared.go, mcp.go); lease and cancel marker are
// records of their own, written by one writer each, so that neither is lost
// to the other's rewrite of the task.
package tasks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/fault"
	"github.com/agentura/agentura/internal/lib/quota"
)

// Kinds of the records tasks share.
const (
	// LeaseKind records which replica runs a task, until when.
	LeaseKind = "task-leases"
	// CancelKind marks a task canceled by its caller.
	CancelKind = "task-cancels"
	// EndKind is the claim of a task's end (End), created once.
	EndKind = "task-ends"
)

// Timings of tasks.
const (
	// defaultLease is how long a running task's lease lasts unless
	// renewed: a task whose replica stopped is reported failed this long
	// after its last renewal, at most.
	defaultLease = 15 * time.Second
	// CancelPoll is how often a running task looks for a cancel made on
	// another replica.
	CancelPoll = 250 * time.Millisecond
	// defaultPerOwner is how many tasks one owner may have running at
	// once (MCP and A2A together).
	defaultPerOwner = 64
	// RecordCharge is the least a task record counts against the
	// quota: a small record costs the store as much as this.
	RecordCharge = 4 << 10
	// LeaseSweep is the age at which the sweeper removes a lease record
	// (one a running task renews is never this old).
	LeaseSweep = time.Hour
)

// Causes a running task's context ends with.
var (
	// ErrCanceled: the caller canceled the task, here or elsewhere.
	ErrCanceled = errors.New("canceled by the caller")
	// ErrLeaseLost: this replica could not renew the task's lease, so
	// other replicas report the task failed; the work stops.
	ErrLeaseLost = errors.New("the task's lease could not be renewed (the store did not answer)")
	// ErrShutdown: the agent shut down before the task ended.
	ErrShutdown = errors.New("the agent replica shut down before the task finished")
)

// TooManyError is the error of a task over the owner's limit.
type TooManyError struct{ limit int }

// Error says how many tasks the caller may run and what to do.
func (e TooManyError) Error() string {
	return fmt.Sprintf("you have %d tasks running, the most this agent runs for one caller (AGENT_TASKS_PER_OWNER); "+
		"wait for one to end, or cancel one, and try again", e.limit)
}

// taskLease is the JSON of a lease record.
type taskLease struct {
	Replica string    `json:"replica"`
	Until   time.Time `json:"until"`
}

// End is how a task ended, as the replica that claimed its end decided.
type End struct {
	Status  string    `json:"status"` // Completed, Failed or Cancelled
	Reason  string    `json:"reason,omitempty"`
	Replica string    `json:"replica"`
	At      time.Time `json:"at"`
}

// Ledger is what tasks of either protocol share: leases, cancel markers,
// the count of running tasks and the quota charge of their records. One per
// agent; none when the store keeps no records.
type Ledger struct {
	records fileserve.RecordStore
	quota   quota.Reserver // nil: no quota
	replica string         // this process, in the leases it writes
	lease   time.Duration
	maxLive int
	kinds   []string // the task record kinds charged to their owners
	log     *slog.Logger

	mu      sync.Mutex
	running map[string]*runningTask // tasks this replica runs, by id
	charged map[string]bool         // owners this replica holds task-record charges for (recharge)
	base    context.Context         // parent of every task run; ends at Close
	stopAll context.CancelCauseFunc
	wg      sync.WaitGroup
}

// runningTask is a task this replica runs.
type runningTask struct {
	owner  string
	cancel context.CancelCauseFunc
}

// NewLedger keeps the tasks' records in rs, charged to their owners in
// q (nil: no quota): leases of lease, at most maxLive tasks of one
// owner running, the records of kinds charged.
func NewLedger(rs fileserve.RecordStore, q quota.Reserver, lease time.Duration, maxLive int, log *slog.Logger, kinds ...string) *Ledger {
	base, stop := context.WithCancelCause(context.Background())
	return &Ledger{records: rs, quota: q, replica: fileserve.NewID(), lease: lease, maxLive: maxLive,
		kinds: kinds, log: log, running: map[string]*runningTask{}, charged: map[string]bool{}, base: base, stopAll: stop}
}

// leaseFor is the lease this replica writes now.
func (l *Ledger) leaseFor(now time.Time) []byte {
	b, _ := json.Marshal(taskLease{Replica: l.replica, Until: now.Add(l.lease)})
	return b
}

// Begin counts a new task of owner against the limit of running tasks and
// its record against the quota (extra bytes besides what the owner's task
// records hold already), then takes the lease: from here on the task is
// either renewed by this replica or reported failed. It fails with
// TooManyError or a *quota.Error.
func (l *Ledger) Begin(ctx context.Context, owner, id string, extra int64) error {
	if err := l.checkLive(ctx, owner); err != nil {
		return err
	}
	if err := l.Charge(ctx, owner, extra, true); err != nil {
		return err
	}
	if err := l.records.PutRecord(ctx, LeaseKind, owner, id, l.leaseFor(time.Now())); err != nil {
		return fault.Of("start the task", err)
	}
	return nil
}

// checkLive refuses a task beyond the owner's limit of running tasks: the
// leases alive now, on every replica.
func (l *Ledger) checkLive(ctx context.Context, owner string) error {
	if l.maxLive <= 0 {
		return nil
	}
	infos, err := l.records.Records(ctx, LeaseKind, owner)
	if err != nil {
		return fault.Of("count your running tasks", err)
	}
	// A lease record renewed within two leases is a task running; older
	// ones are of replicas that died (the sweeper removes them).
	live, cutoff := 0, time.Now().Add(-2*l.lease)
	for _, in := range infos {
		if in.Changed.After(cutoff) {
			live++
		}
	}
	if live >= l.maxLive {
		return TooManyError{l.maxLive}
	}
	return nil
}

// Charge counts the owner's task records, as the store lists them, plus
// extra bytes against the owner's quota, under one reservation. strict: a
// charge that does not fit fails with the *quota.Error (a new
// task); else it is held whether or not it fits (a result already made).
func (l *Ledger) Charge(ctx context.Context, owner string, extra int64, strict bool) error {
	if l.quota == nil {
		return nil
	}
	total := extra
	for _, kind := range l.kinds {
		infos, err := l.records.Records(ctx, kind, owner)
		if err != nil {
			return fault.Of("count your task records", err)
		}
		for _, in := range infos {
			total += max(in.Size, RecordCharge)
		}
	}
	l.mu.Lock()
	if total > 0 {
		l.charged[owner] = true
	} else {
		delete(l.charged, owner)
	}
	l.mu.Unlock()
	if !strict {
		l.quota.Hold(owner, taskQuotaKey, total)
		return nil
	}
	err := l.quota.Reserve(ctx, owner, taskQuotaKey, total)
	if qe, ok := errors.AsType[*quota.Error](err); ok {
		return &taskQuotaError{records: total, qe: qe}
	}
	return err
}

// Recharge counts again the task records of every owner this replica
// charges, after a sweep: records the sweeper (here or on another replica)
// removed stop counting at once, as removed files do, rather than at the
// owner's next task.
func (l *Ledger) Recharge(ctx context.Context) {
	l.mu.Lock()
	owners := slices.Collect(maps.Keys(l.charged))
	l.mu.Unlock()
	for _, owner := range owners {
		if err := l.Charge(ctx, owner, 0, false); err != nil {
			l.log.Debug("task records not counted again after a sweep", "owner", owner, "err", err)
		}
	}
}

// taskQuotaError is the error of a task whose record does not fit under
// its owner's quota.
type taskQuotaError struct {
	records int64 // what the owner's task records would hold
	qe      *quota.Error
}

func (e *taskQuotaError) Error() string {
	return fmt.Sprintf("%v: the records of your tasks (%s) and your files (%s) would pass your %s quota (%s); "+
		"an ended task is kept, and counted, until AGENT_OUTPUT_TTL after its last change: delete files you no longer need, "+
		"or try again once older tasks expired", quota.ErrExceeded, quota.FormatBytes(e.records), quota.FormatBytes(e.qe.Used),
		quota.FormatBytes(e.qe.Limit), e.qe.Setting)
}

// Unwrap gives the quota's error.
func (e *taskQuotaError) Unwrap() error { return e.qe }

// taskQuotaKey is the reservation of an owner's task records.
const taskQuotaKey = "task-records"

// Track registers task id of owner as running on this replica under
// parent, and returns the context the work runs in: it ends when the task
// is canceled (here or on another replica), when the lease cannot be
// renewed, when the service closes, or when parent ends. The lease is
// renewed until done is called; done returns once the watching stopped.
// After recording the outcome, the caller calls finish.
func (l *Ledger) Track(parent context.Context, owner, id string) (ctx context.Context, done func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.base.Err() != nil {
		return nil, nil, ErrShutdown
	}
	ctx, cancel := context.WithCancelCause(parent)
	unlink := context.AfterFunc(l.base, func() { cancel(context.Cause(l.base)) })
	l.running[id] = &runningTask{owner: owner, cancel: cancel}
	l.wg.Add(1)
	watched := make(chan struct{})
	stop := make(chan struct{})
	go func() { defer close(watched); l.watch(ctx, stop, owner, id, cancel) }()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			close(stop)
			<-watched
			unlink()
			l.mu.Lock()
			delete(l.running, id)
			l.mu.Unlock()
			l.wg.Done()
		})
	}, nil
}

// Finish removes the lease of a task whose outcome is recorded. A cancel
// marker stays until the sweeper removes it (AGENT_OUTPUT_TTL): a status
// update the running replica wrote over the cancel may still be in the
// task's record, and the marker is what says it was canceled.
func (l *Ledger) Finish(ctx context.Context, owner, id string) {
	ctx = context.WithoutCancel(ctx)
	if err := l.records.DeleteRecord(ctx, LeaseKind, owner, id); err != nil {
		l.log.Warn("task lease not removed; it runs out by itself", "task", id, "err", err)
	}
}

// watch renews the lease of a task running here and looks for its cancel
// marker until stop is closed or ctx ends; cancel ends the work.
//
// The work stops with ErrLeaseLost once three quarters of a lease passed
// since the last renewal the store took, a quarter before any other
// replica may find the lease run out: every read and write of the store
// here is bounded by that moment, so a store that hangs (a dead S3
// endpoint) cannot keep the work running past it.
func (l *Ledger) watch(ctx context.Context, stop <-chan struct{}, owner, id string, cancel context.CancelCauseFunc) {
	poll := time.NewTicker(CancelPoll)
	defer poll.Stop()
	renewEvery := l.lease / 4
	renewed := time.Now()
	for {
		cutoff := renewed.Add(l.lease - renewEvery)
		lost := time.NewTimer(time.Until(cutoff))
		select {
		case <-stop:
			lost.Stop()
			return
		case <-ctx.Done():
			lost.Stop()
			return
		case <-lost.C:
			// Others will soon see the lease out and report the task
			// failed: stop it rather than finish it unseen.
			cancel(ErrLeaseLost)
			return
		case now := <-poll.C:
			lost.Stop()
			bounded, done := context.WithDeadline(ctx, cutoff)
			_, err := l.records.GetRecord(bounded, CancelKind, owner, id)
			if err == nil {
				done()
				cancel(ErrCanceled)
				return
			}
			if now.Sub(renewed) >= renewEvery && l.records.PutRecord(bounded, LeaseKind, owner, id, l.leaseFor(now)) == nil {
				renewed = now
			}
			done()
			if !time.Now().Before(cutoff) {
				cancel(ErrLeaseLost)
				return
			}
		}
	}
}

// Claim claims the end of task id of owner as want, for this replica, and
// returns the end that holds: want when this claim is the first, else the
// one made before (by another replica, or by this one: ours then says so).
// A store that cannot create a record only where none is (no
// fileserve.RecordCreator) decides nothing: want holds, as before claims.
func (l *Ledger) Claim(ctx context.Context, owner, id string, want End) (holds End, ours bool, err error) {
	rc, ok := l.records.(fileserve.RecordCreator)
	if !ok {
		return want, true, nil
	}
	want.Replica, want.At = l.replica, time.Now()
	data, err := json.Marshal(want)
	if err != nil {
		return End{}, false, fault.Of("encode the task's end", err)
	}
	err = rc.CreateRecord(ctx, EndKind, owner, id, data)
	if err == nil {
		return want, true, nil
	}
	if !errors.Is(err, fileserve.ErrExists) {
		return End{}, false, fault.Of("record the task's end", err)
	}
	holds, found, err := l.Ended(ctx, owner, id)
	if err == nil && !found {
		err = fault.Of("read the task's end", fileserve.ErrNotFound)
	}
	return holds, err == nil && holds.Replica == l.replica, err
}

// Ended reads the claim of task id's end, if one was made.
func (l *Ledger) Ended(ctx context.Context, owner, id string) (End, bool, error) {
	var e End
	found, err := readRecord(ctx, l.records, EndKind, owner, id, &e, "read the task's end", "read the task's end")
	if err != nil || !found {
		return End{}, false, err
	}
	return e, true, nil
}

// Fence is the calls.WithFence of task id of owner running here: before a
// call's outputs are kept it claims the task completed, and refuses when
// another replica ended the task first (its lease was found run out, or
// it was canceled), or the claim cannot be made (the store failed).
func (l *Ledger) Fence(owner, id string) func(context.Context) error {
	return func(ctx context.Context) error {
		holds, ours, err := l.Claim(ctx, owner, id, End{Status: Completed})
		switch {
		case err != nil:
			return err
		case !ours:
			return &EndedError{End: holds}
		}
		return nil
	}
}

// EndedError is the error of work on a task another replica ended.
type EndedError struct{ End End }

// Error says how the task ended, and what to do.
func (e *EndedError) Error() string {
	why := cmp.Or(e.End.Reason, "it was "+e.End.Status)
	return fmt.Sprintf("the task ended %s before its outputs were kept (%s); call the tool again", e.End.Status, why)
}

// Settled reports whether the claim of a finishing task is old enough
// that its replica, which would have recorded the end by now, must have
// stopped: a lease after the claim.
func (l *Ledger) Settled(e End) bool { return time.Since(e.At) >= l.lease }

// Cancel marks task id of owner canceled for every replica and stops it
// at once if it runs here.
func (l *Ledger) Cancel(ctx context.Context, owner, id string) error {
	if err := l.records.PutRecord(ctx, CancelKind, owner, id, []byte("{}")); err != nil {
		return fault.Of("mark the task canceled", err)
	}
	l.mu.Lock()
	rt := l.running[id]
	l.mu.Unlock()
	if rt != nil && rt.owner == owner {
		rt.cancel(ErrCanceled)
	}
	return nil
}

// Canceled reports whether task id of owner carries a cancel marker.
func (l *Ledger) Canceled(ctx context.Context, owner, id string) (bool, error) {
	_, err := l.records.GetRecord(ctx, CancelKind, owner, id)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fileserve.ErrNotFound):
		return false, nil
	}
	return false, fault.Of("read the task's cancel marker", err)
}

// Lapsed reports whether a task of owner that has not ended, last written
// at updated, has lost its replica: its lease ran out, or it never had one
// and is older than a lease. When it has, reason says so for the caller.
func (l *Ledger) Lapsed(ctx context.Context, owner, id string, updated time.Time) (reason string, err error) {
	now := time.Now()
	data, err := l.records.GetRecord(ctx, LeaseKind, owner, id)
	var until time.Time
	switch {
	case errors.Is(err, fileserve.ErrNotFound):
		until = updated.Add(l.lease)
	case err != nil:
		return "", fault.Of("read the task's lease", err)
	default:
		var ls taskLease
		if json.Unmarshal(data, &ls) != nil {
			return "", fault.Of("read the task's lease", fmt.Errorf("task %s: its lease record is not JSON", id))
		}
		until = ls.Until
	}
	if now.Before(until) {
		return "", nil
	}
	return fmt.Sprintf("the agent replica running this task stopped before the task ended "+
		"(its lease ran out at %s); call the tool again", until.UTC().Format(time.RFC3339)), nil
}

// Close cancels the tasks running here with cause (they are recorded
// ended with it) and waits for them; no task starts after.
func (l *Ledger) Close(cause error) {
	l.mu.Lock()
	l.stopAll(cause)
	l.mu.Unlock()
	l.wg.Wait()
}

// Wait waits for the tasks running here to end, or ctx to, and reports
// whether they all ended.
func (l *Ledger) Wait(ctx context.Context) bool {
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// readRecord decodes owner's record id of kind into v; found is false when
// there is none. A failure to read or decode it is a fault of doing read
// or decode.
func readRecord(ctx context.Context, rs fileserve.RecordStore, kind, owner, id string, v any, read, decode string) (found bool, err error) {
	data, err := rs.GetRecord(ctx, kind, owner, id)
	switch {
	case errors.Is(err, fileserve.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fault.Of(read, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fault.Of(decode, err)
	}
	return true, nil
}

// makeRoom deletes owner's records of kind written longest ago until a new
// one fits under limit, those of ended tasks first: a task that still holds
// its lease goes only when nothing else can; deleting names the deletion in
// its error.
func makeRoom(ctx context.Context, rs fileserve.RecordStore, kind, owner string, limit int, deleting string) error {
	infos, err := rs.Records(ctx, kind, owner)
	if err != nil {
		return fault.Of("count your tasks", err)
	}
	if len(infos) < limit {
		return nil
	}
	leases, err := rs.Records(ctx, LeaseKind, owner)
	if err != nil {
		return fault.Of("count your running tasks", err)
	}
	running := map[string]bool{}
	for _, l := range leases {
		running[l.Name] = true
	}
	slices.SortFunc(infos, func(a, b fileserve.RecordInfo) int {
		switch {
		case running[a.Name] == running[b.Name]:
			return a.Changed.Compare(b.Changed)
		case running[a.Name]:
			return 1
		}
		return -1
	})
	for _, r := range infos[:len(infos)-limit+1] {
		if err := rs.DeleteRecord(ctx, kind, owner, r.Name); err != nil {
			return fault.Of(deleting, err)
		}
	}
	return nil
}
