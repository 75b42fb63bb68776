package a2abind

import (
	"cmp"
	"context"
	"encoding/json"
	"iter"
	"slices"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/agentura/agentura/agentcore/internal/tasks"
)

// Streamed events fit a2a-go's SSE reader (docs/a2a.md, "Files out"): it
// reads an event's line with a bufio.Scanner, which takes 64 KiB at most,
// and a longer line ends the caller's stream with an error. execute embeds
// a chunk's size at most in an answer read as a stream, but a stream may
// also carry what was made for a blocking message/send (a tasks/resubscribe
// to such a task gets its events, embeds up to AGENT_EMBED_MAX_BYTES), and
// tasks.Follow answers a resubscribe with the stored task, all its
// artifacts in one event. fitStreams holds every streamed event to
// streamEventMax whatever the task's history: an event over it loses
// embedded bytes parts, largest first, until it fits. Each such part's
// artifact also holds the file's URL part (a2aArtifacts), which stays: the
// caller downloads what it was not sent. Chunks (chunks.go) carry no URL
// beside them, are a chunk's size each and are never in a stored task
// (chunklessStore), and are left alone.

// streamEventMax is the most bytes a streamed event may take as JSON: the
// SSE line also holds "data: " and the JSON-RPC envelope with the caller's
// request id, under 64 KiB in all.
const streamEventMax = 60 << 10

// fitStreams is h with each event of message/stream and tasks/resubscribe
// held to streamEventMax (fitEvent).
type fitStreams struct {
	a2asrv.RequestHandler
}

// OnSendMessageStream implements a2asrv.RequestHandler.
func (h fitStreams) OnSendMessageStream(ctx context.Context, params *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return fitEach(h.RequestHandler.OnSendMessageStream(ctx, params))
}

// OnResubscribeToTask implements a2asrv.RequestHandler.
func (h fitStreams) OnResubscribeToTask(ctx context.Context, params *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return fitEach(h.RequestHandler.OnResubscribeToTask(ctx, params))
}

func fitEach(events iter.Seq2[a2a.Event, error]) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		for ev, err := range events {
			if err == nil {
				ev = fitEvent(ev)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// fitEvent returns ev when its JSON takes at most streamEventMax bytes,
// else a copy without the embedded bytes parts (largest first) that take
// it over, where their artifact has a URL part. ev itself is never changed:
// a2a-go hands the same event to every subscriber and to its task manager.
// Only an event with a part it could drop is measured: a chunk's event,
// which is most of a large file's stream, is not encoded a second time.
func fitEvent(ev a2a.Event) a2a.Event {
	switch e := ev.(type) {
	case *a2a.Task:
		if !droppable(e.Artifacts) {
			return ev
		}
		if size := jsonSize(ev); size > streamEventMax {
			t := *e
			t.Artifacts = unembed(e.Artifacts, size)
			return &t
		}
	case *a2a.TaskArtifactUpdateEvent:
		arts := []*a2a.Artifact{e.Artifact}
		if !droppable(arts) {
			return ev
		}
		if size := jsonSize(ev); size > streamEventMax {
			u := *e
			u.Artifact = unembed(arts, size)[0]
			return &u
		}
	}
	return ev
}

// droppable reports whether an artifact of arts has an embedded bytes part
// beside its URL part: what unembed may drop.
func droppable(arts []*a2a.Artifact) bool {
	for _, a := range arts {
		if a == nil || !hasURIPart(a.Parts) {
			continue
		}
		for _, p := range a.Parts {
			if _, ok := bytesOf(p); ok {
				return true
			}
		}
	}
	return false
}

// unembed returns arts, of JSON size bytes in an event, without embedded
// bytes parts (largest first) until the event takes streamEventMax bytes
// at most or none is left; an artifact that loses a part is a copy.
func unembed(arts []*a2a.Artifact, size int) []*a2a.Artifact {
	type embedded struct{ art, part, size int }
	var found []embedded
	for i, a := range arts {
		if a == nil || !hasURIPart(a.Parts) {
			continue
		}
		for j, p := range a.Parts {
			if _, ok := bytesOf(p); ok {
				found = append(found, embedded{i, j, jsonSize(p) + 1}) // with its comma
			}
		}
	}
	slices.SortFunc(found, func(a, b embedded) int { return cmp.Compare(b.size, a.size) })
	drop := map[int]map[int]bool{}
	for _, e := range found {
		if size <= streamEventMax {
			break
		}
		if drop[e.art] == nil {
			drop[e.art] = map[int]bool{}
		}
		drop[e.art][e.part] = true
		size -= e.size
	}
	if len(drop) == 0 {
		return arts
	}
	out := slices.Clone(arts)
	for i, parts := range drop {
		a := *arts[i]
		a.Parts = nil
		for j, p := range arts[i].Parts {
			if !parts[j] {
				a.Parts = append(a.Parts, p)
			}
		}
		out[i] = &a
	}
	return out
}

// bytesOf returns the file of p when it is a file part with embedded bytes.
func bytesOf(p a2a.Part) (a2a.FileBytes, bool) {
	fp, _ := tasks.PartOf[a2a.FilePart](p)
	f, _ := tasks.PartOf[a2a.FileBytes](fp.File)
	return f, f.Bytes != ""
}

// hasURIPart reports whether parts hold a file part with a URL.
func hasURIPart(parts a2a.ContentParts) bool {
	for _, p := range parts {
		fp, _ := tasks.PartOf[a2a.FilePart](p)
		if f, ok := tasks.PartOf[a2a.FileURI](fp.File); ok {
			return f.URI != ""
		}
	}
	return false
}

// jsonSize is the length of v's JSON (0 when v has none).
func jsonSize(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}
