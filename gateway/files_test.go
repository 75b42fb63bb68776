package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/gateway"
)

// fileTools gives a fake agent a tool that takes a file ("take", which
// records what arrived) and one that produces "cities.csv" with the bytes
// embedded (no download needed).
func fileTools(f *fakeAgent) *[]string {
	var mu sync.Mutex
	got := &[]string{}
	f.server.AddTool(&mcp.Tool{Name: "take", Description: "takes a file", InputSchema: map[string]any{
		"type":       "object",
		"properties": map[string]any{"source": map[string]any{"type": "string", "x-file": true, "description": "the file"}},
	}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		*got = append(*got, string(req.Params.Arguments))
		mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "taken"}}}, nil
	})
	f.server.AddTool(&mcp.Tool{Name: "produce", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		u := "http://" + f.addr + "/files/0190a0b2-0000-7000-8000-000000000001/cities.csv?token=T"
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.ResourceLink{URI: u, Name: "cities.csv", MIMEType: "text/csv"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: u, MIMEType: "text/csv", Text: "city\nParis\n"}},
		}}, nil
	})
	return got
}

// savedAs matches the line of a saved file; its group is the path.
var savedAs = regexp.MustCompile(`Tool produced: (.+) \([^()]*\) — saved as (.+)`)

// A file is saved under the name the model knows it by, in a folder of the
// gateway's run under --out, and the path the model reads is absolute: the
// same in the call's line and in list_files, whatever earlier runs left in
// --out and whichever folder the host started the gateway in. Two runs on
// the same --out each name their first cities.csv "cities.csv".
func TestSavedUnderTheConversationsNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a := newFakeAgent(t, "maker", true)
	fileTools(a)
	a.start()
	out := t.TempDir()
	// An earlier session's file of the same name, at the top of --out.
	if err := os.WriteFile(filepath.Join(out, "cities.csv"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	folders := map[string]bool{}
	for run := 1; run <= 2; run++ {
		g, err := gateway.New(ctx, gateway.Config{Agents: []gateway.Agent{{URL: a.url()}}, Roots: []string{t.TempDir()}, Out: out})
		if err != nil {
			t.Fatal(err)
		}
		h := connectHost(t, ctx, g)
		for i, want := range []string{"cities.csv", "cities (2).csv"} {
			res := h.call(t, ctx, "produce")
			m := savedAs.FindStringSubmatch(resultText(res))
			if res.IsError || m == nil {
				t.Fatalf("run %d, call %d: %q", run, i+1, resultText(res))
			}
			name, path := m[1], m[2]
			if name != want || filepath.Base(path) != want || !filepath.IsAbs(path) || !strings.HasPrefix(path, out+string(filepath.Separator)) {
				t.Errorf("run %d: produced %q saved as %q; want %s, saved under that name in a folder of --out, absolute", run, name, path, want)
			}
			if b, err := os.ReadFile(path); err != nil || string(b) != "city\nParis\n" {
				t.Errorf("run %d: %s: %q, %v", run, path, b, err)
			}
			folders[filepath.Dir(path)] = true
			list := resultText(h.call(t, ctx, "list_files"))
			if !strings.Contains(list, want+" (") || !strings.Contains(list, "saved as "+path) {
				t.Errorf("run %d: list_files %q lacks %s saved as %s", run, list, want, path)
			}
		}
		g.Close()
	}
	if len(folders) != 2 {
		t.Errorf("the two runs saved into %v, want a folder each", folders)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "cities.csv")); string(b) != "old" {
		t.Errorf("the earlier session's cities.csv changed: %q", b)
	}
}

