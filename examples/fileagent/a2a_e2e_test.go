package fileagent_test

// End-to-end test of the example agent over A2A: the real binary on a real
// port, driven by the a2a-go client (JSON-RPC, as the agent card says),
// with inputs as inline bytes and as URIs and produced files downloaded.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/internal/testkit/a2atest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

func mustComplete(t *testing.T, what string, task *a2a.Task) {
	t.Helper()
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("%s: task %s: %s", what, task.Status.State, a2atest.Text(task.Status.Message))
	}
}

// resultData is the data part of the task's "result" artifact.
func resultData(t *testing.T, task *a2a.Task) map[string]any {
	t.Helper()
	for _, a := range task.Artifacts {
		if a.Name != "result" {
			continue
		}
		for _, p := range a.Parts {
			if d, ok := p.(a2a.DataPart); ok {
				return d.Data
			}
		}
	}
	t.Fatalf("task has no result data; artifacts: %d", len(task.Artifacts))
	return nil
}

// a2aFile is a produced file as the artifacts carry it.
type a2aFile struct {
	uri    string
	inline []byte // nil without a bytes part
	mime   string
}

// producedFiles reads the file artifacts: per file a uri part, and a bytes
// part for small files.
func producedFiles(t *testing.T, task *a2a.Task) map[string]a2aFile {
	t.Helper()
	out := map[string]a2aFile{}
	for _, a := range task.Artifacts {
		var f a2aFile
		for _, p := range a.Parts {
			fp, ok := p.(a2a.FilePart)
			if !ok {
				continue
			}
			switch c := fp.File.(type) {
			case a2a.FileURI:
				f.uri, f.mime = c.URI, c.MimeType
				if c.Name != a.Name {
					t.Errorf("uri part named %q in artifact %q", c.Name, a.Name)
				}
			case a2a.FileBytes:
				data, err := base64.StdEncoding.DecodeString(c.Bytes)
				if err != nil {
					t.Fatalf("artifact %s: bytes part is not base64: %v", a.Name, err)
				}
				f.inline = data
			}
		}
		if f.uri == "" && f.inline != nil {
			t.Errorf("artifact %s has bytes but no uri part; the uri is always given", a.Name)
		}
		if f.uri != "" {
			out[a.Name] = f
		}
	}
	return out
}

