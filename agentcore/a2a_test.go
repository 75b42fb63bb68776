package agentcore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/agentura/agentura/agentcore/internal/tasks"
	"github.com/agentura/agentura/internal/testkit/a2atest"
	"github.com/agentura/agentura/transfer"
)

// a2aClient connects the a2a-go client to the agent at base through its card.
func a2aClient(t testing.TB, base, token string) *a2aclient.Client {
	c, _ := a2atest.Connect(t, base, token)
	return c
}

// fileParts returns the uri and bytes file parts of the artifact named name.
func fileParts(t *testing.T, task *a2a.Task, name string) (uri *a2a.FileURI, data *a2a.FileBytes) {
	t.Helper()
	for _, a := range task.Artifacts {
		if a.Name != name {
			continue
		}
		for _, p := range a.Parts {
			fp, ok := p.(a2a.FilePart)
			if !ok {
				continue
			}
			switch f := fp.File.(type) {
			case a2a.FileURI:
				uri = &f
			case a2a.FileBytes:
				data = &f
			}
		}
		return uri, data
	}
	t.Fatalf("no artifact %q among %d", name, len(task.Artifacts))
	return nil, nil
}

func TestA2ABytesInFilesOut(t *testing.T) {
	svc, srv := serveTestService(t, func(c *Config) { c.EmbedMaxBytes = 1 << 10 })
	addEchoTool(svc)
	c := a2aClient(t, srv.URL, "")

	small := []byte("hello, agent\n")
	task := a2atest.Send(t, c, a2atest.Message("echo", nil, a2atest.BytesPart("hello.txt", "text/plain", small)))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state = %s: %s", task.Status.State, a2atest.Text(task.Status.Message))
	}
	uri, inline := fileParts(t, task, "hello.txt")
	if uri == nil || !strings.HasPrefix(uri.URI, srv.URL+"/files/") {
		t.Fatalf("uri part = %+v, want a signed URL of the agent", uri)
	}
	if _, got := download(t, uri.URI); !bytes.Equal(got, small) {
		t.Errorf("downloaded %q, want %q", got, small)
	}
	if inline == nil {
		t.Fatal("a file under AGENT_EMBED_MAX_BYTES has no bytes part")
	}
	if got, _ := base64.StdEncoding.DecodeString(inline.Bytes); !bytes.Equal(got, small) || inline.MimeType != "text/plain; charset=utf-8" && inline.MimeType != "text/plain" {
		t.Errorf("bytes part = %q (%s), want %q", got, inline.MimeType, small)
	}
	// The result artifact names the file for readers without middleware.
	if res := task.Artifacts[0]; res.Name != "result" || !strings.Contains(a2atest.Text(&a2a.Message{Parts: res.Parts}), "Tool produced: hello.txt") {
		t.Errorf("first artifact = %+v", res)
	}

	big := bytes.Repeat([]byte("0123456789abcdef"), 200) // 3200 bytes, over the 1 KiB threshold
	task = a2atest.Send(t, c, a2atest.Message("echo", nil, a2atest.BytesPart("big.txt", "", big)))
	uri, inline = fileParts(t, task, "big.txt")
	if inline != nil {
		t.Error("a file over AGENT_EMBED_MAX_BYTES came with a bytes part")
	}
	if _, got := download(t, uri.URI); !bytes.Equal(got, big) {
		t.Errorf("downloaded %d bytes, want %d", len(got), len(big))
	}

	// History keeps a note, not the bytes.
	got, err := c.GetTask(context.Background(), &a2a.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(got)
	if bytes.Contains(raw, []byte(base64.StdEncoding.EncodeToString(big)[:64])) {
		t.Error("tasks/get returns the inline bytes of the input in the history")
	}
	if !bytes.Contains(raw, []byte("sent inline")) {
		t.Errorf("history lacks the note on the inline file: %s", raw)
	}
}

