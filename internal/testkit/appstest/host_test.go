package appstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/internal/testkit/chromiumtest"
	"github.com/agentura/agentura/transfer"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testAgent is an agent on a real port (the browser fetches its files),
// with an MCP session of the host to it.
type testAgent struct {
	svc     *agentcore.Service
	url     string
	session *mcp.ClientSession
	tools   map[string]*mcp.Tool
}

// startAgent runs an agent with the tools register adds, on 127.0.0.1.
func startAgent(t *testing.T, register func(*agentcore.Service) error, edit func(*agentcore.Config)) *testAgent {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := agentcore.ConfigFromLookup(func(string) (string, bool) { return "", false }, "appstest", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.StorageURL = "file://" + cfg.DataDir
	cfg.PublicURL = "http://" + ln.Addr().String()
	if edit != nil {
		edit(&cfg)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	svc, err := agentcore.New(agentcore.Info{Name: "appstest", Version: "1.0.0"}, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := register(svc); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); svc.Close() })

	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(transfer.AppsExtension, map[string]any{"mimeTypes": []string{transfer.AppMIMEType}})
	c := mcp.NewClient(&mcp.Implementation{Name: "agentura-test-host", Version: "1.0.0"}, &mcp.ClientOptions{Capabilities: caps})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: cfg.PublicURL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	a := &testAgent{svc: svc, url: cfg.PublicURL, session: cs, tools: map[string]*mcp.Tool{}}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range lt.Tools {
		a.tools[tool.Name] = tool
	}
	return a
}

// call calls a tool as the model would, through the host.
func (a *testAgent) call(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := a.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("call %s failed: %s", name, textOf(res))
	}
	return res
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String()
}

// uiMeta is a tool's or resource's _meta.ui.
func uiMeta(m mcp.Meta) map[string]any {
	ui, _ := m[transfer.MetaUI].(map[string]any)
	return ui
}

// hostSession is one view shown by the test host: what the host page
// reads at /session/<id>.
type hostSession struct {
	Tool      string              `json:"tool"`
	ToolDef   *mcp.Tool           `json:"toolDef"`
	ViewURI   string              `json:"viewURI"`
	ViewURL   string              `json:"viewURL"`
	CSP       map[string][]string `json:"csp"`
	Theme     string              `json:"theme"`
	Arguments map[string]any      `json:"arguments"`
	Result    *mcp.CallToolResult `json:"result,omitempty"`
	// Sandbox is the iframe's sandbox attribute; "": allow-scripts alone.
	Sandbox string `json:"sandbox,omitempty"`
	html    string
	// ignoreCSP plays a host that ignores _meta.ui.csp: the extension's
	// restrictive default applies.
	ignoreCSP bool
}

// restrictiveCSP is the policy the extension prescribes when a view
// declares none.
const restrictiveCSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; media-src 'self' data:; connect-src 'none'"

// testHost serves the host page on one origin and the views on another,
// each view with the CSP its resource declares.
type testHost struct {
	agent *testAgent
	pages *httptest.Server // the host's origin
	views *httptest.Server // the views' origin

	mu       sync.Mutex
	sessions map[string]*hostSession
	rpcs     []string // methods the views called through the host
}

