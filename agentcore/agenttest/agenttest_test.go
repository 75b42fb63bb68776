package agenttest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agentcore/agenttest"
	"github.com/agentura/agentura/client"
)

type input struct {
	Source agentcore.FileAttachment `json:"source"`
}

// register adds a tool that hands back the SHA-256 of its input as a file.
func register(svc *agentcore.Service) error {
	agentcore.AddTool(svc, agentcore.Tool{Name: "digest", Description: "Writes the SHA-256 of a file."},
		func(ctx context.Context, call *agentcore.Call, in input) (*agentcore.Result, error) {
			f, err := call.ResolveFileAttachment(ctx, in.Source)
			if err != nil {
				return nil, err
			}
			r, err := os.Open(f.Path)
			if err != nil {
				return nil, err
			}
			defer r.Close()
			h := sha256.New()
			if _, err := io.Copy(h, r); err != nil {
				return nil, err
			}
			if f.Size == 0 {
				return nil, errors.New("the file is empty; send a file with content")
			}
			res, err := call.FileResponse(ctx, agentcore.OutputBytes(f.Name+".sha256", fmt.Appendf(nil, "%x  %s\n", h.Sum(nil), f.Name)))
			if err != nil {
				return nil, err
			}
			res.Text = "Digested " + f.Name + "."
			return res, nil
		})
	return nil
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCallWithLocalFiles(t *testing.T) {
	a := agenttest.Start(t, agentcore.Info{Name: "digester"}, register)
	ctx := context.Background()
	for _, size := range []int{5, 11 << 20} { // inline, and through /uploads (above 10 MiB)
		data := bytes.Repeat([]byte("x"), size)
		path := writeFile(t, fmt.Sprintf("in-%d.bin", size), data)
		res, err := a.Call(ctx, "digest", map[string]any{"source": filepath.Base(path)}, path)
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		if len(res.Files) != 1 {
			t.Fatalf("%d bytes: files %v", size, res.Files)
		}
		got, err := os.ReadFile(res.Files[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%x  %s\n", sha256.Sum256(data), filepath.Base(path))
		if string(got) != want || res.Files[0].Name != filepath.Base(path)+".sha256" {
			t.Errorf("%d bytes: output %s = %q, want %q", size, res.Files[0].Name, got, want)
		}
		if !strings.Contains(res.Text, "Digested "+filepath.Base(path)) || !strings.Contains(res.Text, "Tool produced: ") || strings.Contains(res.Text, "http") {
			t.Errorf("%d bytes: text %q", size, res.Text)
		}
	}
}

func TestCallErrors(t *testing.T) {
	a := agenttest.Start(t, agentcore.Info{Name: "digester"}, register)
	ctx := context.Background()
	empty := writeFile(t, "empty.txt", nil)
	_, err := a.Call(ctx, "digest", map[string]any{"source": "empty.txt"}, empty)
	var te *agenttest.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Text, "the file is empty") {
		t.Errorf("a tool error: %v; want a *ToolError with the tool's message", err)
	}
	if _, err := a.Call(ctx, "digest", map[string]any{"source": "missing.txt"}); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("a name not in the registry: %v; want client.ErrNotFound", err)
	}
}

// TestNoNetwork: the agent's HTTP client reaches the agent and nothing else.
func TestNoNetwork(t *testing.T) {
	a := agenttest.Start(t, agentcore.Info{Name: "digester"}, register)
	resp, err := a.HTTPClient.Get(agenttest.PublicURL + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /healthz in-process: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := a.HTTPClient.Get("http://127.0.0.1:1/"); err == nil {
		t.Error("the test agent's HTTP client reached another host")
	}
}
