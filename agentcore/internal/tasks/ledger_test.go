package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/fileserve"
)

// replicas are two ledgers, as of two agent replicas, over one disk store.
func replicas(t *testing.T, lease time.Duration) (fileserve.RecordStore, *Ledger, *Ledger) {
	t.Helper()
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := NewLedger(disk, nil, lease, defaultPerOwner, slog.New(slog.DiscardHandler), MCPKind, A2AKind)
	b := NewLedger(disk, nil, lease, defaultPerOwner, slog.New(slog.DiscardHandler), MCPKind, A2AKind)
	t.Cleanup(func() { a.Close(ErrShutdown); b.Close(ErrShutdown) })
	return disk, a, b
}

// A task's end is claimed once: the replica that finds the lease run out
// claims it failed first, and the running replica's fence then refuses
// to keep outputs, saying how the task ended; each replica's later claim
// gets the first.
func TestClaimDecidesOnce(t *testing.T) {
	_, a, b := replicas(t, defaultLease)
	ctx := context.Background()
	const reason = "the agent replica running this task stopped before the task ended"
	holds, ours, err := b.Claim(ctx, "o", "T1", End{Status: Failed, Reason: reason})
	if err != nil || !ours || holds.Status != Failed {
		t.Fatalf("the first claim = %+v %v %v", holds, ours, err)
	}
	err = a.Fence("o", "T1")(ctx)
	var ended *EndedError
	if !errors.As(err, &ended) || ended.End.Status != Failed || !strings.Contains(err.Error(), reason) || !strings.Contains(err.Error(), "call the tool again") {
		t.Fatalf("the running replica's fence after another's claim = %v", err)
	}
	if holds, ours, _ := a.Claim(ctx, "o", "T1", End{Status: Completed}); ours || holds.Status != Failed || holds.Reason != reason {
		t.Errorf("a second claim = %+v ours %v; want the first", holds, ours)
	}
	if _, ours, _ := b.Claim(ctx, "o", "T1", End{Status: Failed}); !ours {
		t.Errorf("the winner's claim again is not its own")
	}
	// Another task, another owner: their own claims.
	if err := a.Fence("o", "T2")(ctx); err != nil {
		t.Errorf("the fence of a task nobody ended: %v", err)
	}
	if err := a.Fence("p", "T1")(ctx); err != nil {
		t.Errorf("the fence of another owner's task of the same id: %v", err)
	}
	if e, ok, err := b.Ended(ctx, "o", "T2"); err != nil || !ok || e.Status != Completed {
		t.Errorf("Ended of a task whose fence passed = %+v %v %v", e, ok, err)
	}
}

// hangingRecords is a record store that, once hung, answers no read or
// write until the caller gives up (a dead S3 endpoint).
type hangingRecords struct {
	fileserve.RecordStore
	hung atomic.Bool
}