func newHost(t *testing.T, a *testAgent) *testHost {
	t.Helper()
	page, err := os.ReadFile("testdata/host.html")
	if err != nil {
		t.Fatal(err)
	}
	h := &testHost{agent: a, sessions: map[string]*hostSession{}}
	pages := http.NewServeMux()
	pages.HandleFunc("GET /host", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	pages.HandleFunc("GET /session/{sid}", func(w http.ResponseWriter, r *http.Request) {
		s, ok := h.session(r.PathValue("sid"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		writeJSON(w, http.StatusOK, s)
	})
	pages.HandleFunc("POST /rpc/{sid}", h.forward)
	h.pages = httptest.NewServer(pages)
	t.Cleanup(h.pages.Close)

	views := http.NewServeMux()
	views.HandleFunc("GET /view/{sid}", func(w http.ResponseWriter, r *http.Request) {
		s, ok := h.session(r.PathValue("sid"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		csp := viewCSP(s.CSP)
		if s.ignoreCSP {
			csp = restrictiveCSP
		}
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, s.html)
	})
	h.views = httptest.NewServer(views)
	t.Cleanup(h.views.Close)
	return h
}

func (h *testHost) session(sid string) (*hostSession, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[sid]
	return s, ok
}

// viewCSP is the policy a host builds from _meta.ui.csp, as the
// extension's security section constructs it.
func viewCSP(c map[string][]string) string {
	join := func(k, none string) string {
		if v := c[k]; len(v) > 0 {
			return strings.Join(v, " ")
		}
		return none
	}
	res := join("resourceDomains", "")
	return strings.Join([]string{
		"default-src 'none'",
		"script-src 'self' 'unsafe-inline' " + res,
		"style-src 'self' 'unsafe-inline' " + res,
		"connect-src 'self' " + join("connectDomains", ""),
		"img-src 'self' data: " + res,
		"font-src 'self' " + res,
		"media-src 'self' data: " + res,
		"frame-src " + join("frameDomains", "'none'"),
		"object-src 'none'",
		"base-uri " + join("baseUriDomains", "'self'"),
	}, "; ")
}

// forward passes a view's tools/call or resources/read to the agent, as a
// host does, refusing tools whose visibility leaves out "app".
func (h *testHost) forward(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	h.mu.Lock()
	h.rpcs = append(h.rpcs, req.Method)
	h.mu.Unlock()
	ctx := r.Context()
	switch req.Method {
	case "tools/call":
		var p mcp.CallToolParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
			return
		}
		tool, ok := h.agent.tools[p.Name]
		if !ok {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "no tool " + p.Name, "code": -32602})
			return
		}
		if vis, ok := uiMeta(tool.Meta)["visibility"].([]any); ok && !slices.Contains(vis, any("app")) {
			writeJSON(w, http.StatusForbidden, map[string]any{"error": "tool " + p.Name + " is not visible to apps", "code": -32600})
			return
		}
		res, err := h.agent.session.CallTool(ctx, &p)
		if err != nil {
			writeJSON(w, http.StatusBadGateway, map[string]any{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, res)
	case "resources/read":
		var p mcp.ReadResourceParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
			return
		}
		res, err := h.agent.session.ReadResource(ctx, &p)
		if err != nil {
			writeJSON(w, http.StatusBadGateway, map[string]any{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, res)
	default:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "not forwarded: " + req.Method, "code": -32601})
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// newSession reads the view of the tool name from the agent (its
// _meta.ui.resourceUri, then resources/read) and makes a session showing
// res in it. It returns the host page's URL.
func (h *testHost) newSession(t *testing.T, name string, args map[string]any, res *mcp.CallToolResult, theme string) string {
	t.Helper()
	return h.openSession(t, name, args, res, theme, false)
}

// newSessionIgnoringCSP is newSession in a host that ignores the view's
// _meta.ui.csp and applies the restrictive default.
func (h *testHost) newSessionIgnoringCSP(t *testing.T, name string, args map[string]any, res *mcp.CallToolResult, theme string) string {
	t.Helper()
	return h.openSession(t, name, args, res, theme, true)
}

func (h *testHost) openSession(t *testing.T, name string, args map[string]any, res *mcp.CallToolResult, theme string, ignoreCSP bool) string {
	t.Helper()
	tool, ok := h.agent.tools[name]
	if !ok {
		t.Fatalf("the agent has no tool %s", name)
	}
	uri, _ := uiMeta(tool.Meta)["resourceUri"].(string)
	if uri == "" {
		t.Fatalf("tool %s names no view in _meta.ui.resourceUri: %v", name, tool.Meta)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rr, err := h.agent.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].MIMEType != transfer.AppMIMEType || rr.Contents[0].Text == "" {
		t.Fatalf("resources/read %s: want one HTML text of type %s, got %+v", uri, transfer.AppMIMEType, rr.Contents)
	}
	csp := map[string][]string{}
	if raw, ok := uiMeta(rr.Contents[0].Meta)["csp"].(map[string]any); ok {
		for k, v := range raw {
			for _, d := range v.([]any) {
				csp[k] = append(csp[k], d.(string))
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	sid := strconv.Itoa(len(h.sessions) + 1)
	h.sessions[sid] = &hostSession{Tool: name, ToolDef: tool, ViewURI: uri, ViewURL: h.views.URL + "/view/" + sid,
		CSP: csp, Theme: theme, Arguments: args, Result: res, html: rr.Contents[0].Text, ignoreCSP: ignoreCSP}
	return h.pages.URL + "/host?sid=" + sid
}

// browser is headless Chromium with one tab, and the execution contexts
// of its frames (a view runs in the host page's iframe).
type browser struct {
	ctx context.Context
	mu  sync.Mutex
	exe map[cdp.FrameID]runtime.ExecutionContextID
}

// newBrowser starts Chromium for the test (internal/testkit/chromiumtest:
// in a process group killed when the test ends, or the moment the test
// binary dies).
func newBrowser(t *testing.T) *browser {
	t.Helper()
	b := &browser{exe: map[cdp.FrameID]runtime.ExecutionContextID{}}
	b.ctx = chromiumtest.Start(t, []chromedp.ExecAllocatorOption{
		chromedp.WindowSize(800, 1000),
		// One renderer for host and view, so the test reaches the view's
		// frame from the host page's target.
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-features", "IsolateOrigins,site-per-process"),
		chromedp.Flag("force-device-scale-factor", "1"),
	}, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*runtime.EventExecutionContextCreated); ok {
			var aux struct {
				FrameID   cdp.FrameID `json:"frameId"`
				IsDefault bool        `json:"isDefault"`
			}
			if json.Unmarshal([]byte(e.Context.AuxData), &aux) == nil && aux.IsDefault {
				b.mu.Lock()
				b.exe[aux.FrameID] = e.Context.ID
				b.mu.Unlock()
			}
		}
	}))
	return b
}

// open loads the host page and waits until its view is initialized.
func (b *browser) open(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	b.waitHost(t, "window.__host && window.__host.initialized", 30*time.Second)
}

// host evaluates expr (a promise is awaited) in the host page and decodes
// its JSON value into out.
func (b *browser) host(t *testing.T, expr string, out any) {
	t.Helper()
	if err := b.eval(0, expr, out); err != nil {
		t.Fatalf("host: %v", err)
	}
}

// eval evaluates expr in the script context id (0: the page's) and
// decodes its JSON value into out (nil: ignored).
func (b *browser) eval(id runtime.ExecutionContextID, expr string, out any) error {
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	yes := true
	res, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ContextID: id, AwaitPromise: &yes, ReturnByValue: &yes})
	if err != nil {
		return fmt.Errorf("%s: %w", expr, err)
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("%s: %s %s", expr, res.ExceptionDetails.Text, exceptionText(res.ExceptionDetails))
	}
	if out == nil || res.Result == nil {
		return nil
	}
	return json.Unmarshal([]byte(res.Result.Value), out)
}

func (b *browser) waitHost(t *testing.T, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		b.host(t, "!!("+expr+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var state any
			b.host(t, "window.__host", &state)
			t.Fatalf("host page: %s did not hold within %v; host state: %v", expr, timeout, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// view evaluates expr (a promise is awaited) in the view's frame and
// decodes its JSON value into out.
func (b *browser) view(t *testing.T, expr string, out any) {
	t.Helper()
	if err := b.tryView(expr, out); err != nil {
		t.Fatalf("view: %v", err)
	}
}

func (b *browser) tryView(expr string, out any) error {
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	id, err := b.viewContext(ctx)
	if err != nil {
		return err
	}
	return b.eval(id, expr, out)
}

// viewContext is the script context of the view's frame.
func (b *browser) viewContext(ctx context.Context) (runtime.ExecutionContextID, error) {
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return 0, err
	}
	if tree.FrameTree == nil || len(tree.FrameTree.ChildFrames) == 0 {
		return 0, errors.New("the host page has no view frame")
	}
	b.mu.Lock()
	id, ok := b.exe[tree.FrameTree.ChildFrames[0].Frame.ID]
	b.mu.Unlock()
	if !ok {
		return 0, errors.New("the view frame has no script context yet")
	}
	return id, nil
}

func exceptionText(e *runtime.ExceptionDetails) string {
	if e.Exception != nil {
		return e.Exception.Description
	}
	return ""
}

// waitView waits until expr holds in the view.
func (b *browser) waitView(t *testing.T, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		var ok bool
		if last = b.tryView("!!("+expr+")", &ok); last == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	var body string
	b.tryView("document.body.innerText", &body)
	t.Fatalf("view: %s did not hold within %v (last error: %v); the view shows:\n%s", expr, timeout, last, body)
}

// screenshot captures the host page's view bubble as PNG, once the host
// has fitted the iframe to the size the view reported.
func (b *browser) screenshot(t *testing.T) []byte {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var height, frame int
		b.view(t, "Math.ceil(document.documentElement.getBoundingClientRect().height)", &height)
		b.host(t, "document.getElementById('view').clientHeight", &frame)
		if height == frame {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the view is %d pixels high, the host's iframe %d: the view did not report its size (ui/notifications/size-changed)", height, frame)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(".bubble")))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return buf
}
