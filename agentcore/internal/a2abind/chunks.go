package a2abind

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
	"github.com/agentura/agentura/agentcore/internal/tasks"
	"github.com/agentura/agentura/transfer"
)

// Produced files in chunks (docs/a2a.md, "Produced files in chunks"): a
// caller that asks for them (message metadata transfer.A2AKeyChunks) gets
// each output the program stores through itself as artifact updates while
// the store reads it: file parts of at most transfer.A2AChunkBytes whose
// metadata says at which offset they start, the first one opening the
// artifact, the others appended; after the tool returned, the last chunk
// (append, lastChunk) carries the file's signed URL, size and sha256.
//
// a2a-go's task manager appends every artifact update's parts to the task it
// keeps in memory and saves it each time: 200 MiB of chunks would pile up
// there and in the task store. chunklessStore keeps them out: it drops the
// chunk parts from the task (in place, so from a2a-go's copy too) and saves
// nothing for a chunk's update. And the producer waits for its chunks to be
// processed, a window of chunkWindow at a time, so that a2a-go's event pipe
// (1024 events) does not fill with chunks a slow caller has not read yet.

// chunkWindow is how many chunks of a task may be written and not yet
// processed.
const chunkWindow = 8

// chunkStall is how long a chunk waits for room in the window. A caller
// that stops reading (its connection open) must not stall the tool: past
// that, chunks are skipped while there is no room (a chunk is a courtesy;
// the caller fetches the bytes it did not get from the file's URL).
var chunkStall = 30 * time.Second

// wantsChunks reports whether msg asks for produced files in chunks.
func wantsChunks(msg *a2a.Message) bool {
	if msg == nil {
		return false
	}
	on, _ := msg.Metadata[transfer.A2AKeyChunks].(bool)
	return on
}

// chunkWindows are the windows of the tasks streaming chunks here, by task.
type chunkWindows struct {
	m sync.Map // a2a.TaskID → chan struct{}
}

// open makes the window of task; close removes it.
func (w *chunkWindows) open(task a2a.TaskID) chan struct{} {
	ch := make(chan struct{}, chunkWindow)
	w.m.Store(task, ch)
	return ch
}

func (w *chunkWindows) close(task a2a.TaskID) { w.m.Delete(task) }

