package a2acall_test

// Calls against a real agent: agentcore serving A2A on a loopback port.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/agentura/agentura/a2acall"
	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/internal/mcptest"
	"github.com/agentura/agentura/transfer"
)

type echoInput struct {
	Source agentcore.FileAttachment `json:"source"`
}

// serveAgent runs an agent with the tools "echo" (hands the resolved input
// back out, with the caller as data "owner") and "nothing" (no file) on a
// loopback httptest server; edit tunes its config.
func serveAgent(t *testing.T, edit func(*agentcore.Config)) (*agentcore.Service, *httptest.Server) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	cfg := agentcore.Config{PublicURL: "http://" + srv.Listener.Addr().String(), DataDir: t.TempDir(), EmbedMaxBytes: 1 << 10}
	if edit != nil {
		edit(&cfg)
	}
	svc, err := agentcore.New(agentcore.Info{Name: "a2acall-test", Version: "0"}, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	agentcore.AddTool(svc, agentcore.Tool{Name: "echo", Description: "returns the file it gets"}, func(ctx context.Context, call *agentcore.Call, in echoInput) (*agentcore.Result, error) {
		f, err := call.ResolveFileAttachment(ctx, in.Source)
		if err != nil {
			return nil, err
		}
		res, err := call.FileResponse(ctx, agentcore.OutputFile(f.Name, f.Path))
		if err != nil {
			return nil, err
		}
		res.Data = map[string]any{"owner": call.Owner}
		return res, nil
	})
	agentcore.AddTool(svc, agentcore.Tool{Name: "nothing", Description: "produces no file"}, func(ctx context.Context, call *agentcore.Call, in struct{}) (*agentcore.Result, error) {
		return &agentcore.Result{Text: "done"}, nil
	})
	srv.Config.Handler = svc.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return svc, srv
}

// filesIn lists the regular files below dir.
func filesIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// The path transfer names for the card is a2a-go's.
func TestAgentCardPathIsA2AGos(t *testing.T) {
	if transfer.AgentCardPath != a2asrv.WellKnownAgentCardPath {
		t.Errorf("transfer.AgentCardPath = %q, a2a-go serves the card at %q", transfer.AgentCardPath, a2asrv.WellKnownAgentCardPath)
	}
}

func TestCallSkill(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	dataDir := t.TempDir()
	_, srv := serveAgent(t, func(c *agentcore.Config) { c.Auth, c.AuthJWTSecret, c.DataDir = "jwt", secret, dataDir })
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.Mkdir(in, 0o700)
	small := filepath.Join(in, "note.txt")
	os.WriteFile(small, []byte("a small note"), 0o600)
	large := filepath.Join(in, "big.bin")
	bigData := bytes.Repeat([]byte{0, 1, 2, 3, 4, 5, 6, 7}, 4096)
	os.WriteFile(large, bigData, 0o600)

	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o700)
	client := &a2acall.Client{Token: mcptest.BearerToken(t, secret, "carol"), Dir: out, InlineMaxBytes: 1 << 10}
	for _, tc := range []struct {
		path string
		want []byte
	}{{small, []byte("a small note")}, {large, bigData}} {
		res, err := client.CallSkill(context.Background(), srv.URL, "echo", nil, tc.path)
		if err != nil {
			t.Fatalf("CallSkill(%s): %v", filepath.Base(tc.path), err)
		}
		if len(res.Files) != 1 || res.Data["owner"] != "carol" {
			t.Fatalf("result = %+v", res)
		}
		f := res.Files[0]
		got, _ := os.ReadFile(f.Path)
		if !bytes.Equal(got, tc.want) || f.Name != filepath.Base(tc.path) || filepath.Dir(f.Path) != out {
			t.Errorf("received %s (%s, %d bytes), want %d bytes of %s in %s", f.Path, f.Name, len(got), len(tc.want), filepath.Base(tc.path), out)
		}
	}
	// The large file went by URI, through the agent's uploads (staged, owned by carol).
	if n := len(filesIn(t, filepath.Join(dataDir, "staging"))); n == 0 {
		t.Error("a file over InlineMaxBytes was not staged through /uploads")
	}

	_, err := client.CallSkill(context.Background(), srv.URL, "nope", nil, small)
	if err == nil || !strings.Contains(err.Error(), `has no skill "nope"; its skills are [echo nothing]`) {
		t.Errorf("unknown skill: err = %v", err)
	}
	_, err = client.CallSkill(context.Background(), srv.URL, "echo", nil)
	var se *a2acall.SkillError
	if !errors.As(err, &se) || se.State != "failed" || !strings.Contains(se.Message, "needs a file") {
		t.Errorf("missing file: err = %v, want a *SkillError saying the skill needs a file", err)
	}
	noToken := &a2acall.Client{Dir: out}
	if _, err := noToken.CallSkill(context.Background(), srv.URL, "echo", nil, small); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("without a token: err = %v, want a 401", err)
	}
}

// With Dir empty each call gets its own temporary folder; the caller can
// only remove one it is told of, and a call that fails or brings back no
// file must leave none behind.
func TestCallLeavesNoTemporaryFolders(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	_, srv := serveAgent(t, nil)
	in := filepath.Join(t.TempDir(), "note.txt")
	os.WriteFile(in, []byte("a note"), 0o600)
	c := &a2acall.Client{}

	res, err := c.CallSkill(context.Background(), srv.URL, "nothing", nil)
	if err != nil || res.Text != "done" {
		t.Fatalf("nothing: %+v, %v", res, err)
	}
	if left := tempFolders(t, tmp); len(left) != 0 {
		t.Errorf("a call without files left %v", left)
	}

	res, err = c.CallSkill(context.Background(), srv.URL, "echo", nil, in)
	if err != nil || len(res.Files) != 1 {
		t.Fatalf("echo: %+v, %v", res, err)
	}
	if res.Dir == "" || filepath.Dir(res.Files[0].Path) != res.Dir {
		t.Fatalf("Result.Dir = %q, want the folder of %s", res.Dir, res.Files[0].Path)
	}
	os.RemoveAll(res.Dir)

	c.MaxBytes = 2 // the echoed file is over it: the call fails while saving
	if _, err := c.CallSkill(context.Background(), srv.URL, "echo", nil, in); err == nil {
		t.Fatal("a file over MaxBytes was accepted")
	}
	if left := tempFolders(t, tmp); len(left) != 0 {
		t.Errorf("a failed call left %v", left)
	}
}

func tempFolders(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "a2a-files-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
