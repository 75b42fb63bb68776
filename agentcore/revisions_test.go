package agentcore

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore/internal/mcpbind"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveLogged is serveTestService with the agent's log kept from level on.
func serveLogged(t *testing.T, stateless bool, level slog.Level) (*Service, *httptest.Server, *mcptest.LogBuffer) {
	t.Helper()
	logs := &mcptest.LogBuffer{}
	srv := httptest.NewUnstartedServer(nil)
	cfg := Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PublicURL: "http://" + srv.Listener.Addr().String(),
		CleanupSchedule: "@every 1h", MCPStateless: stateless, SigningKeys: []string{strings.Repeat("k", 32)}}
	svc, err := New(Info{Name: "rev-agent", Version: "1", Instructions: "echo files back"}, cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: level})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	addEchoTool(svc)
	srv.Config.Handler = svc.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return svc, srv, logs
}

type listedResources struct {
	Resources []struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	} `json:"resources"`
	TTLMs      *int   `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
}

func names(l listedResources) []string {
	var out []string
	for _, r := range l.Resources {
		out = append(out, r.Name)
	}
	return out
}

// Whatever AGENT_MCP_STATELESS says, a client that speaks only 2026-07-28
// (raw JSON-RPC, no initialize) is served every feature on /mcp: discover,
// tools, calls, per-caller resources through owner handles (listed, read
// as text or blob, not read with a forged URL; the template of their URIs),
// and subscriptions/listen; and no WARN is logged. Before issue 24 the
// default (stateful) agent answered it -32022.
func TestSessionlessRevisionInEveryMode(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "stateless"}[stateless], func(t *testing.T) {
			svc, srv, logs := serveLogged(t, stateless, slog.LevelInfo)
			a := mcptest.NewSessionless(srv.URL + "/mcp")

			disc := mcptest.Call[mcptest.Discovered](t, a, "server/discover", nil)
			if !slices.Contains(disc.SupportedVersions, mcptest.Revision) || !slices.Contains(disc.SupportedVersions, "2025-11-25") ||
				disc.Capabilities.Tools == nil || !disc.Capabilities.Tools.ListChanged || disc.Capabilities.Resources == nil ||
				!disc.Capabilities.Resources.ListChanged || disc.Instructions != "echo files back" {
				t.Fatalf("server/discover: %+v", disc)
			}

			tools := mcptest.Call[mcptest.ToolList](t, a, "tools/list", nil)
			if len(tools.Tools) != 1 || tools.Tools[0].InputSchema["$schema"] != mcpbind.SchemaDialect || tools.TTLMs == nil || tools.CacheScope != "public" {
				t.Fatalf("tools/list: %+v", tools)
			}

			lst := a.Listen(t, map[string]any{"resourcesListChanged": true, "toolsListChanged": true})
			lst.Wait(t, "notifications/subscriptions/acknowledged")

			type callResult struct {
				Structured struct {
					Filename string `json:"filename"`
				} `json:"structuredContent"`
				IsError bool           `json:"isError"`
				Meta    map[string]any `json:"_meta"`
			}
			res := mcptest.Call[callResult](t, a, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"source": "data:text/plain;name=a.txt;base64,aGVsbG8="}})
			if res.IsError || res.Structured.Filename != "a.txt" || res.Meta[mcptest.MetaOwner] == nil {
				t.Fatalf("tools/call: %+v", res)
			}
			lst.Wait(t, "notifications/resources/list_changed")

			b := mcptest.NewSessionless(srv.URL + "/mcp")
			mcptest.Call[callResult](t, b, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"source": "data:text/plain;name=b.txt;base64,aGVsbG8="}})
			if la := mcptest.Call[listedResources](t, a, "resources/list", nil); !slices.Equal(names(la), []string{"a.txt"}) || la.CacheScope != "private" {
				t.Errorf("caller A lists %v (cacheScope %q), want [a.txt], private", names(la), la.CacheScope)
			}
			if lb := mcptest.Call[listedResources](t, b, "resources/list", nil); !slices.Equal(names(lb), []string{"b.txt"}) {
				t.Errorf("caller B lists %v, want [b.txt]", names(lb))
			}
			if ln := mcptest.Call[listedResources](t, mcptest.NewSessionless(srv.URL+"/mcp"), "resources/list", nil); len(ln.Resources) != 0 {
				t.Errorf("a caller without a handle lists %v, want nothing", names(ln))
			}
			forged := &mcptest.Sessionless{URL: srv.URL + "/mcp", Owner: a.Owner[:len(a.Owner)-2] + "xx"}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if ans, err := forged.Send(ctx, "resources/list", nil, nil); err != nil || ans.Response.Error == nil || ans.Response.Error.Code != -32602 {
				t.Errorf("a forged handle: %+v, %v; want error -32602", ans, err)
			}

			// resources/read of what the caller produced: text as text, other
			// bytes as a blob. The signed URL is the capability that reads a
			// file (docs/mcp.md): a forged one finds nothing.
			type readResult struct {
				Contents []struct {
					URI      string `json:"uri"`
					MIMEType string `json:"mimeType"`
					Text     string `json:"text"`
					Blob     []byte `json:"blob"`
				} `json:"contents"`
				TTLMs      *int   `json:"ttlMs"`
				CacheScope string `json:"cacheScope"`
			}
			la := mcptest.Call[listedResources](t, a, "resources/list", nil)
			if len(la.Resources) != 1 {
				t.Fatalf("caller A lists %v, want [a.txt]", names(la))
			}
			uri := la.Resources[0].URI
			rd := mcptest.Call[readResult](t, a, "resources/read", map[string]any{"uri": uri})
			if len(rd.Contents) != 1 || rd.Contents[0].URI != uri || rd.Contents[0].Text != "hello" || rd.Contents[0].Blob != nil ||
				!strings.HasPrefix(rd.Contents[0].MIMEType, "text/plain") || rd.TTLMs == nil || rd.CacheScope != "private" {
				t.Errorf("resources/read of a.txt: %+v", rd)
			}
			if ans, err := b.Send(ctx, "resources/read", map[string]any{"uri": uri[:len(uri)-2] + "xx"}, nil); err != nil || ans.Response.Error == nil ||
				ans.Response.Error.Code != mcp.CodeResourceNotFound {
				t.Errorf("a forged URL of a.txt: %+v, %v; want error %d", ans, err, mcp.CodeResourceNotFound)
			}
			bin := []byte{0, 1, 2, 0xff, 0xfe}
			res = mcptest.Call[callResult](t, a, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{
				"source": "data:application/octet-stream;name=z.bin;base64," + base64.StdEncoding.EncodeToString(bin)}})
			if res.IsError || res.Structured.Filename != "z.bin" {
				t.Fatalf("tools/call of z.bin: %+v", res)
			}
			var binURI string
			for _, r := range mcptest.Call[listedResources](t, a, "resources/list", nil).Resources {
				if r.Name == "z.bin" {
					binURI = r.URI
				}
			}
			rd = mcptest.Call[readResult](t, a, "resources/read", map[string]any{"uri": binURI})
			if len(rd.Contents) != 1 || rd.Contents[0].URI != binURI || !bytes.Equal(rd.Contents[0].Blob, bin) || rd.Contents[0].Text != "" {
				t.Errorf("resources/read of z.bin (%s): %+v, want blob %v", binURI, rd, bin)
			}

			// resources/templates/list: the template of produced files' URIs.
			type templateList struct {
				ResourceTemplates []struct {
					Name        string `json:"name"`
					URITemplate string `json:"uriTemplate"`
				} `json:"resourceTemplates"`
				TTLMs      *int   `json:"ttlMs"`
				CacheScope string `json:"cacheScope"`
			}
			tl := mcptest.Call[templateList](t, a, "resources/templates/list", nil)
			if len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].Name != "produced-file" ||
				tl.ResourceTemplates[0].URITemplate != srv.URL+"/files/{id}/{+name}{?token}" || tl.TTLMs == nil || tl.CacheScope != "public" {
				t.Errorf("resources/templates/list: %+v", tl)
			}

			// Progress and the per-request log level of _meta.
			AddTool(svc, Tool{Name: "say"}, func(_ context.Context, call *Call, _ struct{}) (*Result, error) {
				call.Progress(1, 2, "half way")
				call.Log(slog.LevelInfo, "said it")
				call.Log(slog.LevelDebug, "said it quietly")
				return TextResult("said"), nil
			})
			for _, level := range []string{"", "info"} {
				meta := map[string]any{"progressToken": "p1"}
				if level != "" {
					meta[mcptest.MetaLogLevel] = level
				}
				ans, err := a.Send(ctx, "tools/call", map[string]any{"name": "say", "arguments": map[string]any{}, "_meta": meta}, nil)
				if err != nil || ans.Response.Error != nil {
					t.Fatalf("say: %v %+v", err, ans)
				}
				var progress, logged []string
				for _, n := range ans.Notifications {
					switch n.Method {
					case "notifications/progress":
						progress = append(progress, string(n.Params))
					case "notifications/message":
						logged = append(logged, string(n.Params))
					}
				}
				if len(progress) != 1 || !strings.Contains(progress[0], `"progressToken":"p1"`) {
					t.Errorf("log level %q: progress %v, want one for p1", level, progress)
				}
				if want := map[string]int{"": 0, "info": 1}[level]; len(logged) != want || (want == 1 && !strings.Contains(logged[0], "said it")) {
					t.Errorf("log level %q: messages %v, want %d", level, logged, want)
				}
			}

			AddTool(svc, Tool{Name: "later"}, func(context.Context, *Call, struct{}) (*Result, error) { return &Result{}, nil })
			lst.Wait(t, "notifications/tools/list_changed")

			// An initialize-based client of 2025-11-25, without a standing
			// stream, beside it: list changes have nowhere to go on its
			// session, which is not a warning.
			c, _ := mcptest.Connect(t, srv.URL+"/mcp")
			mcptest.MustSucceed(t, "echo", mcptest.CallTool(t, c, "echo", map[string]any{"source": "data:text/plain;name=c.txt;base64,aGVsbG8="}))
			mcptest.CallTool(t, c, "echo", map[string]any{"source": "data:text/plain;name=d.txt;base64,aGVsbG8="})
			time.Sleep(100 * time.Millisecond) // the go-sdk sends list changes 10 ms after the change
			if w := mcptest.Warnings(logs.String()); len(w) > 0 {
				t.Errorf("the agent logged warnings over ordinary calls:\n%s", strings.Join(w, "\n"))
			}
		})
	}
}

// Every older revision the go-sdk knows is served as before, through
// initialize, in both modes, on the same endpoint; the cache hints ride
// along and mark3labs/mcp-go on 2025-11-25 reads them.
func TestOlderRevisionsInEveryMode(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		_, srv, logs := serveLogged(t, stateless, slog.LevelInfo)
		for _, v := range mcp.SupportedProtocolVersions() {
			if v >= mcpbind.RevisionSessionless {
				continue
			}
			cs := connectAt(t, srv.URL, "", v)
			if got := cs.InitializeResult().ProtocolVersion; got != v {
				t.Errorf("stateless=%v: asked for %s, negotiated %s", stateless, v, got)
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"source": "data:text/plain;name=a.txt;base64,aGVsbG8="}})
			if err != nil || res.IsError {
				t.Errorf("stateless=%v, %s: %v %+v", stateless, v, err, res)
			}
			if lt, err := cs.ListTools(context.Background(), nil); err != nil || len(lt.Tools) != 1 {
				t.Errorf("stateless=%v, %s: tools/list: %v %+v", stateless, v, err, lt)
			}
		}

		// The cache hints of 2026-07-28 go out on older revisions too (the
		// go-sdk serves them on all; a 2025-11-25 Result admits any further
		// field), and a strict client of 2025-11-25 reads them: mcp-go
		// decodes ttlMs into a pointer, set only when the field was there.
		c, _ := mcptest.Connect(t, srv.URL+"/mcp")
		tl, err := c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
		if err != nil || len(tl.Tools) != 1 || tl.TTLMs == nil || tl.CacheScope != "public" {
			t.Errorf("stateless=%v: mcp-go on %s: tools/list %+v, %v; want the echo tool, ttlMs and cacheScope public", stateless, mcptest.Protocol, tl, err)
		}
		rl, err := c.ListResources(context.Background(), mcpgo.ListResourcesRequest{})
		if err != nil || rl.TTLMs == nil || rl.CacheScope != "private" {
			t.Errorf("stateless=%v: mcp-go on %s: resources/list %+v, %v; want ttlMs and cacheScope private", stateless, mcptest.Protocol, rl, err)
		}
		if w := mcptest.Warnings(logs.String()); len(w) > 0 {
			t.Errorf("stateless=%v: warnings:\n%s", stateless, strings.Join(w, "\n"))
		}
	}
}
