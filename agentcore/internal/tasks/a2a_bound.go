package tasks

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
)

// An A2A task keeps its messages in its history, as a2a-go makes it: the
// caller's first message whole. A message may carry megabytes of text (or
// data, or a data: URI) that the tool reads once; kept in the task it
// would be stored as long as the task (escape E14: 40 MiB of records under
// a 10 MiB quota). A task keeps a bounded part of each message: what does
// not fit is cut, with a note saying how much was left out. The executor
// reads the message whole, from the request.

// Bounds of what a task keeps of one message.
const (
	// a2aKeptPartBytes bounds one part of a message kept in a task.
	a2aKeptPartBytes = 4 << 10
	// KeptMessageBytes bounds the parts of one message together.
	KeptMessageBytes = 16 << 10
)

// boundHistory returns t with each message of its history and status
// bounded, a copy when anything was cut; t itself is left as it is.
func boundHistory(t *a2a.Task) *a2a.Task {
	if t == nil {
		return t
	}
	changed := false
	history := make([]*a2a.Message, len(t.History))
	for i, m := range t.History {
		history[i] = boundMessage(m)
		changed = changed || history[i] != m
	}
	status := t.Status
	if m := boundMessage(status.Message); m != status.Message {
		status.Message, changed = m, true
	}
	if !changed {
		return t
	}
	out := *t
	out.History, out.Status = history, status
	return &out
}

// boundMessage returns m, or a copy of it cut to the bounds.
func boundMessage(m *a2a.Message) *a2a.Message {
	if m == nil {
		return m
	}
	sizes := make([]int, len(m.Parts))
	total, over := 0, false
	for i, p := range m.Parts {
		b, _ := json.Marshal(p)
		sizes[i] = len(b)
		total += len(b)
		over = over || len(b) > a2aKeptPartBytes
	}
	meta, _ := json.Marshal(m.Metadata)
	if !over && total <= KeptMessageBytes && len(meta) <= a2aKeptPartBytes {
		return m
	}
	out := *m
	if len(meta) > a2aKeptPartBytes {
		out.Metadata = map[string]any{"agentura/notKept": fmt.Sprintf("metadata of %d bytes", len(meta))}
	}
	out.Parts = make(a2a.ContentParts, 0, len(m.Parts))
	budget := KeptMessageBytes
	for i, p := range m.Parts {
		if sizes[i] <= min(a2aKeptPartBytes, budget) {
			out.Parts = append(out.Parts, p)
			budget -= sizes[i]
			continue
		}
		keep := max(min(a2aKeptPartBytes, budget)-256, 0)
		tp, _ := PartOf[a2a.TextPart](p)
		text := tp.Text
		var note string
		if text != "" && keep > 0 {
			cut := strings.ToValidUTF8(text[:min(keep, len(text))], "")
			note = cut + fmt.Sprintf("… [%d more bytes of this text are not kept in the task]", len(text)-len(cut))
		} else {
			note = fmt.Sprintf("[a part of %d bytes is not kept in the task; the tool read it whole]", sizes[i])
		}
		out.Parts = append(out.Parts, a2a.TextPart{Text: note, Metadata: map[string]any{"agentura/notKept": sizes[i]}})
		budget -= min(budget, len(note)+64)
	}
	return &out
}

// PartOf is x, an A2A part or a part's file, as a T, whether it holds a T
// or a non-nil *T (a2a-go gives either); false when it holds neither.
func PartOf[T any](x any) (T, bool) {
	switch v := x.(type) {
	case T:
		return v, true
	case *T:
		if v != nil {
			return *v, true
		}
	}
	var zero T
	return zero, false
}