func TestA2AFailuresAreFailedTasks(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	addEchoTool(svc)
	AddTool(svc, Tool{Name: "plain"}, func(ctx context.Context, call *Call, in struct {
		Word string `json:"word"`
	}) (*Result, error) {
		if in.Word == "boom" {
			return nil, errors.New("the word boom is not allowed; pick another")
		}
		return TextResult(in.Word), nil
	})
	c := a2aClient(t, srv.URL, "")
	txt := a2atest.BytesPart("a.txt", "text/plain", []byte("a"))

	a2atest.Failed(t, a2atest.Send(t, c, a2atest.Message("nope", nil, txt)), `unknown skill "nope"; this agent's skills are [echo plain]`)
	a2atest.Failed(t, a2atest.Send(t, c, a2atest.Message("echo", nil)), `skill echo needs a file for "source": add a file part`)
	a2atest.Failed(t, a2atest.Send(t, c, a2atest.Message("echo", nil, txt, txt)), `takes one file in "source", but the message has 2 file parts`)
	a2atest.Failed(t, a2atest.Send(t, c, a2atest.Message("plain", map[string]any{"word": "x"}, txt)), "skill plain takes no files")
	a2atest.Failed(t, a2atest.Send(t, c, a2atest.Message("plain", map[string]any{"word": "boom"})), "the word boom is not allowed; pick another")
	a2atest.Failed(t, a2atest.Send(t, c, a2atest.Message("plain", map[string]any{"word": 3})), "invalid arguments")
	a2atest.Failed(t, a2atest.Send(t, c, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "echo this"})}), "the message names no skill")
	a2atest.Failed(t, a2atest.Send(t, c, a2atest.Message("echo", nil, a2a.FilePart{File: a2a.FileURI{URI: "file:///etc/passwd"}})), `unsupported URL scheme "file"`)

	task := a2atest.Send(t, c, a2atest.Message("plain", map[string]any{"word": "fine"}))
	if task.Status.State != a2a.TaskStateCompleted || a2atest.Text(task.Status.Message) != "fine" {
		t.Errorf("plain = %s %q", task.Status.State, a2atest.Text(task.Status.Message))
	}
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var metrics bytes.Buffer
	metrics.ReadFrom(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`agentura_a2a_tasks_total{state="failed"} 8`, `agentura_a2a_tasks_total{state="completed"} 1`} {
		if !strings.Contains(metrics.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestA2AStreamReportsLongCalls(t *testing.T) {
	svc, srv := serveTestService(t, func(c *Config) { c.A2AStatusInterval = 40 * time.Millisecond })
	AddTool(svc, Tool{Name: "slow"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return call.FileResponse(ctx, OutputBytes("late.txt", []byte("finally")))
	})
	c := a2aClient(t, srv.URL, "")
	var kinds []string
	stillRunning := 0
	var final *a2a.TaskStatusUpdateEvent
	for ev, err := range c.SendStreamingMessage(context.Background(), a2atest.Message("slow", nil)) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev := ev.(type) {
		case *a2a.Task:
			kinds = append(kinds, "task:"+string(ev.Status.State))
		case *a2a.TaskStatusUpdateEvent:
			kinds = append(kinds, "status:"+string(ev.Status.State))
			if strings.HasPrefix(a2atest.Text(ev.Status.Message), "still running slow") {
				stillRunning++
			}
			if ev.Final {
				final = ev
			}
		case *a2a.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact:"+ev.Artifact.Name)
		}
	}
	if len(kinds) < 4 || kinds[0] != "task:submitted" || kinds[1] != "status:working" {
		t.Errorf("events = %v, want submitted, working, ...", kinds)
	}
	if stillRunning < 2 {
		t.Errorf("%d 'still running' updates in %v; want one per 40ms of a 300ms call", stillRunning, kinds)
	}
	if final == nil || final.Status.State != a2a.TaskStateCompleted || kinds[len(kinds)-1] != "status:completed" {
		t.Errorf("stream did not end with a final completed status: %v", kinds)
	}
	if !strings.Contains(strings.Join(kinds, " "), "artifact:late.txt") {
		t.Errorf("no artifact for late.txt in %v", kinds)
	}
}

func TestA2AWithJWTOwnsFilesAndTasks(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	svc, srv := serveTestService(t, func(c *Config) { c.Auth, c.AuthJWTSecret = "jwt", secret })
	addEchoTool(svc)

	// The card is public and says how to authenticate.
	code, card := getJSON(t, srv.URL+transfer.AgentCardPath)
	if code != 200 || card["securitySchemes"] == nil || card["security"] == nil {
		t.Fatalf("card = %d %v", code, card)
	}
	// A2A itself is not.
	resp, err := http.Post(srv.URL+transfer.A2APath, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/a2a without a token = %d, want 401", resp.StatusCode)
	}

	alice := a2aClient(t, srv.URL, callerToken(t, secret, "alice"))
	task := a2atest.Send(t, alice, a2atest.Message("echo", nil, a2atest.BytesPart("a.txt", "text/plain", []byte("alice's"))))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state = %s: %s", task.Status.State, a2atest.Text(task.Status.Message))
	}
	var data map[string]any
	for _, p := range task.Artifacts[0].Parts {
		if d, ok := p.(a2a.DataPart); ok {
			data = d.Data
		}
	}
	if data["owner"] != "alice" {
		t.Errorf("the tool ran for owner %v, want alice (the token's sub)", data["owner"])
	}
	uri, _ := fileParts(t, task, "a.txt")

	bob := a2aClient(t, srv.URL, callerToken(t, secret, "bob"))
	if _, err := bob.GetTask(context.Background(), &a2a.TaskQueryParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob reading alice's task: err = %v, want task not found", err)
	}
	// Alice's signed URL is hers: given to bob's call, it is not read.
	task = a2atest.Send(t, bob, a2atest.Message("echo", nil, a2a.FilePart{File: a2a.FileURI{FileMeta: a2a.FileMeta{Name: "a.txt"}, URI: uri.URI}}))
	if task.Status.State != a2a.TaskStateFailed {
		t.Errorf("bob's call with alice's URL = %s, want failed", task.Status.State)
	}
	if _, err := alice.GetTask(context.Background(), &a2a.TaskQueryParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("alice reading bob's task: err = %v, want task not found", err)
	}
}

