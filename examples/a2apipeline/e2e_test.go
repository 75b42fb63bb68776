package a2apipeline_test

// End-to-end test of an agent calling another over A2A: the real
// fileagent and a2apipeline binaries, each on its own port with
// AGENT_AUTH=jwt; the a2a-go client calls the pipeline, whose forward_files
// hands the files to fileagent's archive_files with agentcore.A2AClient and
// hands out what came back.

import (
	"archive/zip"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/internal/a2atest"
	"github.com/golang-jwt/jwt/v5"
)

const secret = "pipeline-test-secret-0123456789abcdef"

// build compiles the command at pkg into dir.
func build(t *testing.T, dir, pkg string) string {
	t.Helper()
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// run starts bin on a free loopback port with env and waits until /readyz
// answers 200; it returns the agent's base URL.
func run(t *testing.T, bin string, env ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	base := "http://" + addr
	var logs bytes.Buffer
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "AGENT_ADDR="+addr, "AGENT_PUBLIC_URL="+base, "AGENT_DATA_DIR="+t.TempDir(),
		"AGENT_AUTH=jwt", "AGENT_AUTH_JWT_SECRET="+secret)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("%s log:\n%s", filepath.Base(bin), logs.String())
		}
	})
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("%s exited before it was ready: %v\n%s", filepath.Base(bin), err, logs.String())
		default:
		}
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
	}
	t.Fatalf("%s not ready after 20s", filepath.Base(bin))
	return ""
}

func token(t *testing.T, sub string) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Subject: sub, ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour)),
	}).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestForwardFilesOverA2A(t *testing.T) {
	dir := t.TempDir()
	fileagent := run(t, build(t, dir, "../fileagent/cmd/fileagent"))
	pipeline := run(t, build(t, dir, "./cmd/a2apipeline"),
		"PIPELINE_AGENT_URL="+fileagent, "PIPELINE_SKILL=archive_files", "PIPELINE_AGENT_TOKEN="+token(t, "pipeline"))

	// Without a token, the pipeline refuses A2A calls.
	resp, err := http.Post(pipeline+"/a2a", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"message/send"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /a2a without a token = %d, want 401", resp.StatusCode)
	}

	client, card := a2atest.Connect(t, pipeline, token(t, "alice"))
	if len(card.Skills) != 1 || card.Skills[0].ID != "forward_files" || len(card.Security) == 0 {
		t.Fatalf("pipeline card: skills %+v, security %v", card.Skills, card.Security)
	}

	inputs := map[string][]byte{
		"one.txt": []byte("first file\n"),
		"two.bin": bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 50000), // 200 KB: over the embed threshold
	}
	task := a2atest.Send(t, client, a2atest.Message("forward_files", map[string]any{"arguments": map[string]any{"name": "forwarded"}},
		a2atest.BytesPart("one.txt", "text/plain", inputs["one.txt"]),
		a2atest.BytesPart("two.bin", "", inputs["two.bin"])))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("forward_files: %s: %v", task.Status.State, task.Status.Message)
	}
	uris := map[string]string{}
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			if fp, ok := p.(a2a.FilePart); ok {
				if u, ok := fp.File.(a2a.FileURI); ok {
					uris[a.Name] = u.URI
				}
			}
		}
	}
	zipURI := uris["forwarded.zip"]
	if !strings.HasPrefix(zipURI, pipeline+"/files/") || uris["forwarded/SHA256SUMS"] == "" {
		t.Fatalf("artifacts = %v; want forwarded.zip and forwarded/SHA256SUMS served by the pipeline", uris)
	}
	// The files are the pipeline's own now, downloaded from it and owned by
	// alice: the URL works without any further token.
	resp, err = http.Get(zipURI)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("GET forwarded.zip = %s (%s)", resp.Status, resp.Header.Get("Content-Type"))
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		rc, _ := f.Open()
		got, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(got, inputs[f.Name]) {
			t.Errorf("zip entry %s: %d bytes differ from the input's %d", f.Name, len(got), len(inputs[f.Name]))
		}
		delete(inputs, f.Name)
	}
	if len(inputs) != 0 {
		t.Errorf("inputs missing from the zip: %v", inputs)
	}

	// A failure of the other agent's skill comes back as this call's failure.
	task = a2atest.Send(t, client, a2atest.Message("forward_files", map[string]any{"arguments": map[string]any{"bogus": true}},
		a2atest.BytesPart("one.txt", "", []byte("x"))))
	a2atest.Failed(t, task, "skill archive_files of "+fileagent+" ended failed: invalid arguments")
	a2atest.Failed(t, task, "bogus")
}
