package agentcore

import (
	"bytes"
	"context"
	"encoding/base64"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"

	"github.com/agentura/agentura/agentcore/internal/tasks"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/testkit/a2atest"
)

// resubscribe follows task id with a2a-go's own client (its SSE reader takes
// lines up to 64 KiB) and returns every event; an error is reported (it
// may run in a goroutine of its own) and ends the events.
func resubscribe(t *testing.T, c *a2aclient.Client, id a2a.TaskID) []a2a.Event {
	return resubscribeSeen(t, c, id, nil)
}

// resubscribeSeen is resubscribe that closes seen, if not nil, at the first
// event that arrives.
func resubscribeSeen(t *testing.T, c *a2aclient.Client, id a2a.TaskID, seen chan struct{}) []a2a.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var evs []a2a.Event
	for ev, err := range c.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: id}) {
		if err != nil {
			t.Errorf("a2a-go's stream reader on tasks/resubscribe, after %d events: %v", len(evs), err)
			return evs
		}
		if len(evs) == 0 && seen != nil {
			close(seen)
		}
		evs = append(evs, ev)
	}
	return evs
}

// checkFiles checks that every artifact of want arrived with its URL part,
// whose download is the file, and that embedded bytes, where sent, are the
// file too; it returns how many were embedded.
func checkFiles(t *testing.T, arts []*a2a.Artifact, want map[string][]byte) (embedded int) {
	t.Helper()
	task := &a2a.Task{Artifacts: arts}
	for name, content := range want {
		uri, inline := fileParts(t, task, name)
		if uri == nil {
			t.Errorf("%s has no URL part", name)
			continue
		}
		if _, got := download(t, uri.URI); !bytes.Equal(got, content) {
			t.Errorf("%s downloads as %d bytes, want %d", name, len(got), len(content))
		}
		if inline != nil {
			embedded++
			if got, err := base64.StdEncoding.DecodeString(inline.Bytes); err != nil || !bytes.Equal(got, content) {
				t.Errorf("%s embedded as %d bytes (%v), want %d", name, len(got), err, len(content))
			}
		}
	}
	return embedded
}

