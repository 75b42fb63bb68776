package client_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
)

// rawServer is an MCP server written as JSON-RPC by hand, so that it can
// answer what the go-sdk's server cannot write: tool results whose content
// holds the draft's {"type": "file"} blocks and a block type no revision
// has. Its files are bytes by id, resolved by files/authorizeDownload.
type rawServer struct {
	ts        *httptest.Server
	files     map[string][]byte
	mu        sync.Mutex
	authorize []string // the URIs files/authorizeDownload was asked for
}

func (r *rawServer) uri(id string) string { return "mcp-file://raw.example/" + id }

func (r *rawServer) fileValue(id, name string) map[string]any {
	b := r.files[id]
	sum := sha256.Sum256(b)
	return map[string]any{"uri": r.uri(id), "name": name, "mimeType": "text/plain", "size": len(b),
		"digest": map[string]any{"algorithm": "sha-256", "value": base64.RawURLEncoding.EncodeToString(sum[:])}}
}

// result is the tools/call answer: a FileValue in each place the draft and
// the reference host look — wrapped in a file block, written flat into
// one, in another block's _meta, in the structured content — and a block
// of an unknown type.
func (r *rawServer) result() map[string]any {
	return map[string]any{
		"content": []any{
			map[string]any{"type": "text", "text": "made four files", "_meta": map[string]any{"attachment": r.fileValue("c", "c.txt")}},
			map[string]any{"type": "file", "file": r.fileValue("a", "a.txt")},
			mergeMaps(map[string]any{"type": "file"}, r.fileValue("b", "b.txt")),
			map[string]any{"type": "hologram", "frames": 3},
		},
		"structuredContent": map[string]any{"summary": map[string]any{"report": r.fileValue("d", "d.txt")}},
	}
}

func mergeMaps(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

func newRawServer(t *testing.T) *rawServer {
	r := &rawServer{files: map[string][]byte{}}
	for _, id := range []string{"a", "b", "c", "d"} {
		r.files[id] = []byte(strings.Repeat("file "+id+"\n", 1000))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
				URI  string `json:"uri"`
			} `json:"params"`
		}
		if err := json.NewDecoder(req.Body).Decode(&msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if msg.ID == nil {
			w.WriteHeader(http.StatusAccepted) // a notification
			return
		}
		var result any
		var rpcErr map[string]any
		sse := false
		switch msg.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "raw", "version": "1"}}
		case "tools/list":
			var tools []any
			for _, n := range []string{"make_json", "make_sse"} {
				tools = append(tools, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
			}
			result = map[string]any{"tools": tools}
		case "tools/call":
			result, sse = r.result(), msg.Params.Name == "make_sse"
		case "files/authorizeDownload":
			r.mu.Lock()
			r.authorize = append(r.authorize, msg.Params.URI)
			r.mu.Unlock()
			id, ok := strings.CutPrefix(msg.Params.URI, r.uri(""))
			if _, have := r.files[id]; !ok || !have {
				rpcErr = map[string]any{"code": -32602, "message": "unknown file", "data": map[string]any{"reason": "unknownFile"}}
				break
			}
			result = map[string]any{"file": r.fileValue(id, id+".txt"),
				"download": map[string]any{"transport": "https", "method": "GET", "url": r.ts.URL + "/blob/" + id}}
		default:
			rpcErr = map[string]any{"code": -32601, "message": "method not found: " + msg.Method}
		}
		answer := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
		if rpcErr != nil {
			answer["error"] = rpcErr
		} else {
			answer["result"] = result
		}
		b, _ := json.Marshal(answer)
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			// After a comment, an event with an id whose JSON spans many
			// data lines.
			b, _ = json.MarshalIndent(answer, "", " ")
			fmt.Fprintf(w, ": warming up\n\nevent: message\nid: 7\ndata: %s\n\n", strings.ReplaceAll(string(b), "\n", "\ndata: "))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	mux.HandleFunc("GET /blob/{id}", func(w http.ResponseWriter, req *http.Request) {
		b, ok := r.files[req.PathValue("id")]
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Write(b)
	})
	r.ts = httptest.NewServer(mux)
	t.Cleanup(r.ts.Close)
	return r
}

// connect opens a session with the raw server over tr, the middleware
// attached with a registry of its own; both close when the test ends.
func (r *rawServer) connect(t *testing.T, tr mcp.Transport) (*client.Registry, *mcp.ClientSession, error) {
	reg, err := client.NewRegistry("", nil)
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { reg.Close() })
	mw, err := client.New(client.Config{Registry: reg, BaseURL: r.ts.URL})
	if err != nil {
		return nil, nil, err
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "client-test", Version: "0"}, nil)
	mw.Attach(c)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { cs.Close() })
	return reg, cs, nil
}

