package a2acall_test

// Calls against a real agent: agentcore serving A2A on a loopback port.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/agentura/agentura/a2acall"
	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/testagent"
	"github.com/agentura/agentura/transfer"
)

type echoInput struct {
	Source agentcore.FileAttachment `json:"source"`
}

// serveAgent runs the test agent (internal/testkit/testagent) with two tools more:
// "echo" hands the resolved input back out under its own name, with the
// caller as data "owner"; "nothing" produces no file.
func serveAgent(t *testing.T, opts testagent.Options) *testagent.Agent {
	t.Helper()
	a := testagent.Start(t, opts)
	agentcore.AddTool(a.Service, agentcore.Tool{Name: "echo", Description: "returns the file it gets"}, func(ctx context.Context, call *agentcore.Call, in echoInput) (*agentcore.Result, error) {
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
	agentcore.AddTool(a.Service, agentcore.Tool{Name: "nothing", Description: "produces no file"}, func(ctx context.Context, call *agentcore.Call, in struct{}) (*agentcore.Result, error) {
		return &agentcore.Result{Text: "done"}, nil
	})
	return a
}

// The path transfer names for the card is a2a-go's.
func TestAgentCardPathIsA2AGos(t *testing.T) {
	if transfer.AgentCardPath != a2asrv.WellKnownAgentCardPath {
		t.Errorf("transfer.AgentCardPath = %q, a2a-go serves the card at %q", transfer.AgentCardPath, a2asrv.WellKnownAgentCardPath)
	}
}

func TestCallSkill(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	srv := serveAgent(t, testagent.Options{JWTSecret: secret, EmbedMaxBytes: 1 << 10})
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
		res, err := client.CallSkill(context.Background(), srv.Base, "echo", nil, tc.path)
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
	// The large file went by URI, through the agent's uploads.
	if got := srv.Metric(t, "agentura_uploads_total"); !strings.Contains(got, `status="201"} 1`) {
		t.Errorf("a file over InlineMaxBytes was not staged through /uploads: %s", got)
	}

	_, err := client.CallSkill(context.Background(), srv.Base, "nope", nil, small)
	if err == nil || !strings.Contains(err.Error(), `has no skill "nope"; its skills are [`) {
		t.Errorf("unknown skill: err = %v", err)
	}
	_, err = client.CallSkill(context.Background(), srv.Base, "echo", nil)
	var se *a2acall.SkillError
	if !errors.As(err, &se) || se.State != "failed" || !strings.Contains(se.Message, "needs a file") {
		t.Errorf("missing file: err = %v, want a *SkillError saying the skill needs a file", err)
	}
	noToken := &a2acall.Client{Dir: out}
	if _, err := noToken.CallSkill(context.Background(), srv.Base, "echo", nil, small); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("without a token: err = %v, want a 401", err)
	}
}

// With Dir empty each call gets its own temporary folder; the caller can
// only remove one it is told of, and a call that fails or brings back no
// file must leave none behind.
func TestCallLeavesNoTemporaryFolders(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv := serveAgent(t, testagent.Options{EmbedMaxBytes: 1 << 10})
	in := filepath.Join(t.TempDir(), "note.txt")
	os.WriteFile(in, []byte("a note"), 0o600)
	c := &a2acall.Client{}

	res, err := c.CallSkill(context.Background(), srv.Base, "nothing", nil)
	if err != nil || res.Text != "done" {
		t.Fatalf("nothing: %+v, %v", res, err)
	}
	if left := tempFolders(t, tmp); len(left) != 0 {
		t.Errorf("a call without files left %v", left)
	}

	res, err = c.CallSkill(context.Background(), srv.Base, "echo", nil, in)
	if err != nil || len(res.Files) != 1 {
		t.Fatalf("echo: %+v, %v", res, err)
	}
	if res.Dir == "" || filepath.Dir(res.Files[0].Path) != res.Dir {
		t.Fatalf("Result.Dir = %q, want the folder of %s", res.Dir, res.Files[0].Path)
	}
	os.RemoveAll(res.Dir)

	c.MaxBytes = 2 // the echoed file is over it: the call fails while saving
	if _, err := c.CallSkill(context.Background(), srv.Base, "echo", nil, in); err == nil {
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
