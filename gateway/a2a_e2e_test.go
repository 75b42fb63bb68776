package gateway_test

// A host (mark3labs/mcp-go) in front of the BUILT `agentura gateway`, which
// reaches a real agentura agent over A2A only: the agent is named by its
// card URL, or by a base whose /mcp is not served (a proxy passing on A2A
// alone, whose card is made a third party's: without the skills' schemas).
// The skill shows its real parameters where the card publishes them, gets
// each file by name in its own parameter, the produced file is saved byte
// for byte in the run's folder under --out and registered; the task's
// progress reaches the host, and the host's cancellation cancels the task
// at the agent.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/gateway"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/testagent"
	"github.com/agentura/agentura/transfer"
)

// reverseInput are the arguments of the test agent's reverse_file.
type reverseInput struct {
	Source agentcore.FileAttachment `json:"source"`
	Suffix string                   `json:"suffix,omitempty"`
}

// pairInput are the arguments of the test agent's pair.
type pairInput struct {
	Left  agentcore.FileAttachment `json:"left"`
	Right agentcore.FileAttachment `json:"right"`
	Sep   string                   `json:"sep"`
}

// a2aAgent runs the test agent with three tools more: reverse_file writes
// the bytes of its input backwards to "<name><suffix>" (default ".rev"),
// reporting progress; pair writes "pair.txt", which says which file came
// in which parameter ("left=<name>:<bytes><sep>right=<name>:<bytes>");
// hold reports progress and holds the call until it is cancelled, and
// tells held how it ended.
func a2aAgent(t *testing.T, embed int64) (*testagent.Agent, chan error) {
	t.Helper()
	a := testagent.Start(t, testagent.Options{EmbedMaxBytes: embed})
	agentcore.AddTool(a.Service, agentcore.Tool{Name: "reverse_file", Description: "Writes the file's bytes backwards."},
		func(ctx context.Context, call *agentcore.Call, in reverseInput) (*agentcore.Result, error) {
			f, err := call.ResolveFileAttachment(ctx, in.Source)
			if err != nil {
				return nil, err
			}
			b, err := os.ReadFile(f.Path)
			if err != nil {
				return nil, err
			}
			call.Progress(1, 2, "reversing "+f.Name)
			slices.Reverse(b)
			suffix := in.Suffix
			if suffix == "" {
				suffix = ".rev"
			}
			dir, err := call.WorkDir()
			if err != nil {
				return nil, err
			}
			out := filepath.Join(dir, f.Name+suffix)
			if err := os.WriteFile(out, b, 0o600); err != nil {
				return nil, err
			}
			return call.FileResponse(ctx, agentcore.OutputFile(f.Name+suffix, out))
		})
	agentcore.AddTool(a.Service, agentcore.Tool{Name: "pair", Description: "Says which file came in which parameter."},
		func(ctx context.Context, call *agentcore.Call, in pairInput) (*agentcore.Result, error) {
			var out []byte
			for i, p := range []struct {
				param string
				att   agentcore.FileAttachment
			}{{"left", in.Left}, {"right", in.Right}} {
				f, err := call.ResolveFileAttachment(ctx, p.att)
				if err != nil {
					return nil, err
				}
				b, err := os.ReadFile(f.Path)
				if err != nil {
					return nil, err
				}
				if i > 0 {
					out = append(out, in.Sep...)
				}
				out = append(append(out, p.param+"="+f.Name+":"...), b...)
			}
			return call.FileResponse(ctx, agentcore.OutputBytes("pair.txt", out))
		})
	held := make(chan error, 1)
	agentcore.AddTool(a.Service, agentcore.Tool{Name: "hold", Description: "Holds the call until it is cancelled."},
		func(ctx context.Context, call *agentcore.Call, in struct{}) (*agentcore.Result, error) {
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			limit := time.After(time.Minute)
			for i := 1; ; i++ {
				call.Progress(float64(i), 0, "holding")
				select {
				case <-ctx.Done():
					held <- ctx.Err()
					return nil, ctx.Err()
				case <-tick.C:
				case <-limit:
					held <- errors.New("never cancelled")
					return agentcore.TextResult("held a minute"), nil
				}
			}
		})
	return a, held
}