func (h *hangingRecords) wait(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

func (h *hangingRecords) PutRecord(ctx context.Context, kind, owner, name string, data []byte) error {
	if h.hung.Load() {
		return h.wait(ctx)
	}
	return h.RecordStore.PutRecord(ctx, kind, owner, name, data)
}

func (h *hangingRecords) GetRecord(ctx context.Context, kind, owner, name string) ([]byte, error) {
	if h.hung.Load() {
		return nil, h.wait(ctx)
	}
	return h.RecordStore.GetRecord(ctx, kind, owner, name)
}

// A replica whose store hangs stops the task's work with ErrLeaseLost
// before its lease runs out, so before any other replica may report the
// task failed: the hanging renewal cannot hold the work past it.
func TestLeaseLostStopsTheWorkBeforeTheLeaseEnds(t *testing.T) {
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &hangingRecords{RecordStore: disk}
	const lease = 4 * time.Second
	l := NewLedger(st, nil, lease, defaultPerOwner, slog.New(slog.DiscardHandler), MCPKind)
	t.Cleanup(func() { l.Close(ErrShutdown) })
	ctx := context.Background()
	if err := l.Begin(ctx, "o", "T1", 0); err != nil {
		t.Fatal(err)
	}
	work, done, err := l.Track(ctx, "o", "T1")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	// Renewed at least once, then the store hangs.
	time.Sleep(lease/4 + 2*CancelPoll)
	data, err := disk.GetRecord(ctx, LeaseKind, "o", "T1")
	if err != nil {
		t.Fatal(err)
	}
	st.hung.Store(true)
	var ls taskLease
	json.Unmarshal(data, &ls)
	select {
	case <-work.Done():
	case <-time.After(2 * lease):
		t.Fatal("the work still runs two leases after the store hung")
	}
	stopped := time.Now()
	if cause := context.Cause(work); !errors.Is(cause, ErrLeaseLost) {
		t.Errorf("the work stopped with %v, want ErrLeaseLost", cause)
	}
	// The lease last written says until when others take the task as
	// running; the work must stop before then (the last renewal may be
	// later than the one read above, which only moves that time on).
	if !stopped.Before(ls.Until) {
		t.Errorf("the work stopped at %s, after its lease ran out at %s: another replica may have reported it failed while it ran",
			stopped.Format(time.StampMilli), ls.Until.Format(time.StampMilli))
	}
}

// blockingRunner runs every call until release is closed, ignoring its
// context (a tool that does not look at it), then passes the call's fence
// as FileResponse does before keeping outputs.
type blockingRunner struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (r *blockingRunner) Tool(name string) (calls.Tool, bool) { return calls.Tool{Name: name}, true }
func (r *blockingRunner) Tools() []calls.Tool                 { return nil }
func (r *blockingRunner) Check(string, json.RawMessage) error { return nil }
func (r *blockingRunner) Run(ctx context.Context, _ calls.Request) (*calls.Result, error) {
	r.once.Do(func() { close(r.started) })
	<-r.release
	if err := calls.Fence(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	return &calls.Result{Text: "slept", Stored: []fileserve.Meta{{ID: "out-1"}}}, nil
}

// An MCP task another replica ended (its lease found run out) while its
// tool ran on: the tool's outputs are not kept, and the record says failed
// with the other replica's reason, never completed.
func TestTaskEndedElsewhereKeepsNoOutput(t *testing.T) {
	_, a, b := replicas(t, defaultLease)
	run := &blockingRunner{started: make(chan struct{}), release: make(chan struct{})}
	var mu sync.Mutex
	var produced, discarded []fileserve.Meta
	m := NewMCP(a, time.Hour, run,
		func(_ context.Context, ms []fileserve.Meta) {
			mu.Lock()
			discarded = append(discarded, ms...)
			mu.Unlock()
		},
		func(_ context.Context, _ string, ms []fileserve.Meta) {
			mu.Lock()
			produced = append(produced, ms...)
			mu.Unlock()
		},
		slog.New(slog.DiscardHandler))
	ctx := context.Background()
	task, ended, err := m.Start(ctx, Call{Tool: "sleep", Owner: "o"})
	if err != nil {
		t.Fatal(err)
	}
	<-run.started
	const reason = "the agent replica running this task stopped before the task ended (its lease ran out)"
	if _, ours, err := b.Claim(ctx, "o", task.ID, End{Status: Failed, Reason: reason}); err != nil || !ours {
		t.Fatalf("the other replica's claim: %v %v", ours, err)
	}
	close(run.release)
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the task did not end")
	}
	got, err := m.Read(ctx, "o", task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != Failed || got.Message != reason || got.Result != nil {
		t.Errorf("the record after another replica ended the task: %s %q %+v", got.Status, got.Message, got.Result)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(produced) != 0 {
		t.Errorf("outputs were placed for a task ended elsewhere: %+v", produced)
	}
}

// Making room for a new task forgets the owner's ended task written longest
// ago, not a running one that has not written for longer (a long task
// without progress while the owner runs many short ones).
func TestMakeRoomKeepsRunningTasks(t *testing.T) {
	ctx := t.Context()
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"running", "ended-old", "ended-new"} {
		if err := disk.PutRecord(ctx, MCPKind, "owner", name, []byte("{}")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // distinct write times, oldest first
	}
	if err := disk.PutRecord(ctx, LeaseKind, "owner", "running", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := makeRoom(ctx, disk, MCPKind, "owner", 3, "forget an old task"); err != nil {
		t.Fatal(err)
	}
	infos, err := disk.Records(ctx, MCPKind, "owner")
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, in := range infos {
		kept = append(kept, in.Name)
	}
	slices.Sort(kept)
	if want := []string{"ended-new", "running"}; !slices.Equal(kept, want) {
		t.Fatalf("kept %v after making room, want %v (the running task's record stays)", kept, want)
	}
}