func TestA2ALimitsAndWireForms(t *testing.T) {
	svc, srv := serveTestService(t, func(c *Config) { c.MaxUploadBytes = 1000 })
	addEchoTool(svc)
	c := a2aClient(t, srv.URL, "")

	// The input cap applies to inline bytes as to any input.
	a2atest.Failed(t, a2atest.Send(t, c, a2atest.Message("echo", nil, a2atest.BytesPart("big.bin", "", make([]byte, 2000)))),
		"exceeds the input size limit of 1000 bytes (AGENT_MAX_UPLOAD_BYTES)")

	post := func(body string) (int, string) {
		t.Helper()
		resp, err := http.Post(srv.URL+transfer.A2APath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	// The spec's "type": "file" is not A2A v0.3's "kind": the parser refuses it.
	code, body := post(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"type":"file","file":{"name":"a.txt","bytes":"YQ=="}}]}}}`)
	if code != 200 || !strings.Contains(body, `"error"`) || !strings.Contains(body, "unknown part kind") {
		t.Errorf(`"type": "file" = %d %s, want a JSON-RPC parse error`, code, body)
	}
	// A body over the cap is refused before it is read.
	code, body = post(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"x":"` + strings.Repeat("a", 2<<20) + `"}}`)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "AGENT_MAX_UPLOAD_BYTES") {
		t.Errorf("oversized body = %d %s", code, body)
	}
}

func TestA2ACancelStopsTheTool(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	stopped := make(chan error, 1)
	started := make(chan struct{})
	AddTool(svc, Tool{Name: "wait"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		close(started)
		select {
		case <-ctx.Done():
			stopped <- ctx.Err()
			return nil, ctx.Err()
		case <-time.After(20 * time.Second):
			stopped <- nil
			return TextResult("waited"), nil
		}
	})
	c := a2aClient(t, srv.URL, "")
	msg := a2atest.Message("wait", nil)
	msg.Config = &a2a.MessageSendConfig{Blocking: new(bool)} // answer at once, with the task
	res, err := c.SendMessage(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	<-started
	canceled, err := c.CancelTask(context.Background(), &a2a.TaskIDParams{ID: task.ID})
	if err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	if canceled.Status.State != a2a.TaskStateCanceled {
		t.Errorf("state after cancel = %s", canceled.Status.State)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the tool ended with %v, want its context canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the tool did not see the cancel")
	}
}

func TestA2AStatusIntervalSetting(t *testing.T) {
	lookup := func(v string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			if k == "AGENT_A2A_STATUS_INTERVAL" {
				return v, true
			}
			return "", false
		}
	}
	if _, err := ConfigFromLookup(lookup("often"), "x", ":8001"); err == nil || !strings.Contains(err.Error(), "AGENT_A2A_STATUS_INTERVAL") {
		t.Errorf("a bad AGENT_A2A_STATUS_INTERVAL: err = %v, want one naming the variable", err)
	}
	cfg, err := ConfigFromLookup(lookup("750ms"), "x", ":8001")
	if err != nil || cfg.A2AStatusInterval != 750*time.Millisecond {
		t.Errorf("AGENT_A2A_STATUS_INTERVAL=750ms: %v, %v", cfg.A2AStatusInterval, err)
	}
	if cfg, _ := ConfigFromLookup(lookup(""), "x", ":8001"); cfg.A2AStatusInterval != tasks.DefaultA2AStatusInterval {
		t.Errorf("default interval = %v", cfg.A2AStatusInterval)
	}
}

