package a2apipeline_test

// End-to-end test of an agent calling another over A2A: the real
// fileagent and a2apipeline binaries, each on its own port with
// AGENT_AUTH=jwt; the a2a-go client calls the pipeline, whose forward_files
// hands the files to fileagent's archive_files with a2acall.Client and
// hands out what came back.

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/internal/testkit/a2atest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

const secret = "pipeline-test-secret-0123456789abcdef"

// run starts bin on a free loopback port with AGENT_AUTH=jwt and env, and
// waits until /readyz answers 200; it returns the agent's base URL.
func run(t *testing.T, bin string, env ...string) string {
	t.Helper()
	return mcptest.StartAgent(t, bin, append([]string{"AGENT_AUTH=jwt", "AGENT_AUTH_JWT_SECRET=" + secret}, env...)...).URL
}

func TestForwardFilesOverA2A(t *testing.T) {
	fileagent := run(t, mcptest.BuildBinary(t, "../fileagent/cmd/fileagent", false))
	pipeline := run(t, mcptest.BuildBinary(t, "./cmd/a2apipeline", false),
		"PIPELINE_AGENT_URL="+fileagent, "PIPELINE_SKILL=archive_files", "PIPELINE_AGENT_TOKEN="+mcptest.BearerToken(t, secret, "pipeline"))

	// Without a token, the pipeline refuses A2A calls.
	resp, err := http.Post(pipeline+"/a2a", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"message/send"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /a2a without a token = %d, want 401", resp.StatusCode)
	}

	client, card := a2atest.Connect(t, pipeline, mcptest.BearerToken(t, secret, "alice"))
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
	resp, data := mcptest.Get(t, zipURI, nil)
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
