package a2abind

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
)

// fitEvent drops embedded bytes, largest first, only as far as needed, keeps
// each file's URL part and parts without a URL beside them, and never
// changes the event it was handed.
func TestFitEventDropsLargestEmbedsFirst(t *testing.T) {
	file := func(name string, kib int, withURI bool) *a2a.Artifact {
		a := &a2a.Artifact{ID: a2a.ArtifactID(name), Name: name}
		if withURI {
			a.Parts = append(a.Parts, a2a.FilePart{File: a2a.FileURI{FileMeta: a2a.FileMeta{Name: name}, URI: "https://agent.test/files/" + name}})
		}
		a.Parts = append(a.Parts, a2a.FilePart{File: a2a.FileBytes{FileMeta: a2a.FileMeta{Name: name}, Bytes: strings.Repeat("A", kib<<10)}})
		return a
	}
	task := &a2a.Task{ID: "t", Artifacts: []*a2a.Artifact{file("big", 40, true), file("mid", 30, true), file("small", 10, true), file("chunk", 8, false)}}
	before, _ := json.Marshal(task)
	got := fitEvent(task).(*a2a.Task)
	if after, _ := json.Marshal(task); string(after) != string(before) {
		t.Fatal("fitEvent changed the event it was handed")
	}
	if n := jsonSize(got); n > streamEventMax {
		t.Errorf("the fitted task takes %d bytes, over %d", n, streamEventMax)
	}
	kept := map[string]bool{}
	for _, a := range got.Artifacts {
		if !hasURIPart(a.Parts) && a.Name != "chunk" {
			t.Errorf("%s lost its URL part", a.Name)
		}
		for _, p := range a.Parts {
			if _, ok := bytesOf(p); ok {
				kept[a.Name] = true
			}
		}
	}
	if kept["big"] || !kept["mid"] || !kept["small"] || !kept["chunk"] {
		t.Errorf("embeds kept: %v; want big dropped alone (88 KiB, then 48 KiB: fits)", kept)
	}
	small := &a2a.TaskArtifactUpdateEvent{Artifact: file("small", 10, true)}
	if fitEvent(small) != a2a.Event(small) {
		t.Error("an event under the limit was copied")
	}
}
