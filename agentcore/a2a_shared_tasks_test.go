package agentcore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentura/agentura/internal/testkit/a2atest"
	"github.com/agentura/agentura/internal/testkit/s3test"
)

// replicaSet starts Services on one shared store, as replicas behind a
// balancer are: each gets the same configuration edit and a "wait" tool
// that runs until released or canceled.
type replicaSet struct {
	t       *testing.T
	edit    func(*Config)
	release chan struct{}
	started chan string // the replica that started a wait
	stopped chan error  // how a wait ended
}

func newReplicaSet(t *testing.T, edit func(*Config)) *replicaSet {
	return &replicaSet{t: t, edit: edit, release: make(chan struct{}), started: make(chan string, 8), stopped: make(chan error, 8)}
}

// start serves one more replica called name and returns its base URL.
func (r *replicaSet) start(name string) string {
	svc, srv := serveTestService(r.t, func(c *Config) {
		r.edit(c)
		c.A2AStatusInterval = 100 * time.Millisecond
	})
	AddTool(svc, Tool{Name: "wait"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		r.started <- name
		select {
		case <-ctx.Done():
			r.stopped <- ctx.Err()
			return nil, ctx.Err()
		case <-r.release:
			r.stopped <- nil
			return TextResult("waited on " + name), nil
		}
	})
	return srv.URL
}

// testTasksOnAnyReplica: a task created on replica A is found by tasks/get
// on B, followed by resubscription on B, canceled on B (and the tool on A
// stops); a task completed on A is found on B and by a replica started
// later on the same store.
func testTasksOnAnyReplica(t *testing.T, edit func(*Config)) {
	r := newReplicaSet(t, edit)
	a, b := a2aClient(t, r.start("a"), ""), a2aClient(t, r.start("b"), "")
	ctx := context.Background()

	msg := a2atest.Message("wait", nil)
	msg.Config = &a2a.MessageSendConfig{Blocking: new(bool)}
	res, err := a.SendMessage(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	<-r.started
	for i := range 10 {
		task, err := b.GetTask(ctx, &a2a.TaskQueryParams{ID: id})
		if err != nil || task.Status.State.Terminal() {
			t.Fatalf("tasks/get on the other replica, try %d: %v, %+v", i+1, err, task)
		}
	}
	// Follow the task from B while B cancels it.
	var (
		wg     sync.WaitGroup
		states []a2a.TaskState
		ferr   error
	)
	wg.Go(func() {
		fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		for ev, err := range b.ResubscribeToTask(fctx, &a2a.TaskIDParams{ID: id}) {
			if err != nil {
				ferr = err
				return
			}
			if task, ok := ev.(*a2a.Task); ok {
				states = append(states, task.Status.State)
			}
		}
	})
	time.Sleep(300 * time.Millisecond) // resubscribed before the cancel
	canceled, err := b.CancelTask(ctx, &a2a.TaskIDParams{ID: id})
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("tasks/cancel on the other replica: %v, %+v", err, canceled)
	}
	select {
	case err := <-r.stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the tool on replica a ended with %v, want its context canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the tool on replica a did not see the cancel made on b")
	}
	wg.Wait()
	if ferr != nil || len(states) == 0 || states[len(states)-1] != a2a.TaskStateCanceled {
		t.Errorf("resubscription on the other replica saw %v (error %v); want it to end canceled", states, ferr)
	}
	time.Sleep(300 * time.Millisecond) // replica a has seen the cancel and ended
	if task, err := a.GetTask(ctx, &a2a.TaskQueryParams{ID: id}); err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Errorf("tasks/get on replica a after the cancel: %v, %+v", err, task)
	}

	// A completed task is found on B and on a replica started later.
	close(r.release)
	done := a2atest.Send(t, a, a2atest.Message("wait", nil))
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task on a ended %s", done.Status.State)
	}
	later := a2aClient(t, r.start("later"), "")
	for _, c := range []struct {
		name string
		get  func() (*a2a.Task, error)
	}{
		{"b", func() (*a2a.Task, error) { return b.GetTask(ctx, &a2a.TaskQueryParams{ID: done.ID}) }},
		{"later", func() (*a2a.Task, error) { return later.GetTask(ctx, &a2a.TaskQueryParams{ID: done.ID}) }},
	} {
		task, err := c.get()
		if err != nil || task.Status.State != a2a.TaskStateCompleted {
			t.Errorf("tasks/get of a completed task on replica %s: %v, %+v", c.name, err, task)
		}
	}
	// Resubscribing to a task that ended elsewhere yields it, ended.
	n := 0
	for ev, err := range later.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: done.ID}) {
		if err != nil {
			t.Fatalf("resubscribe to an ended task: %v", err)
		}
		if task, ok := ev.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateCompleted {
			t.Errorf("resubscribe to an ended task yielded %+v", ev)
		}
		n++
	}
	if n != 1 {
		t.Errorf("resubscribe to an ended task yielded %d events, want 1", n)
	}
}

func TestA2ATasksOnAnyReplicaOnDisk(t *testing.T) {
	dir := t.TempDir()
	testTasksOnAnyReplica(t, func(c *Config) { c.DataDir = dir })
}

func TestA2ATasksOnAnyReplicaOnS3(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	testTasksOnAnyReplica(t, func(c *Config) {
		c.StorageURL = srv.StorageURL(bucket)
		c.StorageEnv = srv.Env()
		c.SigningKeys = []string{"0123456789abcdef0123456789abcdef0123456789abcdef"}
	})
}