// A result whose content holds the draft's file blocks and a block type
// the go-sdk does not know still reaches the host, over a JSON answer and
// over an SSE stream: each file block becomes a file the middleware
// resolves with files/authorizeDownload, as do the FileValues in another
// block's _meta and in the structured content; the unknown block becomes
// a text saying what it was. Every file lands in the registry with the
// bytes its digest names, and the model sees no file URI.
func TestFileBlocksAndUnknownContentReachTheHost(t *testing.T) {
	for _, tool := range []string{"make_json", "make_sse"} {
		t.Run(tool, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			r := newRawServer(t)
			reg, cs, err := r.connect(t, &mcp.StreamableClientTransport{Endpoint: r.ts.URL + "/mcp", HTTPClient: client.WithTasks(nil), DisableStandaloneSSE: true})
			if err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool})
			if err != nil {
				t.Fatalf("the call: %v", err)
			}
			names := client.ProducedNames(res)
			if failed := client.FailedFiles(res); len(failed) > 0 {
				t.Fatalf("files not fetched: %v", failed)
			}
			slices.Sort(names)
			if want := []string{"a.txt", "b.txt", "c.txt", "d.txt"}; !slices.Equal(names, want) {
				t.Fatalf("produced %v, want %v", names, want)
			}
			for _, n := range names {
				e, err := reg.Lookup(n)
				if err != nil {
					t.Fatal(err)
				}
				want := r.files[strings.TrimSuffix(n, ".txt")]
				if got := fileSHA(t, e.Path); got != sha(want) {
					t.Errorf("%s: sha256 %s, want %s", n, got, sha(want))
				}
			}
			r.mu.Lock()
			asked := slices.Sorted(slices.Values(r.authorize))
			r.mu.Unlock()
			if want := []string{r.uri("a"), r.uri("b"), r.uri("c"), r.uri("d")}; !slices.Equal(asked, want) {
				t.Errorf("files/authorizeDownload asked for %v, want %v once each", asked, want)
			}
			text := modelText(res)
			if !strings.Contains(text, `"hologram"`) || !strings.Contains(text, "made four files") {
				t.Errorf("the model's text: %q; want the tool's text and a word on the hologram block", text)
			}
			b, _ := json.Marshal(res)
			if strings.Contains(string(b), "mcp-file://") {
				t.Errorf("the rewritten result still names a file URI: %s", b)
			}
		})
	}
}

// pipeTransport carries JSON-RPC messages to the raw server one POST each,
// as a transport other than streamable HTTP would (a stdio server, say).
type pipeTransport struct{ url string }

func (p pipeTransport) Connect(context.Context) (mcp.Connection, error) {
	return &pipeConn{url: p.url, in: make(chan jsonrpc.Message, 8), done: make(chan struct{})}, nil
}

type pipeConn struct {
	url  string
	in   chan jsonrpc.Message
	done chan struct{}
	once sync.Once
}

func (c *pipeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	resp, err := http.Post(c.url, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusAccepted {
		return nil // a notification
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	answer, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return err
	}
	select {
	case c.in <- answer:
		return nil
	case <-c.done:
		return io.ErrClosedPipe
	}
}

func (c *pipeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *pipeConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

func (c *pipeConn) SessionID() string { return "" }

// Over a transport other than streamable HTTP, ReadableTransport does what
// WithTasks' HTTP client does: the result with file blocks and an unknown
// block arrives, its files fetched; without it the go-sdk refuses it.
func TestReadableTransportOverAPipe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	r := newRawServer(t)
	for _, wrap := range []bool{false, true} {
		var tr mcp.Transport = pipeTransport{r.ts.URL + "/mcp"}
		if wrap {
			tr = client.ReadableTransport(tr)
		}
		_, cs, err := r.connect(t, tr)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "make_json"})
		switch {
		case !wrap && (err == nil || !strings.Contains(err.Error(), `content type "file"`)):
			t.Errorf("without ReadableTransport: %v; want the go-sdk's refusal of the file block", err)
		case wrap && err != nil:
			t.Errorf("with ReadableTransport: %v", err)
		case wrap && len(client.ProducedNames(res)) != 4:
			t.Errorf("with ReadableTransport: produced %v, failed %v; want 4 files", client.ProducedNames(res), client.FailedFiles(res))
		}
	}
}
