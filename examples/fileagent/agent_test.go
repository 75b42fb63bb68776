package fileagent_test

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/agentcore/agenttest"
	"github.com/agentura/agentura/examples/fileagent"
)

// These tests run the agent in-process with agenttest: files go in by name,
// outputs come back as local files, no port is opened. The e2e tests drive
// the built binary over HTTP and stdio.

func localFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestInspectFileInProcess(t *testing.T) {
	a := agenttest.Start(t, fileagent.Info, fileagent.Register)
	notes := localFile(t, "notes.txt", "milk, eggs\nbread, butter\n")
	res, err := a.Call(context.Background(), "inspect_file", map[string]any{"source": "notes.txt"}, notes)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("milk, eggs\nbread, butter\n"))
	if res.Structured["mime_type"] != "text/plain; charset=utf-8" || res.Structured["sha256"] != hex.EncodeToString(sum[:]) || len(res.Files) != 0 {
		t.Errorf("inspect_file: %v, files %v", res.Structured, res.Files)
	}
}

func TestArchiveFilesInProcess(t *testing.T) {
	a := agenttest.Start(t, fileagent.Info, fileagent.Register)
	one, two := localFile(t, "a.txt", "first"), localFile(t, "b.txt", "second")
	res, err := a.Call(context.Background(), "archive_files", map[string]any{"sources": []string{"a.txt", "b.txt"}, "name": "kit"}, one, two)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 || res.Files[0].Name != "kit.zip" || res.Files[1].Name != "kit/SHA256SUMS" {
		t.Fatalf("files %v; want kit.zip and kit/SHA256SUMS", res.Files)
	}
	zr, err := zip.OpenReader(res.Files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	got := map[string]string{}
	for _, f := range zr.File {
		r, _ := f.Open()
		b, _ := io.ReadAll(r)
		r.Close()
		got[f.Name] = string(b)
	}
	if got["a.txt"] != "first" || got["b.txt"] != "second" || len(got) != 2 {
		t.Errorf("kit.zip holds %v", got)
	}
	sums, _ := os.ReadFile(res.Files[1].Path)
	if !strings.Contains(string(sums), "  a.txt\n") || !strings.Contains(res.Text, "Archived 2 file(s) into kit.zip.") {
		t.Errorf("SHA256SUMS %q, text %q", sums, res.Text)
	}
}

func TestArchiveNothingIsAToolError(t *testing.T) {
	a := agenttest.Start(t, fileagent.Info, fileagent.Register)
	_, err := a.Call(context.Background(), "archive_files", map[string]any{"sources": []string{}})
	var te *agenttest.ToolError
	// The schema says minItems 1, so the arguments are refused before the
	// tool runs, naming what is wrong.
	if !errors.As(err, &te) || !strings.Contains(te.Text, "sources") || !strings.Contains(te.Text, "minItems") {
		t.Errorf("archive of nothing: %v; want a tool error naming sources and minItems", err)
	}
}