func TestA2AOtherOwnersCannotFollowOrCancelARunningTask(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	svc, srv := serveTestService(t, func(c *Config) { c.Auth, c.AuthJWTSecret = "jwt", secret })
	release := make(chan struct{})
	AddTool(svc, Tool{Name: "wait"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		select {
		case <-release:
			return TextResult("released"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	defer close(release)
	alice := a2aClient(t, srv.URL, callerToken(t, secret, "alice"))
	bob := a2aClient(t, srv.URL, callerToken(t, secret, "bob"))
	msg := a2atest.Message("wait", nil)
	msg.Config = &a2a.MessageSendConfig{Blocking: new(bool)}
	res, err := alice.SendMessage(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	for ev, err := range bob.ResubscribeToTask(context.Background(), &a2a.TaskIDParams{ID: id}) {
		if err == nil {
			t.Errorf("bob follows alice's task: got %T", ev)
		} else if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("bob resubscribing: err = %v, want task not found", err)
		}
		break
	}
	if _, err := bob.CancelTask(context.Background(), &a2a.TaskIDParams{ID: id}); err == nil {
		t.Error("bob canceled alice's task")
	}
	if task, err := alice.GetTask(context.Background(), &a2a.TaskQueryParams{ID: id}); err != nil || task.Status.State.Terminal() {
		t.Errorf("alice's task after bob's attempts: %v %v", task, err)
	}
	if task, err := alice.CancelTask(context.Background(), &a2a.TaskIDParams{ID: id}); err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Errorf("alice cancels her task: %v %v", task, err)
	}
}

func TestA2AFilePartsFillItemsAndPlainContent(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	type embed struct {
		Name        string      `json:"name"`
		Content     FileContent `json:"content,omitempty"`
		Description string      `json:"description,omitempty"`
	}
	AddTool(svc, Tool{Name: "compose"}, func(ctx context.Context, call *Call, in struct {
		Markdown string  `json:"markdown"`
		Embeds   []embed `json:"embeds,omitempty"`
	}) (*Result, error) {
		var got []string
		for _, e := range in.Embeds {
			f, err := call.ResolveFile(ctx, e.Name, string(e.Content))
			if err != nil {
				return nil, err
			}
			got = append(got, f.Name+"="+string(readFile(t, f.Path)))
		}
		return TextResult(in.Markdown + " " + strings.Join(got, ",")), nil
	})
	AddTool(svc, Tool{Name: "raw"}, func(ctx context.Context, call *Call, in struct {
		Source FileContent `json:"source"`
	}) (*Result, error) {
		f, err := call.ResolveFile(ctx, "", string(in.Source))
		if err != nil {
			return nil, err
		}
		return TextResult(f.Name + "=" + string(readFile(t, f.Path))), nil
	})
	c := a2aClient(t, srv.URL, "")

	task := a2atest.Send(t, c, a2atest.Message("compose", map[string]any{"markdown": "# Hi"},
		a2atest.BytesPart("a.txt", "text/plain", []byte("one")), a2atest.BytesPart("b.txt", "text/plain", []byte("two"))))
	if got := a2atest.Text(task.Status.Message); got != "# Hi a.txt=one,b.txt=two" {
		t.Errorf("compose with two file parts: %s %q, want one embed per file part, in order, named", task.Status.State, got)
	}
	task = a2atest.Send(t, c, a2atest.Message("raw", nil, a2atest.BytesPart("über notes.txt", "text/plain", []byte("plain"))))
	if got := a2atest.Text(task.Status.Message); got != "über notes.txt=plain" {
		t.Errorf("a FileContent parameter: %s %q, want the name carried in the data URI", task.Status.State, got)
	}

	// A FileAttachment is published as a URI string (SEP-2631 §5), but a
	// file part still fills it as the object {name, content}: the part's
	// name wins over the last segment of its URI.
	AddTool(svc, Tool{Name: "named"}, func(ctx context.Context, call *Call, in struct {
		Source FileAttachment `json:"source"`
	}) (*Result, error) {
		f, err := call.ResolveFileAttachment(ctx, in.Source)
		if err != nil {
			return nil, err
		}
		return TextResult(f.Name + "=" + string(readFile(t, f.Path))), nil
	})
	code, up, _ := upload(t, srv.URL, "", "staged.txt", []byte("staged"))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d", code)
	}
	task = a2atest.Send(t, c, a2atest.Message("named", nil, a2atest.URIPart("renamed.txt", up.URL)))
	if got := a2atest.Text(task.Status.Message); got != "renamed.txt=staged" {
		t.Errorf("a URI part for a FileAttachment: %s %q, want the part's name", task.Status.State, got)
	}
}

// TestA2AStreamEmbedsWhatA2AGoReads: a 60 KiB output (under the default
// AGENT_EMBED_MAX_BYTES) embedded as bytes would make one SSE line over the
// 64 KiB a2a-go's own stream reader takes ("token too long"). Streamed, it
// comes by URL alone, and a small file still comes with its bytes; a
// blocking message/send keeps embedding it.
func TestA2AStreamEmbedsWhatA2AGoReads(t *testing.T) {
	svc, srv := serveTestService(t, func(c *Config) { c.EmbedMaxBytes = 64 << 10 })
	big := bytes.Repeat([]byte("stream me "), 6<<10) // 60 KiB
	AddTool(svc, Tool{Name: "produce"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		return call.FileResponse(ctx, OutputBytes("big.bin", big), OutputBytes("small.txt", []byte("small")))
	})
	c := a2aClient(t, srv.URL, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	parts := map[string][]string{} // artifact name → kinds of its file parts
	var final *a2a.TaskStatusUpdateEvent
	for ev, err := range c.SendStreamingMessage(ctx, a2atest.Message("produce", nil)) {
		if err != nil {
			t.Fatalf("a2a-go's stream reader: %v", err)
		}
		switch ev := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			for _, p := range ev.Artifact.Parts {
				if fp, ok := p.(a2a.FilePart); ok {
					switch f := fp.File.(type) {
					case a2a.FileURI:
						parts[ev.Artifact.Name] = append(parts[ev.Artifact.Name], "uri")
						if _, got := download(t, f.URI); !bytes.Equal(got, big) && ev.Artifact.Name == "big.bin" {
							t.Errorf("downloaded %d bytes of big.bin, want %d", len(got), len(big))
						}
					case a2a.FileBytes:
						parts[ev.Artifact.Name] = append(parts[ev.Artifact.Name], "bytes")
					}
				}
			}
		case *a2a.TaskStatusUpdateEvent:
			if ev.Final {
				final = ev
			}
		}
	}
	if final == nil || final.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the stream ended without a completed status (final %+v)", final)
	}
	if got := strings.Join(parts["big.bin"], ","); got != "uri" {
		t.Errorf("big.bin streamed as %q parts; want its URL alone", got)
	}
	if got := strings.Join(parts["small.txt"], ","); got != "uri,bytes" {
		t.Errorf("small.txt streamed as %q parts; want its URL and its bytes", got)
	}
	task := a2atest.Send(t, c, a2atest.Message("produce", nil))
	if _, inline := fileParts(t, task, "big.bin"); inline == nil {
		t.Error("a blocking message/send no longer embeds a file under AGENT_EMBED_MAX_BYTES")
	}
}

// pairInput is the input of a tool with two file parameters, a list and a
// plain argument.
type pairInput struct {
	Left   FileAttachment   `json:"left"`
	Right  FileAttachment   `json:"right"`
	Extras []FileAttachment `json:"extras,omitempty"`
	Sep    string           `json:"sep"`
}

// addPairTool adds "pair", which says which file came in which parameter.
func addPairTool(svc *Service) {
	AddTool(svc, Tool{Name: "pair", Description: "says which file filled which parameter"}, func(ctx context.Context, call *Call, in pairInput) (*Result, error) {
		var got []string
		for _, p := range []struct {
			param string
			att   FileAttachment
		}{{"left", in.Left}, {"right", in.Right}} {
			f, err := call.ResolveFileAttachment(ctx, p.att)
			if err != nil {
				return nil, err
			}
			b, err := os.ReadFile(f.Path)
			if err != nil {
				return nil, err
			}
			got = append(got, p.param+"="+f.Name+":"+string(b))
		}
		for _, a := range in.Extras {
			f, err := call.ResolveFileAttachment(ctx, a)
			if err != nil {
				return nil, err
			}
			got = append(got, "extras="+f.Name)
		}
		return TextResult(strings.Join(got, in.Sep)), nil
	})
}

// TestA2ACardPublishesSkillSchemas: the card carries the skill schemas
// extension, a2a-go's resolver parses it, and each skill's schema is the
// input schema its tool publishes over MCP, file parameters marked.
func TestA2ACardPublishesSkillSchemas(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	addEchoTool(svc)
	addPairTool(svc)
	_, card := a2atest.Connect(t, srv.URL, "")
	var params map[string]any
	for _, e := range card.Capabilities.Extensions {
		if e.URI == transfer.A2ASkillSchemasExtension {
			params = e.Params
		}
	}
	if params == nil {
		t.Fatalf("no extension %s in the card's capabilities %+v", transfer.A2ASkillSchemasExtension, card.Capabilities)
	}
	for _, def := range svc.Tools() {
		want, _ := json.Marshal(def.InputSchema)
		got, _ := json.Marshal(params[def.Name])
		var w, g any
		json.Unmarshal(want, &w)
		json.Unmarshal(got, &g)
		if !reflect.DeepEqual(w, g) {
			t.Errorf("schema of skill %s in the card:\n%s\nwant the tool's input schema:\n%s", def.Name, got, want)
		}
	}
	pair, _ := params["pair"].(map[string]any)
	props, _ := pair["properties"].(map[string]any)
	left, _ := props["left"].(map[string]any)
	extras, _ := props["extras"].(map[string]any)
	items, _ := extras["items"].(map[string]any)
	if left[transfer.KeywordFile] != true || left[transfer.KeywordMCPFile] == nil || extras[transfer.KeywordFile] != true || items[transfer.KeywordMCPFile] == nil {
		t.Errorf("file parameters not marked in the card's schema of pair: left %v, extras %v", left, extras)
	}
	if sep, _ := props["sep"].(map[string]any); sep["type"] != "string" || sep[transfer.KeywordFile] != nil {
		t.Errorf("sep in the card's schema: %v; want a plain string", sep)
	}
	resp, err := http.Get(srv.URL + transfer.AgentCardPath)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	schemas, _ := json.Marshal(params)
	pairSchema, _ := json.Marshal(params["pair"])
	t.Logf("card of 2 skills: %d bytes, %d of them the schemas; pair's: %s", len(raw), len(schemas), pairSchema)
	if len(raw) > 16<<10 {
		t.Errorf("the card of two skills is %d bytes; keep it small", len(raw))
	}
}

// TestA2AFilePartsFillTheParameterTheyName: a file part whose metadata
// names a file parameter fills that one, inline or by URI, a list gets
// its files in order; a part without one fills the first; an unknown name
// fails the task saying which parameters there are.
func TestA2AFilePartsFillTheParameterTheyName(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	addPairTool(svc)
	c := a2aClient(t, srv.URL, "")
	named := func(p a2a.FilePart, param string) a2a.FilePart {
		p.Metadata = map[string]any{transfer.A2AKeyFileParam: param}
		return p
	}
	task := a2atest.Send(t, c, a2atest.Message("pair", map[string]any{"sep": " "},
		named(a2atest.BytesPart("r.txt", "text/plain", []byte("R")), "right"),
		named(a2atest.BytesPart("x1.txt", "text/plain", []byte("X")), "extras"),
		a2atest.BytesPart("l.txt", "text/plain", []byte("L")),
		named(a2atest.BytesPart("x2.txt", "text/plain", []byte("Y")), "extras")))
	if got := a2atest.Text(task.Status.Message); got != "left=l.txt:L right=r.txt:R extras=x1.txt extras=x2.txt" {
		t.Errorf("pair: %s %q; want each file in the parameter its part names", task.Status.State, got)
	}
	task = a2atest.Send(t, c, a2atest.Message("pair", nil,
		named(a2atest.BytesPart("l.txt", "text/plain", []byte("L")), "left"),
		named(a2atest.BytesPart("r.txt", "text/plain", []byte("R")), "middle")))
	a2atest.Failed(t, task, `no file parameter "middle"`)
	task = a2atest.Send(t, c, a2atest.Message("pair", nil, a2atest.BytesPart("l.txt", "text/plain", []byte("L"))))
	a2atest.Failed(t, task, `needs a file for "right"`)
}
