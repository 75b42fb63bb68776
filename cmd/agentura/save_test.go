package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/filename"
)

// A taken name is numbered within the 255 bytes a file system allows, even
// when the name is as long as it may be.
func TestSaveFileNumbersTakenNamesWithinSegmentLimit(t *testing.T) {
	src := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(src, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	long := "images/" + strings.Repeat("ü", 125) + ".txt" // a 254-byte last segment
	for _, name := range []string{"chart.png", long} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := saveFile(client.Entry{Name: name, Path: src}, dir)
		if err != nil {
			t.Fatalf("save %q beside an existing file: %v", name, err)
		}
		want := filepath.Join(dir, filepath.FromSlash(filename.Numbered(name, 2)))
		if got != want {
			t.Errorf("saved %q as %q, want %q", name, got, want)
		}
		if base := filepath.Base(got); len(base) > filename.MaxSegmentBytes || !strings.HasSuffix(base, " (2).txt") && !strings.HasSuffix(base, " (2).png") {
			t.Errorf("saved as %q (%d bytes)", base, len(base))
		}
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != "old" {
			t.Errorf("existing %q: %q, %v; want it untouched", name, b, err)
		}
		if b, err := os.ReadFile(got); err != nil || string(b) != "new" {
			t.Errorf("saved %q: %q, %v", got, b, err)
		}
	}
}