// a2aOnly passes on to the agent at base what an A2A agent serves (its
// card, /a2a, /uploads, /files/) and answers 404 for the rest (/mcp). The
// card goes without the skills' schemas: the card of a third party's agent.
func a2aOnly(t *testing.T, base string) *httptest.Server {
	t.Helper()
	u, _ := url.Parse(base)
	proxy := httputil.NewSingleHostReverseProxy(u)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == transfer.AgentCardPath {
			thirdPartyCard(t, w, base)
			return
		}
		if r.URL.Path == transfer.A2APath ||
			strings.HasPrefix(r.URL.Path, "/uploads") || strings.HasPrefix(r.URL.Path, "/files/") {
			proxy.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// thirdPartyCard writes the card of the agent at base without the
// extension of the skills' schemas.
func thirdPartyCard(t *testing.T, w http.ResponseWriter, base string) {
	resp, err := http.Get(base + transfer.AgentCardPath)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	var card map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&card); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	caps, _ := card["capabilities"].(map[string]any)
	exts, _ := caps["extensions"].([]any)
	caps["extensions"] = slices.DeleteFunc(exts, func(e any) bool {
		m, _ := e.(map[string]any)
		return m["uri"] == transfer.A2ASkillSchemasExtension
	})
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(card); err != nil {
		t.Errorf("write the card: %v", err)
	}
}

func TestGatewayFrontsA2AAgent(t *testing.T) {
	agent, held := a2aAgent(t, 0) // produced files come back as URIs the gateway downloads
	root := t.TempDir()
	payload := make([]byte, 300<<10) // over the 64 KiB inline limit given: staged through the agent's /uploads
	for i := range payload {
		payload[i] = byte(i*7 + i/251)
	}
	if err := os.WriteFile(filepath.Join(root, "data.bin"), payload, 0o644); err != nil {
		t.Fatal(err)
	}
	c := startGateway(t, root, "--root", ".", "--out", "agentura-files", "--inline-max", "64KiB", agent.Base+transfer.AgentCardPath)
	var got notes
	c.OnNotification(got.add)

	// The card publishes each skill's schema: the host sees the tool's
	// own parameters, its file as a name.
	tools := listedTools(t, c, "reverse_file", "pair", "hold", "inspect_file", "list_files", "add_file")
	props := tools["reverse_file"].InputSchema.Properties
	source, _ := json.Marshal(props["source"])
	if _, generic := props["files"]; generic || props["suffix"] == nil ||
		!strings.Contains(string(source), "a file name from this conversation or a path under "+root) || strings.Contains(string(source), "x-file") {
		t.Errorf("reverse_file as the host sees it: %+v; want source (a file name) and suffix", tools["reverse_file"].InputSchema)
	}
	if req := tools["pair"].InputSchema.Required; !slices.Contains(req, "left") || !slices.Contains(req, "right") {
		t.Errorf("pair's required arguments as the host sees them: %v", req)
	}
	agentURLs := []string{agent.Base, strings.TrimPrefix(agent.Base, "http://")}

	t.Run("FileByNameInProducedFileSaved", func(t *testing.T) {
		res := callWithProgress(t, c, "reverse_file", map[string]any{"source": "data.bin"})
		mcptest.MustSucceed(t, "reverse_file", res)
		text := mcptest.Text(res)
		want := regexp.MustCompile(`Tool produced: data\.bin\.rev \([^)]*\) — saved as (` +
			regexp.QuoteMeta(filepath.Join(root, "agentura-files")) + `/\d{4}-\d\d-\d\d_\d{6}(-\d+)?/data\.bin\.rev)\n`)
		m := want.FindStringSubmatch(text + "\n")
		if m == nil {
			t.Fatalf("reverse_file text %q lacks %s", text, want)
		}
		saved, err := os.ReadFile(m[1])
		if err != nil {
			t.Fatal(err)
		}
		rev := slices.Clone(payload)
		slices.Reverse(rev)
		if !bytes.Equal(saved, rev) {
			t.Errorf("saved data.bin.rev: %d bytes, not the agent's %d reversed bytes", len(saved), len(rev))
		}
		if !slices.ContainsFunc(res.Content, func(ct mcp.Content) bool {
			l, ok := ct.(mcp.ResourceLink)
			return ok && l.URI == "file://"+m[1]
		}) {
			t.Errorf("no resource_link to %s: %+v", m[1], res.Content)
		}
		leaks(t, "reverse_file", res, agentURLs...)
		if !slices.ContainsFunc(got.progress(), func(p string) bool { return strings.HasPrefix(p, "reversing data.bin") }) {
			t.Errorf("the agent's progress did not reach the host; progress seen: %q", got.progress())
		}
		// Registered: the produced file is named by its name in the next
		// call, and saved again as the conversation's second name.
		res = mcptest.CallTool(t, c, "reverse_file", map[string]any{"source": "data.bin.rev", "suffix": ".back"})
		mcptest.MustSucceed(t, "reverse_file data.bin.rev", res)
		m2 := regexp.MustCompile(`saved as (\S+/data\.bin\.rev\.back)`).FindStringSubmatch(mcptest.Text(res))
		if m2 == nil || filepath.Dir(m2[1]) != filepath.Dir(m[1]) {
			t.Fatalf("the second call's file is not saved beside the first: %q", mcptest.Text(res))
		}
		if back, err := os.ReadFile(m2[1]); err != nil || !bytes.Equal(back, payload) {
			t.Errorf("data.bin reversed twice is not data.bin (%v)", err)
		}
		// The conversation's second data.bin.rev has a name of its own,
		// in the text, on disk and in the structured content.
		res = mcptest.CallTool(t, c, "reverse_file", map[string]any{"source": "data.bin"})
		mcptest.MustSucceed(t, "reverse_file again", res)
		m3 := regexp.MustCompile(`Tool produced: (data\.bin \(2\)\.rev) .* — saved as (\S+)`).FindStringSubmatch(mcptest.Text(res))
		if m3 == nil {
			t.Fatalf("the second data.bin.rev: %q", mcptest.Text(res))
		}
		if sc, _ := res.StructuredContent.(map[string]any); sc["filename"] != m3[1] || sc["download_url"] != nil {
			t.Errorf("structured content of the second data.bin.rev: %v, want filename %q and no download_url", res.StructuredContent, m3[1])
		}
		list := mcptest.Text(mcptest.CallTool(t, c, "list_files", map[string]any{}))
		for _, want := range []string{"data.bin ", "data.bin.rev ", "data.bin.rev.back ", "saved as " + m[1]} {
			if !strings.Contains(list, want) {
				t.Errorf("list_files %q lacks %q", list, want)
			}
		}
	})

	t.Run("TwoFileParamsByName", func(t *testing.T) {
		left := append([]byte("L\x00\xff"), payload[:1000]...)
		if err := os.WriteFile(filepath.Join(root, "left.bin"), left, 0o644); err != nil {
			t.Fatal(err)
		}
		// The right one is data.bin, of 300 KiB: staged through /uploads.
		res := mcptest.CallTool(t, c, "pair", map[string]any{"right": "data.bin", "left": "left.bin", "sep": "|"})
		mcptest.MustSucceed(t, "pair", res)
		m := regexp.MustCompile(`saved as (\S+/pair\.txt)`).FindStringSubmatch(mcptest.Text(res))
		if m == nil {
			t.Fatalf("pair: %q", mcptest.Text(res))
		}
		want := slices.Concat([]byte("left=left.bin:"), left, []byte("|right=data.bin:"), payload)
		if saved, err := os.ReadFile(m[1]); err != nil || !bytes.Equal(saved, want) {
			t.Errorf("saved pair.txt (%v): %d bytes, starting %q; want %d bytes, left.bin in left and data.bin in right", err, len(saved), saved[:min(len(saved), 40)], len(want))
		}
		leaks(t, "pair", res, agentURLs...)
	})

	t.Run("Refusals", func(t *testing.T) {
		for _, tc := range []struct {
			source string
			want   string
		}{
			{"nope.bin", `file "nope.bin" not found`},
			{"/etc/passwd", `file "/etc/passwd" refused: it is not under the gateway's roots`},
			{"https://example.com/x.bin?sig=1", "is written where a file name goes"},
			{"", "the name is empty"},
		} {
			res := mcptest.CallTool(t, c, "reverse_file", map[string]any{"source": tc.source})
			text := mcptest.Text(res)
			if !res.IsError || !strings.Contains(text, tc.want) || !strings.Contains(text, "Nothing was sent") || !strings.Contains(text, "argument source") {
				t.Errorf("%q: is_error %v, text %q; want a tool error with %q", tc.source, res.IsError, text, tc.want)
			}
			leaks(t, "refusal", res, agentURLs...)
		}
	})

	t.Run("CancelCancelsTheTask", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
		defer cancel()
		var req mcp.CallToolRequest
		req.Params.Name = "hold"
		req.Params.Arguments = map[string]any{}
		req.Params.Meta = &mcp.Meta{ProgressToken: "host-hold"}
		before := len(got.progress())
		done := make(chan error, 1)
		go func() {
			_, err := c.CallTool(ctx, req)
			done <- err
		}()
		for deadline := time.Now().Add(time.Minute); !slices.Contains(got.progress()[min(before, len(got.progress())):], "holding"); {
			if time.Now().After(deadline) {
				t.Fatalf("no progress of hold reached the host; seen %q", got.progress())
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel() // mcp-go sends notifications/cancelled
		<-done
		select {
		case err := <-held:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("the agent's hold ended with %v, want it cancelled", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("the agent's hold was not cancelled within a minute of the host's cancellation")
		}
	})
}

// An A2A agent named by its base, whose /mcp is not served: the gateway
// finds its card there and shows its skills. Produced files come back as
// bytes in the task (the proxy's host is not the agent's public one).
func TestGatewayFindsA2ACardAtBase(t *testing.T) {
	agent, _ := a2aAgent(t, 10<<20)
	proxy := a2aOnly(t, agent.Base)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "note.txt"), []byte("hello over a2a"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startGateway(t, root, "--root", ".", "--out", "out", proxy.URL)
	// A card without the skills' schemas: the generic shape.
	tools := listedTools(t, c, "reverse_file", "pair")
	if props := tools["pair"].InputSchema.Properties; props["files"] == nil || props["arguments"] == nil || props["message"] == nil || props["left"] != nil {
		t.Errorf("pair of a card without schemas as the host sees it: %+v; want the generic shape", tools["pair"].InputSchema)
	}
	res := mcptest.CallTool(t, c, "reverse_file", map[string]any{"source": "note.txt"})
	if text := mcptest.Text(res); !res.IsError || !strings.Contains(text, `"files": ["name", ...]`) {
		t.Errorf("arguments of another shape: is_error %v, text %q", res.IsError, text)
	}
	res = mcptest.CallTool(t, c, "reverse_file", map[string]any{"files": []any{"note.txt"}})
	mcptest.MustSucceed(t, "reverse_file", res)
	m := regexp.MustCompile(`saved as (\S+/note\.txt\.rev)`).FindStringSubmatch(mcptest.Text(res))
	if m == nil {
		t.Fatalf("reverse_file: %q", mcptest.Text(res))
	}
	if b, err := os.ReadFile(m[1]); err != nil || string(b) != "a2a revo olleh" {
		t.Errorf("saved note.txt.rev: %q (%v)", b, err)
	}
	// The agent gone: the tools stay, and a call is a tool error saying why.
	proxy.Close()
	res = mcptest.CallTool(t, c, "reverse_file", map[string]any{"files": []any{"note.txt"}})
	if text := mcptest.Text(res); !res.IsError || !strings.Contains(text, "failed (connection refused)") || strings.Contains(text, proxy.URL) {
		t.Errorf("a call to the agent gone: is_error %v, text %q", res.IsError, text)
	}
}

// An A2A agent whose card cannot be read at the start (a proxy answering
// 503) is tried again in the background, and its skills are shown once the
// card answers.
func TestA2AAgentLateCard(t *testing.T) {
	agent, _ := a2aAgent(t, 0)
	u, _ := url.Parse(agent.Base)
	proxy := httputil.NewSingleHostReverseProxy(u)
	var up atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, h := newGateway(t, ctx, gateway.Agent{URL: ts.URL + transfer.AgentCardPath})
	if tools := h.tools(t, ctx); slices.Contains(tools, "reverse_file") {
		t.Fatalf("skills listed while the card answered 503: %v", tools)
	}
	up.Store(true)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		tools := h.tools(t, ctx)
		if slices.Contains(tools, "reverse_file") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the skills did not appear within a minute of the card answering: %v", tools)
		}
	}
}