// release frees n places of task's window: n of its chunks were processed.
func (w *chunkWindows) release(task a2a.TaskID, n int) {
	v, _ := w.m.Load(task)
	ch, _ := v.(chan struct{})
	for range n {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// chunklessStore is a task store that keeps no chunk: see above.
type chunklessStore struct {
	a2asrv.TaskStore
	windows *chunkWindows
}

// Save drops the chunk parts from task's artifacts; a save that had any is
// a chunk's update and stores nothing. Otherwise it stores task without the
// artifacts that are still only being streamed (no part left).
func (s chunklessStore) Save(ctx context.Context, task *a2a.Task) error {
	if n := dropChunks(task); n > 0 {
		s.windows.release(task.ID, n)
		return nil
	}
	streaming := func(a *a2a.Artifact) bool { return len(a.Parts) == 0 }
	kept := task
	if slices.ContainsFunc(task.Artifacts, streaming) {
		c := *task
		c.Artifacts = slices.DeleteFunc(slices.Clone(task.Artifacts), streaming)
		kept = &c
	}
	return s.TaskStore.Save(ctx, kept)
}

// dropChunks removes the chunk parts from task's artifacts and returns how
// many it removed.
func dropChunks(task *a2a.Task) int {
	n := 0
	for _, a := range task.Artifacts {
		before := len(a.Parts)
		a.Parts = slices.DeleteFunc(a.Parts, isChunk) // in place, the tail cleared
		n += before - len(a.Parts)
	}
	return n
}

func isChunk(p a2a.Part) bool {
	fp, _ := tasks.PartOf[a2a.FilePart](p)
	_, ok := fp.Metadata[transfer.MetaChunkOffset]
	return ok
}

// chunkStreams are the outputs of one call sent in chunks.
type chunkStreams struct {
	ctx    context.Context
	q      eventqueue.Queue
	rc     *a2asrv.RequestContext
	window chan struct{}

	mu      sync.Mutex
	streams []*chunkStream
}

// open is calls.Hooks.Output: the writer that sends the output name.
func (c *chunkStreams) open(name string) *chunkStream {
	s := &chunkStream{of: c, id: a2a.NewArtifactID(), name: name}
	c.mu.Lock()
	c.streams = append(c.streams, s)
	c.mu.Unlock()
	return s
}

// finish sends what is left of the output name of size bytes and returns
// the ID of its artifact, for the last chunk; false when it was not sent in
// chunks (moved in from WorkDir, empty, or stored under another name).
func (c *chunkStreams) finish(name string, size int64) (a2a.ArtifactID, bool, error) {
	if c == nil {
		return "", false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.streams {
		if s.done || s.name != name || s.sent+int64(len(s.buf)) != size || size == 0 {
			continue
		}
		s.done = true
		if err := s.flush(); err != nil {
			return "", false, err
		}
		return s.id, s.opened, nil
	}
	return "", false, nil
}

// room takes a place in the window: waiting up to chunkStall, or not at all
// while stalled; false when there is none (or the call ended).
func (s *chunkStream) room() bool {
	c := s.of
	if s.stalled {
		select {
		case c.window <- struct{}{}:
			s.stalled = false
			return true
		default:
			return false
		}
	}
	timer := time.NewTimer(chunkStall)
	defer timer.Stop()
	select {
	case c.window <- struct{}{}:
		return true
	case <-c.ctx.Done():
		return false
	case <-timer.C:
		s.stalled = true
		return false
	}
}

// chunkStream sends one output: an io.Writer the store's reads go through.
type chunkStream struct {
	of   *chunkStreams
	id   a2a.ArtifactID
	name string
	sent int64  // bytes passed on (sent in chunks, or skipped)
	buf  []byte // bytes not yet sent, less than a chunk
	done bool   // its last chunk is being sent
	// opened: a chunk was sent, which opened the artifact (later chunks
	// append to it); stalled: the last chunk found no room in time.
	opened, stalled bool
}

// Write sends p in chunks of transfer.A2AChunkBytes, keeping back less
// than a chunk for the next Write or the last chunk.
func (s *chunkStream) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(s.buf) == 0 && len(p) >= transfer.A2AChunkBytes {
			if err := s.send(p[:transfer.A2AChunkBytes]); err != nil {
				return 0, err
			}
			p = p[transfer.A2AChunkBytes:]
			continue
		}
		if s.buf == nil {
			s.buf = make([]byte, 0, transfer.A2AChunkBytes)
		}
		take := min(len(p), transfer.A2AChunkBytes-len(s.buf))
		s.buf = append(s.buf, p[:take]...)
		p = p[take:]
		if len(s.buf) == transfer.A2AChunkBytes {
			if err := s.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// flush sends the bytes held back.
func (s *chunkStream) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	err := s.send(s.buf)
	s.buf = s.buf[:0]
	return err
}

// send writes data as the chunk at s.sent, once the window has room; it
// skips the chunk when there is none within chunkStall, or at once after
// a chunk was skipped so (until there is room again).
func (s *chunkStream) send(data []byte) error {
	c := s.of
	if !s.room() {
		if err := context.Cause(c.ctx); err != nil {
			return fmt.Errorf("send %q in chunks: %w", s.name, err)
		}
		s.sent += int64(len(data)) // skipped: the caller fetches it by URL
		return nil
	}
	part := a2a.FilePart{
		File:     a2a.FileBytes{FileMeta: a2a.FileMeta{Name: s.name}, Bytes: base64.StdEncoding.EncodeToString(data)},
		Metadata: map[string]any{transfer.MetaChunkOffset: s.sent},
	}
	ev := &a2a.TaskArtifactUpdateEvent{
		TaskID: c.rc.TaskID, ContextID: c.rc.ContextID,
		Artifact: &a2a.Artifact{ID: s.id, Name: s.name, Parts: a2a.ContentParts{part}},
		Append:   s.opened,
	}
	if err := c.q.Write(c.ctx, ev); err != nil {
		return fmt.Errorf("send %q in chunks: %w", s.name, err)
	}
	s.sent += int64(len(data))
	s.opened = true
	return nil
}
