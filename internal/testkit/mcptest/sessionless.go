package mcptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Revision is the current MCP revision, the first without sessions
// (SEP-2575): no initialize, no Mcp-Session-Id; each request names the
// revision in the MCP-Protocol-Version header and, with the client's
// identity and capabilities, in its _meta.
const Revision = "2026-07-28"

// The _meta keys of a 2026-07-28 request and of the agent's owner handle.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	// MetaOwner is the agent's owner handle (transfer.MetaOwner), spelled
	// out here so that tests check the contract, not the code.
	MetaOwner = "agentura/owner"
)

// Sessionless is a client of MCP 2026-07-28 written from the
// specification's shapes: raw JSON-RPC over HTTP, one POST per request,
// the answer read as JSON or as an SSE stream. It speaks no other revision
// and keeps no session.
type Sessionless struct {
	// URL is the MCP endpoint (an agent's URL + "/mcp").
	URL string
	// Header is added to every request (e.g. Authorization).
	Header http.Header
	// Owner, when set, is sent as the owner handle in each request's _meta;
	// KeepOwner makes the client take it from each result that carries one.
	Owner     string
	KeepOwner bool
	// Extensions, when set, are the extensions the client declares in its
	// capabilities (e.g. {"io.modelcontextprotocol/tasks": {}}).
	Extensions map[string]any
	// Capabilities, when set, are more capabilities the client declares
	// beside its extensions (e.g. the file-transfer draft's "files").
	Capabilities map[string]any

	mu   sync.Mutex
	next atomic.Int64
}

// NewSessionless returns a client of mcpURL that keeps the owner handle the
// agent returns, as a host carries a session.
func NewSessionless(mcpURL string) *Sessionless {
	return &Sessionless{URL: mcpURL, KeepOwner: true}
}

// Message is a JSON-RPC message the agent sent: a notification (Method
// set) or the response (ID set).
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// Answer is what one request got: the HTTP status, the notifications that
// came before the response, and the response.
type Answer struct {
	Status        int
	Notifications []Message
	Response      Message
}

// Meta is the _meta of a 2026-07-28 request: the revision, the client and
// its capabilities, and the owner handle when the client has one.
func (c *Sessionless) Meta() map[string]any {
	caps := maps.Clone(c.Capabilities)
	if caps == nil {
		caps = map[string]any{}
	}
	if c.Extensions != nil {
		caps["extensions"] = c.Extensions
	}
	m := map[string]any{
		MetaProtocolVersion:    Revision,
		MetaClientInfo:         map[string]any{"name": "agentura-mcptest-sessionless", "version": "1.0.0"},
		MetaClientCapabilities: caps,
	}
	c.mu.Lock()
	if c.Owner != "" {
		m[MetaOwner] = c.Owner
	}
	c.mu.Unlock()
	return m
}

// Send posts the request method with params, adding the request _meta
// (Meta) to what params's own "_meta" holds, and reads the whole answer; a
// notification seen on the way is also given to each (which may be nil).
// An HTTP or decoding failure is an error; a JSON-RPC error is in the
// answer's Response.
func (c *Sessionless) Send(ctx context.Context, method string, params map[string]any, each func(Message)) (*Answer, error) {
	resp, err := c.post(ctx, method, params)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	ans := &Answer{Status: resp.StatusCode}
	err = readMessages(resp, func(m Message) bool {
		if m.Method != "" && len(m.ID) == 0 {
			ans.Notifications = append(ans.Notifications, m)
			if each != nil {
				each(m)
			}
			return true
		}
		ans.Response = m
		return false
	})
	if err != nil {
		return ans, fmt.Errorf("%s: %w", method, err)
	}
	if ans.Response.Error == nil && c.KeepOwner {
		var res struct {
			Meta map[string]any `json:"_meta"`
		}
		if json.Unmarshal(ans.Response.Result, &res) == nil {
			if h, ok := res.Meta[MetaOwner].(string); ok && h != "" {
				c.mu.Lock()
				c.Owner = h
				c.mu.Unlock()
			}
		}
	}
	return ans, nil
}

// Discovered is the answer to server/discover (the fields tests read).
type Discovered struct {
	SupportedVersions []string `json:"supportedVersions"`
	Capabilities      struct {
		Tools     *ListChanged `json:"tools"`
		Resources *ListChanged `json:"resources"`
	} `json:"capabilities"`
	Instructions string `json:"instructions"`
}

// ListChanged is a capability whose list may change.
type ListChanged struct {
	ListChanged bool `json:"listChanged"`
}

