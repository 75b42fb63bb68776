package a2abind

import (
	"context"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
	"github.com/agentura/agentura/transfer"
)

// savedTasks is a task store that records what it was given.
type savedTasks struct {
	a2asrv.TaskStore
	saved []*a2a.Task
}

func (s *savedTasks) Save(_ context.Context, t *a2a.Task) error {
	s.saved = append(s.saved, t)
	return nil
}

// TestChunklessStore: a chunk's update stores nothing and leaves no chunk
// in a2a-go's task (which the store is handed); a task being streamed is
// stored without the artifact still streaming; the last chunk's artifact
// is stored with its URL alone. Each chunk frees a place in the window.
func TestChunklessStore(t *testing.T) {
	inner := &savedTasks{}
	windows := &chunkWindows{}
	window := windows.open("t1")
	store := chunklessStore{TaskStore: inner, windows: windows}
	chunk := func(off int) a2a.Part {
		return a2a.FilePart{File: a2a.FileBytes{Bytes: "AAAA"}, Metadata: map[string]any{transfer.MetaChunkOffset: off}}
	}
	result := &a2a.Artifact{ID: "r", Parts: a2a.ContentParts{a2a.TextPart{Text: "done"}}}
	streaming := &a2a.Artifact{ID: "s", Name: "blob.bin", Parts: a2a.ContentParts{chunk(0)}}
	task := &a2a.Task{ID: "t1", Artifacts: []*a2a.Artifact{result, streaming}}
	window <- struct{}{}
	window <- struct{}{}
	for i := range 2 {
		if err := store.Save(context.Background(), task); err != nil {
			t.Fatal(err)
		}
		if len(inner.saved) != 0 || len(streaming.Parts) != 0 {
			t.Fatalf("chunk %d: stored %d tasks, %d parts left in the task; want none", i, len(inner.saved), len(streaming.Parts))
		}
		streaming.Parts = append(streaming.Parts, chunk(3*(i+1)))
	}
	if len(window) != 0 {
		t.Errorf("%d places of the window still taken after both chunks were processed", len(window))
	}
	streaming.Parts = streaming.Parts[:0]
	task.Status = a2a.TaskStatus{State: a2a.TaskStateWorking}
	if err := store.Save(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	if got := inner.saved[0].Artifacts; len(got) != 1 || got[0].ID != "r" || len(task.Artifacts) != 2 {
		t.Errorf("stored artifacts %v (task keeps %d); want the result alone stored, both kept in a2a-go's task", got, len(task.Artifacts))
	}
	streaming.Parts = a2a.ContentParts{a2a.FilePart{File: a2a.FileURI{URI: "http://agent/files/x"}}}
	if err := store.Save(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	if got := inner.saved[1].Artifacts; len(got) != 2 || len(got[1].Parts) != 1 {
		t.Errorf("after the last chunk: stored %v; want the file's artifact with its URL", got)
	}
}

// writtenEvents is a queue that records what is written to it.
type writtenEvents struct {
	eventqueue.Queue
	events []*a2a.TaskArtifactUpdateEvent
}

func (q *writtenEvents) Write(_ context.Context, ev a2a.Event) error {
	q.events = append(q.events, ev.(*a2a.TaskArtifactUpdateEvent))
	return nil
}

// TestChunksSkippedWhileStalled: a caller that stops reading does not stall
// the tool: with no room in the window for chunkStall, the chunk is
// skipped, and the next ones at once while there is none; once there is,
// the next chunk opens the artifact at its own offset, and the last chunk
// appends to it. A stream none of whose chunks went out is not chunked.
func TestChunksSkippedWhileStalled(t *testing.T) {
	defer func(d time.Duration) { chunkStall = d }(chunkStall)
	chunkStall = 50 * time.Millisecond
	q := &writtenEvents{}
	window := make(chan struct{}, chunkWindow)
	for range chunkWindow {
		window <- struct{}{} // a caller that reads nothing
	}
	streams := &chunkStreams{ctx: context.Background(), q: q, rc: &a2asrv.RequestContext{TaskID: "t"}, window: window}
	s := streams.open("blob.bin")
	chunk := make([]byte, transfer.A2AChunkBytes)
	start := time.Now()
	for range 3 {
		if _, err := s.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if waited := time.Since(start); len(q.events) != 0 || waited > time.Second {
		t.Fatalf("%d chunks sent, %s waited with no room; want none sent, one wait of %s", len(q.events), waited, chunkStall)
	}
	<-window // the caller reads again
	if _, err := s.Write(chunk[:100]); err != nil {
		t.Fatal(err)
	}
	id, chunked, err := streams.finish("blob.bin", 3*transfer.A2AChunkBytes+100)
	if err != nil || !chunked || id != s.id {
		t.Fatalf("finish: %v %v %v; want the stream's artifact", id, chunked, err)
	}
	if len(q.events) != 1 || q.events[0].Append || q.events[0].Artifact.Parts[0].(a2a.FilePart).Metadata[transfer.MetaChunkOffset] != int64(3*transfer.A2AChunkBytes) {
		t.Fatalf("events %+v; want one chunk opening the artifact at offset %d", q.events, 3*transfer.A2AChunkBytes)
	}

	none := streams.open("none.bin")
	if _, err := none.Write(chunk); err != nil {
		t.Fatal(err)
	}
	if _, chunked, _ := streams.finish("none.bin", int64(len(chunk))); chunked {
		t.Error("a stream none of whose chunks went out counts as chunked; its file would have no artifact")
	}
}
