// Package a2atest holds what the A2A tests of agentcore and the example
// agents share: connecting the independent a2a-go client to an agent on a
// real port, and building messages that call a skill with file parts.
package a2atest

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
)

// Connect reads the agent card at base and connects the a2a-go client to
// the endpoint the card names; a non-empty token goes out as a bearer token
// on every request. The client is destroyed when the test ends.
func Connect(t testing.TB, base, token string) (*a2aclient.Client, *a2a.AgentCard) {
	t.Helper()
	hc := &http.Client{Timeout: time.Minute}
	if token != "" {
		hc.Transport = bearer(token)
	}
	card, err := agentcard.NewResolver(hc).Resolve(context.Background(), base)
	if err != nil {
		t.Fatalf("resolve the agent card of %s: %v", base, err)
	}
	c, err := a2aclient.NewFromCard(context.Background(), card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatalf("a2a client for %s: %v", base, err)
	}
	t.Cleanup(func() { c.Destroy() })
	return c, card
}

// bearer sends a bearer token with every request.
type bearer string

// RoundTrip sends r with the token.
func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// Message is a user message calling skill with args: a data part
// {"skill", "arguments"} followed by parts.
func Message(skill string, args map[string]any, parts ...a2a.Part) *a2a.MessageSendParams {
	all := append(a2a.ContentParts{a2a.DataPart{Data: map[string]any{"skill": skill, "arguments": args}}}, parts...)
	return &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, all...)}
}

// BytesPart is a file part carrying data inline.
func BytesPart(name, mimeType string, data []byte) a2a.FilePart {
	return a2a.FilePart{File: a2a.FileBytes{FileMeta: a2a.FileMeta{Name: name, MimeType: mimeType}, Bytes: base64.StdEncoding.EncodeToString(data)}}
}

// URIPart is a file part naming a URI.
func URIPart(name, uri string) a2a.FilePart {
	return a2a.FilePart{File: a2a.FileURI{FileMeta: a2a.FileMeta{Name: name}, URI: uri}}
}

// Send sends msg with message/send and returns the task it ended as.
func Send(t testing.TB, c *a2aclient.Client, msg *a2a.MessageSendParams) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(context.Background(), msg)
	if err != nil {
		t.Fatalf("message/send: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("message/send answered %T, want a task", res)
	}
	return task
}

// Text joins the text parts of m ("" for nil).
func Text(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var out []string
	for _, p := range m.Parts {
		if tp, ok := p.(a2a.TextPart); ok {
			out = append(out, tp.Text)
		}
	}
	return strings.Join(out, "\n")
}

// Failed checks that task failed with a status message containing want.
func Failed(t testing.TB, task *a2a.Task, want string) {
	t.Helper()
	if task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("task %s (%s), want failed with %q", task.Status.State, Text(task.Status.Message), want)
	}
	if got := Text(task.Status.Message); !strings.Contains(got, want) {
		t.Errorf("failure reason %q does not say %q", got, want)
	}
}
