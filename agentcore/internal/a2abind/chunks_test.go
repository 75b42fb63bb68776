package a2abind

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
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