// A data: URI or a URL the model writes where a file name goes is refused
// by default, with a message that says what to do, and nothing reaches the
// agent; with AllowFileURIs it goes to the agent as it is. An empty name is
// refused as such.
func TestWrittenFileContentRefusedUnlessAllowed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a := newFakeAgent(t, "taker", true)
	got := fileTools(a)
	a.start()
	const dataURI = "data:text/plain;base64,aGVsbG8="
	const link = "https://example.com/report.pdf?sig=SECRET"
	for _, allow := range []bool{false, true} {
		*got = nil
		g, err := gateway.New(ctx, gateway.Config{Agents: []gateway.Agent{{URL: a.url()}}, Roots: []string{t.TempDir()}, Out: t.TempDir(), AllowFileURIs: allow})
		if err != nil {
			t.Fatal(err)
		}
		h := connectHost(t, ctx, g)
		for _, content := range []string{dataURI, link} {
			res, err := h.session.CallTool(ctx, &mcp.CallToolParams{Name: "take", Arguments: map[string]any{"source": content}})
			if err != nil {
				t.Fatal(err)
			}
			text := resultText(res)
			if allow {
				if res.IsError {
					t.Errorf("allowed %.20s: %s", content, text)
				}
				continue
			}
			if !res.IsError || !strings.Contains(text, "is written where a file name goes") || !strings.Contains(text, "--allow-file-uris") ||
				!strings.Contains(text, "Nothing was sent") || strings.Contains(text, "SECRET") {
				t.Errorf("refused %.20s: is_error %v, %q", content, res.IsError, text)
			}
		}
		if allow && (len(*got) != 2 || !strings.Contains((*got)[0], dataURI) || !strings.Contains((*got)[1], link)) {
			t.Errorf("with AllowFileURIs the agent got %q, want the URI and the URL as written", *got)
		}
		if !allow && len(*got) != 0 {
			t.Errorf("refused content reached the agent: %q", *got)
		}
		res, _ := h.session.CallTool(ctx, &mcp.CallToolParams{Name: "take", Arguments: map[string]any{"source": ""}})
		if text := resultText(res); !res.IsError || !strings.Contains(text, "no file named (the name is empty)") || strings.Contains(text, "not under the gateway's roots") {
			t.Errorf("an empty name: %q", text)
		}
		g.Close()
	}
}

// connectHost connects a go-sdk host in memory to g.
func connectHost(t *testing.T, ctx context.Context, g *gateway.Gateway) *host {
	t.Helper()
	h := &host{listChanged: make(chan struct{}, 64)}
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case h.listChanged <- struct{}{}:
			default:
			}
		},
	})
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	var err error
	if h.session, err = c.Connect(ctx, ct, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.session.Close() })
	return h
}

// A block the host could not read reaches it as a text block saying what
// it was, without the block as the agent sent it (the client keeps that
// under _meta["agentura/content"]): no base64 and no signed URL of it
// reaches the host, nor a signed URL in any other _meta.
func TestUnknownBlockNotPassedInMeta(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const (
		placeholder = `{"type":"text","text":"VIDEO-HERE"}`
		secret      = "SECRETTOKEN"
	)
	blob := strings.Repeat("QUJD", 100) // 400 characters of base64
	video := `{"type":"video","mimeType":"video/mp4","data":"` + blob + `","url":"https://cdn.example/v.mp4?token=` + secret + `"}`
	s := mcp.NewServer(&mcp.Implementation{Name: "video-agent", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "film", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "VIDEO-HERE"},
			&mcp.TextContent{Text: "a film", Meta: mcp.Meta{"poster": "https://cdn.example/p.png?token=" + secret}},
		}}, nil
	})
	sdkHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	var sent atomic.Bool
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The go-sdk writes no block of a type it does not know: put the
		// video block in place of the placeholder in the answer to
		// tools/call. (Other requests, subscriptions/listen for one, are
		// long-lived streams, not buffered.)
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !bytes.Contains(body, []byte(`"tools/call"`)) {
			sdkHandler.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		sdkHandler.ServeHTTP(rec, r)
		body = rec.Body.Bytes()
		if bytes.Contains(body, []byte(placeholder)) {
			body = bytes.Replace(body, []byte(placeholder), []byte(video), 1)
			sent.Store(true)
		}
		maps.Copy(w.Header(), rec.Header())
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(body)
	}))
	defer agent.Close()

	g, err := gateway.New(ctx, gateway.Config{Agents: []gateway.Agent{{URL: agent.URL}}, Roots: []string{t.TempDir()}, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	res, err := connectHost(t, ctx, g).session.CallTool(ctx, &mcp.CallToolParams{Name: "film"})
	if err != nil {
		t.Fatal(err)
	}
	if !sent.Load() {
		t.Fatal("the agent's answer had no placeholder to put the video block in")
	}
	wire, _ := json.Marshal(res)
	if !strings.Contains(resultText(res), `a content block of type "video"`) || !strings.Contains(resultText(res), "a film") {
		t.Errorf("the host's result does not say what the agent sent: %s", wire)
	}
	for _, leak := range []string{blob, secret, "agentura/content"} {
		if strings.Contains(string(wire), leak) {
			t.Errorf("the host's result holds %.40q: %s", leak, wire)
		}
	}
}