// ToolList is the answer to tools/list (the fields tests read), with the
// cache hints of 2026-07-28.
type ToolList struct {
	Tools []struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"inputSchema"`
	} `json:"tools"`
	TTLMs      *int   `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
}

// Call is [Sessionless.Send] for a test: an HTTP failure or a JSON-RPC
// error fails it; the result is decoded into a T.
func Call[T any](t testing.TB, c *Sessionless, method string, params map[string]any) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	ans, err := c.Send(ctx, method, params, nil)
	if err != nil {
		t.Fatalf("%s over %s: %v", method, Revision, err)
	}
	if ans.Response.Error != nil {
		t.Fatalf("%s over %s: HTTP %d, %v", method, Revision, ans.Status, ans.Response.Error)
	}
	var v T
	if err := json.Unmarshal(ans.Response.Result, &v); err != nil {
		t.Fatalf("%s over %s: decode %s: %v", method, Revision, ans.Response.Result, err)
	}
	return v
}

// post sends one JSON-RPC request.
func (c *Sessionless) post(ctx context.Context, method string, params map[string]any) (*http.Response, error) {
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	meta := c.Meta()
	if own, ok := params["_meta"].(map[string]any); ok {
		for k, v := range own {
			meta[k] = v
		}
	}
	p["_meta"] = meta
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next.Add(1), "method": method, "params": p})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", Revision)
	// The standard headers of 2026-07-28 (SEP-2243) repeat the method and,
	// for a call of a named thing, its name.
	req.Header.Set("Mcp-Method", method)
	switch method {
	case "tools/call", "prompts/get":
		req.Header.Set("Mcp-Name", fmt.Sprint(params["name"]))
	case "resources/read":
		req.Header.Set("Mcp-Name", fmt.Sprint(params["uri"]))
	case "tasks/get", "tasks/cancel", "tasks/update":
		// The Tasks extension names the task (a balancer's routing key).
		req.Header.Set("Mcp-Name", fmt.Sprint(params["taskId"]))
	}
	return http.DefaultClient.Do(req)
}

// readMessages reads the JSON-RPC messages of an answer, a JSON body or an
// SSE stream, giving each to f until f returns false or the body ends.
func readMessages(resp *http.Response, f func(Message) bool) error {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		var m Message
		if err := json.Unmarshal(body, &m); err != nil {
			return fmt.Errorf("HTTP %d, %s: not a JSON-RPC message: %.300s", resp.StatusCode, ct, body)
		}
		f(m)
		return nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			data.WriteString(strings.TrimPrefix(v, " "))
			continue
		}
		if line != "" || data.Len() == 0 {
			continue
		}
		var m Message
		if err := json.Unmarshal([]byte(data.String()), &m); err != nil {
			return fmt.Errorf("SSE event is not a JSON-RPC message: %.300s", data.String())
		}
		data.Reset()
		if !f(m) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// Listener is an open subscriptions/listen stream.
type Listener struct {
	// Notifications carries what the stream delivers, the
	// notifications/subscriptions/acknowledged first; it is closed when
	// the stream ends.
	Notifications <-chan Message
	cancel        context.CancelFunc
}

// Wait waits for a notification of method on the stream, skipping others;
// the stream ending first, or CallTimeout passing, fails the test.
func (l *Listener) Wait(t testing.TB, method string) Message {
	t.Helper()
	timeout := time.After(CallTimeout)
	for {
		select {
		case m, ok := <-l.Notifications:
			if !ok {
				t.Fatalf("the listen stream ended before %s", method)
			}
			if m.Method == method {
				return m
			}
		case <-timeout:
			t.Fatalf("no %s within %v", method, CallTimeout)
		}
	}
}

// Close ends the stream (dropping the request is the cancellation).
func (l *Listener) Close() { l.cancel() }

// Listen opens a subscriptions/listen stream asking for the notifications
// named in filter (e.g. {"toolsListChanged": true}); the test ends it.
func (c *Sessionless) Listen(t testing.TB, filter map[string]any) *Listener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.post(ctx, "subscriptions/listen", map[string]any{"notifications": filter})
	if err != nil {
		cancel()
		t.Fatalf("subscriptions/listen: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("subscriptions/listen: HTTP %d: %s", resp.StatusCode, b)
	}
	ch := make(chan Message, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		defer resp.Body.Close()
		readMessages(resp, func(m Message) bool {
			select {
			case ch <- m:
			case <-ctx.Done():
				return false
			}
			return true
		})
	}()
	l := &Listener{Notifications: ch, cancel: cancel}
	t.Cleanup(func() { cancel(); <-done })
	return l
}