// taskRecordID waits for the one A2A task record under dataDir and returns
// its task's ID: a blocking message/send tells its caller nothing before
// it ends.
func taskRecordID(t *testing.T, dataDir string) a2a.TaskID {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var id string
		filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.Contains(p, string(filepath.Separator)+filepath.Join(fileserve.RecordsDir, tasks.A2AKind)+string(filepath.Separator)) {
				id = d.Name()
			}
			return nil
		})
		if id != "" {
			return a2a.TaskID(id)
		}
		if time.Now().After(deadline) {
			t.Fatal("no A2A task record appeared")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestA2AResubscribeAfterABlockingSendFitsA2AGo: a blocking message/send
// embeds up to AGENT_EMBED_MAX_BYTES (here a 60 KiB file, 80 KiB of base64);
// a tasks/resubscribe to that task, while it runs and after it ended, is a
// stream, and a2a-go's own client reads it whole: the file comes by URL.
func TestA2AResubscribeAfterABlockingSendFitsA2AGo(t *testing.T) {
	dir := t.TempDir()
	svc, srv := serveTestService(t, func(c *Config) { c.DataDir, c.EmbedMaxBytes = dir, 64<<10 })
	big := bytes.Repeat([]byte("resubscribe"), 60<<10/11) // 60 KiB
	started, release := make(chan struct{}, 1), make(chan struct{})
	AddTool(svc, Tool{Name: "produce"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		started <- struct{}{}
		// Progress while it waits, so that a resubscription sees an
		// event while the task runs.
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for n := 1.0; ; n++ {
			select {
			case <-release:
				return call.FileResponse(ctx, OutputBytes("big.bin", big))
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-tick.C:
				call.Progress(n, 0, "waiting")
			}
		}
	})
	c := a2aClient(t, srv.URL, "")
	sent := make(chan *a2a.Task, 1)
	go func() {
		res, err := c.SendMessage(context.Background(), a2atest.Message("produce", nil))
		if err != nil {
			t.Errorf("blocking message/send: %v", err)
		}
		task, _ := res.(*a2a.Task)
		sent <- task
	}()
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the tool did not start")
	}
	id := taskRecordID(t, dir)
	following := make(chan []a2a.Event, 1)
	seen := make(chan struct{})
	go func() { following <- resubscribeSeen(t, c, id, seen) }()
	select { // resubscribed before the tool returns: a progress event came
	case <-seen:
	case <-time.After(time.Minute):
		t.Fatal("no event on the resubscription while the task ran")
	}
	close(release)
	var arts []*a2a.Artifact
	var followed []a2a.Event
	select {
	case followed = <-following:
	case <-time.After(2 * time.Minute):
		t.Fatal("the resubscription did not end")
	}
	for _, ev := range followed {
		if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			arts = append(arts, a.Artifact)
		}
	}
	if len(arts) == 0 {
		t.Fatal("resubscribed while the task ran, no artifact arrived")
	}
	checkFiles(t, arts, map[string][]byte{"big.bin": big})
	var task *a2a.Task
	select {
	case task = <-sent:
	case <-time.After(2 * time.Minute):
		t.Fatal("the blocking message/send did not end")
	}
	if task == nil {
		t.FailNow()
	}
	if checkFiles(t, task.Artifacts, map[string][]byte{"big.bin": big}) != 1 {
		t.Error("the blocking message/send no longer embeds a file under AGENT_EMBED_MAX_BYTES")
	}
	evs := resubscribe(t, c, id) // ended: the stored task, one event
	if len(evs) != 1 || t.Failed() {
		t.Fatalf("resubscribe to the ended task yielded %d events, want 1", len(evs))
	}
	checkFiles(t, evs[0].(*a2a.Task).Artifacts, map[string][]byte{"big.bin": big})
}

// TestA2AResubscribeToAStoredTaskFitsA2AGo: three 30 KiB files, each
// embedded in a streamed answer, are 120 KiB of base64 in the stored task,
// which a tasks/resubscribe to the ended task sends as one event; a2a-go's
// own client reads it: the files it cannot carry come by URL alone.
func TestA2AResubscribeToAStoredTaskFitsA2AGo(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	want := map[string][]byte{}
	var outs []Output
	for _, name := range []string{"a.bin", "b.bin", "c.bin"} {
		want[name] = bytes.Repeat([]byte(name[:1]), 30<<10)
		outs = append(outs, OutputBytes(name, want[name]))
	}
	AddTool(svc, Tool{Name: "produce"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		return call.FileResponse(ctx, outs...)
	})
	c := a2aClient(t, srv.URL, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var id a2a.TaskID
	var arts []*a2a.Artifact
	for ev, err := range c.SendStreamingMessage(ctx, a2atest.Message("produce", nil)) {
		if err != nil {
			t.Fatalf("message/stream: %v", err)
		}
		switch ev := ev.(type) {
		case *a2a.Task:
			id = ev.ID
		case *a2a.TaskArtifactUpdateEvent:
			id, arts = ev.TaskID, append(arts, ev.Artifact)
		}
	}
	if n := checkFiles(t, arts, want); n != 3 {
		t.Fatalf("message/stream embedded %d of the three 30 KiB files, want each (a chunk's size)", n)
	}
	evs := resubscribe(t, c, id)
	if len(evs) != 1 || t.Failed() {
		t.Fatalf("resubscribe to the ended task yielded %d events, want 1", len(evs))
	}
	task := evs[0].(*a2a.Task)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("the stored task is %s", task.Status.State)
	}
	if n := checkFiles(t, task.Artifacts, want); n == 0 || n == 3 {
		t.Errorf("the stored task's event embeds %d of the three files; want as many as fit, some", n)
	}
}