func TestA2A(t *testing.T) {
	scan := testPNG(t)
	// A foreign server the agent is allowed to fetch from (listed in
	// AGENT_FETCH_ALLOW_HOSTS), and one it is not: both on loopback.
	serve := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(scan)
	}
	allowed := httptest.NewServer(http.HandlerFunc(serve))
	defer allowed.Close()
	refused := httptest.NewServer(http.HandlerFunc(serve))
	defer refused.Close()
	allowedHost := strings.TrimPrefix(allowed.URL, "http://")

	// No "still running" updates: the stream test checks the exact sequence.
	a := mcptest.StartAgent(t, agentBin, "AGENT_LOG_LEVEL=debug",
		"AGENT_EMBED_MAX_BYTES=2048", "AGENT_FETCH_ALLOW_HOSTS="+allowedHost, "AGENT_A2A_STATUS_INTERVAL=1h")
	c, card := a2atest.Connect(t, a.URL, "")

	t.Run("card", func(t *testing.T) {
		if card.URL != a.URL+"/a2a" || card.PreferredTransport != a2a.TransportProtocolJSONRPC || !card.Capabilities.Streaming {
			t.Errorf("card: url %q, transport %q, streaming %v", card.URL, card.PreferredTransport, card.Capabilities.Streaming)
		}
		var ids []string
		for _, s := range card.Skills {
			ids = append(ids, s.ID)
			if s.Description == "" || len(s.Examples) == 0 || !slices.Contains(s.InputModes, "*/*") || !slices.Contains(s.Tags, "files") {
				t.Errorf("skill %s: %+v lacks description, examples, file input modes or the files tag", s.ID, s)
			}
		}
		if !slices.Equal(ids, []string{"inspect_file", "archive_files"}) {
			t.Errorf("skills = %v, want one per tool", ids)
		}
	})

	t.Run("bytes in", func(t *testing.T) {
		task := a2atest.Send(t, c, a2atest.Message("inspect_file", nil, a2atest.BytesPart("scan.png", "image/png", scan)))
		mustComplete(t, "inspect_file", task)
		data := resultData(t, task)
		if data["sha256"] != sha256Hex(scan) || data["name"] != "scan.png" || data["mime_type"] != "image/png" {
			t.Errorf("inspect_file of inline bytes = %v", data)
		}
	})

	t.Run("uri in", func(t *testing.T) {
		// A signed URL of the agent's own (from /uploads) is read locally.
		req, _ := http.NewRequest(http.MethodPost, a.URL+"/uploads", bytes.NewReader(scan))
		req.Header.Set("X-Filename", "staged.png")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var up struct{ URL string }
		json.NewDecoder(resp.Body).Decode(&up)
		resp.Body.Close()
		task := a2atest.Send(t, c, a2atest.Message("inspect_file", nil, a2atest.URIPart("", up.URL)))
		mustComplete(t, "inspect_file of an uploaded URL", task)
		if data := resultData(t, task); data["sha256"] != sha256Hex(scan) || data["name"] != "staged.png" {
			t.Errorf("inspect_file of an uploaded URL = %v", data)
		}
		// A foreign URL on an allowed host is fetched.
		task = a2atest.Send(t, c, a2atest.Message("inspect_file", nil, a2atest.URIPart("fetched.png", allowed.URL+"/x.png")))
		mustComplete(t, "inspect_file of an allowed URL", task)
		if data := resultData(t, task); data["sha256"] != sha256Hex(scan) || data["name"] != "fetched.png" {
			t.Errorf("inspect_file of an allowed URL = %v", data)
		}
	})

	t.Run("foreign loopback uri refused", func(t *testing.T) {
		task := a2atest.Send(t, c, a2atest.Message("inspect_file", nil, a2atest.URIPart("x.png", refused.URL+"/x.png")))
		a2atest.Failed(t, task, "is loopback; the agent only fetches from public addresses unless the host is listed in AGENT_FETCH_ALLOW_HOSTS")
	})

	t.Run("files out", func(t *testing.T) {
		notes := []byte("first notes\n")
		task := a2atest.Send(t, c, a2atest.Message("archive_files", map[string]any{"name": "kit"},
			a2atest.BytesPart("scan.png", "image/png", scan),
			a2atest.BytesPart("notes.txt", "text/plain", notes),
			a2atest.URIPart("again.png", allowed.URL+"/again.png")))
		mustComplete(t, "archive_files", task)
		files := producedFiles(t, task)
		zipFile, sums := files["kit.zip"], files["kit/SHA256SUMS"]
		if zipFile.uri == "" || sums.uri == "" || len(files) != 2 {
			t.Fatalf("produced files = %v, want kit.zip and kit/SHA256SUMS", files)
		}
		resp, zipData := mcptest.Get(t, zipFile.uri, nil)
		checkDownloadHeaders(t, resp.Header, "kit.zip", "application/zip")
		entries := unzip(t, zipData)
		if !bytes.Equal(entries["scan.png"], scan) || !bytes.Equal(entries["notes.txt"], notes) || !bytes.Equal(entries["again.png"], scan) || len(entries) != 3 {
			t.Errorf("zip entries = %v, want the three inputs in order of the file parts", keys(entries))
		}
		if zipFile.inline != nil && len(zipData) > 2048 {
			t.Errorf("kit.zip (%d bytes) came inline although over AGENT_EMBED_MAX_BYTES", len(zipData))
		}
		_, sumData := mcptest.Get(t, sums.uri, nil)
		if sums.inline == nil || !bytes.Equal(sums.inline, sumData) {
			t.Errorf("SHA256SUMS: bytes part %q, download %q; a small file comes as both", sums.inline, sumData)
		}
		if !strings.Contains(string(sumData), sha256Hex(notes)+"  notes.txt") {
			t.Errorf("SHA256SUMS = %q", sumData)
		}
	})

	t.Run("unknown skill", func(t *testing.T) {
		task := a2atest.Send(t, c, a2atest.Message("shred_file", nil, a2atest.BytesPart("a.txt", "text/plain", []byte("a"))))
		a2atest.Failed(t, task, `unknown skill "shred_file"; this agent's skills are [inspect_file archive_files]`)
	})

	t.Run("missing file part", func(t *testing.T) {
		task := a2atest.Send(t, c, a2atest.Message("inspect_file", nil))
		a2atest.Failed(t, task, `skill inspect_file needs a file for "source": add a file part`)
	})

	t.Run("tool error", func(t *testing.T) {
		task := a2atest.Send(t, c, a2atest.Message("inspect_file", nil, a2atest.BytesPart("a.bin", "", []byte{1, 2, 3}), a2atest.URIPart("x", "http://example.invalid/x")))
		a2atest.Failed(t, task, `takes one file in "source", but the message has 2 file parts`)
		task = a2atest.Send(t, c, a2atest.Message("inspect_file", nil, a2atest.URIPart("big.png", "http://example.invalid/big.png")))
		if task.Status.State != a2a.TaskStateFailed || !strings.Contains(a2atest.Text(task.Status.Message), "big.png") {
			t.Errorf("unresolvable host: %s %q", task.Status.State, a2atest.Text(task.Status.Message))
		}
	})

	t.Run("stream", func(t *testing.T) {
		msg := a2a.NewMessage(a2a.MessageRoleUser,
			a2a.DataPart{Data: map[string]any{"skill": "archive_files"}},
			a2atest.BytesPart("notes.txt", "text/plain", []byte("streamed\n")))
		var seen []string
		var zipURI, zipSHA string
		for ev, err := range c.SendStreamingMessage(context.Background(), &a2a.MessageSendParams{Message: msg}) {
			if err != nil {
				t.Fatalf("message/stream: %v", err)
			}
			switch ev := ev.(type) {
			case *a2a.Task:
				seen = append(seen, "task:"+string(ev.Status.State))
			case *a2a.TaskStatusUpdateEvent:
				if _, progress := ev.Metadata["progress"]; progress {
					seen = append(seen, "progress") // Call.Progress
					continue
				}
				seen = append(seen, "status:"+string(ev.Status.State))
			case *a2a.TaskArtifactUpdateEvent:
				seen = append(seen, "artifact:"+ev.Artifact.Name)
				for _, p := range ev.Artifact.Parts {
					if fp, ok := p.(a2a.FilePart); ok {
						if u, ok := fp.File.(a2a.FileURI); ok && ev.Artifact.Name == "bundle.zip" {
							zipURI = u.URI
							zipSHA, _ = ev.Artifact.Metadata["sha256"].(string)
						}
					}
				}
			}
		}
		want := []string{"task:submitted", "status:working", "progress", "artifact:result", "artifact:bundle.zip", "artifact:bundle/SHA256SUMS", "status:completed"}
		if !slices.Equal(seen, want) {
			t.Errorf("stream events = %v, want %v", seen, want)
		}
		if zipURI == "" {
			t.Fatal("no uri for bundle.zip in the stream")
		}
		_, data := mcptest.Get(t, zipURI, nil)
		if sum := sha256.Sum256(data); zipSHA != hex.EncodeToString(sum[:]) {
			t.Errorf("bundle.zip artifact metadata sha256 %q; the served bytes hash to %x", zipSHA, sum)
		}
		if got := unzip(t, data)["notes.txt"]; string(got) != "streamed\n" {
			t.Errorf("streamed archive holds %q", got)
		}
	})

	t.Run("wrong method and oversized body answer JSON", func(t *testing.T) {
		resp, err := http.Get(a.URL + "/a2a")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(body), "use POST") && !strings.Contains(string(body), "with POST") {
			t.Errorf("GET /a2a = %d %s", resp.StatusCode, body)
		}
	})
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
