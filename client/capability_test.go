package client_test

// The host side declares the draft MCP file contract's files capability
// (SEP-2631 at c3cf0eba, §2) on every revision: in initialize's
// capabilities on 2025-11-25 (over streamable HTTP and over any other
// transport), in each request's _meta on 2026-07-28 (server/discover
// included). A client that does not register the file methods declares
// nothing.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
)

// wantFiles is capabilities.files as §2 spells it.
const wantFiles = `{"upload":true,"download":true,"transports":["https"]}`

// declared records, per method, the files capability a server saw (raw
// JSON, "" when none): initialize's params.capabilities.files, else the
// files of the client capabilities in the request's _meta.
type declared struct {
	mu   sync.Mutex
	seen [][2]string
}

func (d *declared) record(body []byte) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
			Meta         map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method == "" || msg.Method == "notifications/initialized" {
		return
	}
	files := msg.Params.Capabilities["files"]
	if files == nil {
		var caps map[string]json.RawMessage
		json.Unmarshal(msg.Params.Meta[mcp.MetaKeyClientCapabilities], &caps)
		files = caps["files"]
	}
	var compact bytes.Buffer
	json.Compact(&compact, files)
	d.mu.Lock()
	d.seen = append(d.seen, [2]string{msg.Method, compact.String()})
	d.mu.Unlock()
}

func (d *declared) all() [][2]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.seen)
}

func filesServer(revision string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "files-cap", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{revision}})
	s.AddTool(&mcp.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	return s
}

func TestHostDeclaresFiles(t *testing.T) {
	for _, tc := range []struct {
		name      string
		revision  string
		stateless bool
		register  bool
		want      [][2]string
	}{
		// The client tries server/discover first, declaring files in its _meta.
		{"2025-11-25: in initialize", "2025-11-25", false, true, [][2]string{{"server/discover", wantFiles}, {"initialize", wantFiles}, {"tools/list", ""}}},
		{"2026-07-28: in every request's _meta", "2026-07-28", true, true, [][2]string{{"server/discover", wantFiles}, {"tools/list", wantFiles}}},
		{"without the file methods: nothing", "2025-11-25", false, false, [][2]string{{"server/discover", ""}, {"initialize", ""}, {"tools/list", ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			var d declared
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return filesServer(tc.revision) }, &mcp.StreamableHTTPOptions{Stateless: tc.stateless})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					body, _ := io.ReadAll(r.Body)
					d.record(body)
					r.Body = io.NopCloser(bytes.NewReader(body))
				}
				h.ServeHTTP(w, r)
			}))
			defer ts.Close()
			c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
			if tc.register {
				client.RegisterFileMethods(c)
			}
			tr := &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: client.WithTasks(nil), DisableStandaloneSSE: true}
			s, err := c.Connect(ctx, client.LimitMessages(tr, 0), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if got := d.all(); !slices.Equal(got, tc.want) {
				t.Errorf("the server saw %q, want %q", got, tc.want)
			}
		})
	}
}

// Over a transport other than streamable HTTP (stdio, here one in
// memory), ReadableTransport's connection declares it in initialize.
func TestHostDeclaresFilesOverOtherTransports(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var d declared
	ct, st := mcp.NewInMemoryTransports()
	ss, err := filesServer("2025-11-25").Connect(ctx, recordingTransport{st, &d}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	client.RegisterFileMethods(c)
	s, err := c.Connect(ctx, client.ReadableTransport(ct), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := d.all(); len(got) == 0 || got[0] != [2]string{"initialize", wantFiles} {
		t.Errorf("the server saw %q, want an initialize declaring %s", got, wantFiles)
	}
}

// recordingTransport records each request its server reads.
type recordingTransport struct {
	mcp.Transport
	d *declared
}

func (r recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	return recordingConn{c, r.d}, err
}

type recordingConn struct {
	mcp.Connection
	d *declared
}

func (r recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := r.Connection.Read(ctx)
	if req, ok := m.(*jsonrpc.Request); ok {
		b, _ := json.Marshal(map[string]any{"method": req.Method, "params": req.Params})
		r.d.record(b)
	}
	return m, err
}
