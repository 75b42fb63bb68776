package agentcore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/signing"
	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP Apps declarations: a tool that hands out files names the file view
// (new and deprecated keys), a tool without files names none, an author's
// view and NoView are honoured, the view reads as text/html;profile=mcp-app
// with a CSP of the agent's origin alone, views stay out of resources/list,
// and the server declares the extension.
func TestAppsDeclarations(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	noop := func(ctx context.Context, call *Call, in countInput) (*Result, error) { return TextResult("ok"), nil }
	AddTool(svc, Tool{Name: "files"}, noop)
	AddTool(svc, Tool{Name: "text_only", OutputTypes: []string{}}, noop)
	AddTool(svc, Tool{Name: "no_view", NoView: true}, noop)
	AddTool(svc, Tool{Name: "chart", View: "ui://test/chart", Visibility: []string{"app"}}, noop)
	if err := svc.AddView(View{URI: "ui://test/chart", Name: "chart", HTML: "<!DOCTYPE html><title>c</title>"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.AddView(View{URI: "https://x/chart", Name: "chart", HTML: "x"}); err == nil || !strings.Contains(err.Error(), "ui://") {
		t.Errorf("AddView of an https URI: %v, want an error naming ui://", err)
	}
	cs := connect(t, srv.URL, "")
	ctx := context.Background()
	if _, ok := cs.InitializeResult().Capabilities.Extensions[transfer.AppsExtension]; !ok {
		t.Errorf("capabilities.extensions = %v, want %s", cs.InitializeResult().Capabilities.Extensions, transfer.AppsExtension)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"files": transfer.FilesViewURI, "text_only": "", "no_view": "", "chart": "ui://test/chart"}
	for _, tool := range lt.Tools {
		ui, _ := tool.Meta[transfer.MetaUI].(map[string]any)
		got, _ := ui["resourceUri"].(string)
		flat, _ := tool.Meta[transfer.MetaUIResourceURI].(string)
		if got != want[tool.Name] || flat != want[tool.Name] {
			t.Errorf("tool %s: _meta.ui.resourceUri %q, ui/resourceUri %q; want %q", tool.Name, got, flat, want[tool.Name])
		}
		if tool.Name == "chart" && !slices.Equal(anyStrings(ui["visibility"]), []string{"app"}) {
			t.Errorf("tool chart: visibility %v, want [app]", ui["visibility"])
		}
	}
	for _, uri := range []string{transfer.FilesViewURI, "ui://test/chart"} {
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		c := rr.Contents[0]
		ui, _ := c.Meta[transfer.MetaUI].(map[string]any)
		csp, _ := ui["csp"].(map[string]any)
		if c.MIMEType != transfer.AppMIMEType || !strings.HasPrefix(c.Text, "<!DOCTYPE html>") ||
			!slices.Equal(anyStrings(csp["connectDomains"]), []string{srv.URL}) || !slices.Equal(anyStrings(csp["resourceDomains"]), []string{srv.URL}) || len(csp) != 2 {
			t.Errorf("read %s: type %q, csp %v; want %s and the agent's origin %s alone", uri, c.MIMEType, csp, transfer.AppMIMEType, srv.URL)
		}
		if d, ok := ui["domain"]; ok {
			t.Errorf("read %s: _meta.ui.domain %v without AGENT_UI_DOMAIN; want none", uri, d)
		}
		for _, bad := range []string{"{{", `src="http`, "<link", "@import"} {
			if strings.Contains(c.Text, bad) {
				t.Errorf("read %s: the page holds %q: an unfilled placeholder or something remote", uri, bad)
			}
		}
	}
	lr, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lr.Resources {
		if strings.HasPrefix(r.URI, "ui://") {
			t.Errorf("resources/list shows the view %s; views are found through their tools", r.URI)
		}
	}
}

// AGENT_UI_DOMAIN is every view's _meta.ui.domain in resources/read, its
// own and an author's; "claude" is the name Claude computes for the
// connector <AGENT_PUBLIC_URL>/mcp.
func TestAppsUIDomain(t *testing.T) {
	for _, setting := range []string{"views.example.com", ClaudeUIDomain} {
		svc, srv := serveTestService(t, func(c *Config) { c.UIDomain = setting })
		if err := svc.AddAttachTool(); err != nil {
			t.Fatal(err)
		}
		if err := svc.AddView(View{URI: "ui://test/chart", Name: "chart", HTML: "<!DOCTYPE html><title>c</title>"}); err != nil {
			t.Fatal(err)
		}
		want := setting
		if setting == ClaudeUIDomain {
			sum := sha256.Sum256([]byte(srv.URL + "/mcp"))
			want = hex.EncodeToString(sum[:16]) + ".claudemcpcontent.com"
		}
		cs := connect(t, srv.URL, "")
		for _, uri := range []string{transfer.FilesViewURI, transfer.UploadViewURI, "ui://test/chart"} {
			rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatalf("read %s: %v", uri, err)
			}
			ui, _ := rr.Contents[0].Meta[transfer.MetaUI].(map[string]any)
			if ui["domain"] != want || ui["csp"] == nil {
				t.Errorf("AGENT_UI_DOMAIN=%s: read %s: _meta.ui %v; want domain %q beside the csp", setting, uri, ui, want)
			}
		}
	}
}

// viewRequest sends a request as a sandboxed view does (Origin: null,
// unless h says another) with the tus version and the headers h, and
// returns the answer, its body read.
func viewRequest(t *testing.T, method, url string, h map[string]string, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Origin", "null")
	req.Header.Set("Tus-Resumable", "1.0.0")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return r
}

func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// The tus endpoint admits a sandboxed view (Origin: null) exactly when it
// carries an upload capability of this agent, answering with CORS headers,
// and stages its file for the capability's owner; a null origin without
// one, with a forged one, with a download token in its place, or on
// POST /uploads is refused as any cross-site request.
func TestUploadCapabilityGuard(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	if err := svc.AddAttachTool(); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv.URL, "")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: AttachToolName, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatal(err, res)
	}
	c, _ := res.Meta[transfer.MetaUploadCapability].(map[string]any)
	token, _ := c["token"].(string)
	if token == "" || c["endpoint"] != srv.URL+transfer.TusPath {
		t.Fatalf("attach_file _meta = %v; want a capability for %s", res.Meta, srv.URL+transfer.TusPath)
	}
	download, err := svc.signer.Sign(signing.Claims{Owner: AnonymousOwner, FileID: fileserve.NewID(), Area: string(fileserve.Outputs), ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	send := func(method, path string, h map[string]string) *http.Response {
		t.Helper()
		return viewRequest(t, method, srv.URL+path, h, "")
	}
	create := map[string]string{"Upload-Length": "5", "Upload-Metadata": "filename " + base64.StdEncoding.EncodeToString([]byte("a.txt"))}
	withOrigin := func(m map[string]string, origin string) map[string]string { m["Origin"] = origin; return m }
	with := func(tok string) map[string]string {
		m := maps.Clone(create)
		m[transfer.HeaderUploadCapability] = tok
		return m
	}
	for _, tc := range []struct {
		name, method, path string
		h                  map[string]string
		status             int
		cors               bool
	}{
		{"preflight", http.MethodOptions, transfer.TusPath, map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "tus-resumable, x-upload-capability"}, http.StatusNoContent, true},
		{"no capability", http.MethodPost, transfer.TusPath, create, http.StatusForbidden, false},
		{"forged capability", http.MethodPost, transfer.TusPath, with(token[:len(token)-4] + "AAAA"), http.StatusForbidden, true},
		{"download token", http.MethodPost, transfer.TusPath, with(download), http.StatusForbidden, true},
		{"POST /uploads", http.MethodPost, transfer.UploadsPath, with(token), http.StatusForbidden, false},
		// A host that gives its views allow-same-origin on a sandbox origin of its own.
		{"capability from a sandbox origin", http.MethodPost, transfer.TusPath, withOrigin(with(token), "https://sandbox.host.example"), http.StatusCreated, true},
		{"no capability from a sandbox origin", http.MethodPost, transfer.TusPath, withOrigin(maps.Clone(create), "https://sandbox.host.example"), http.StatusForbidden, false},
		{"capability", http.MethodPost, transfer.TusPath, with(token), http.StatusCreated, true},
	} {
		r := send(tc.method, tc.path, tc.h)
		cors := r.Header.Get("Access-Control-Allow-Origin") == "*"
		if r.StatusCode != tc.status || cors != tc.cors {
			t.Errorf("%s: %s, CORS %v; want %d, CORS %v", tc.name, r.Status, cors, tc.status, tc.cors)
		}
		if tc.name == "capability" {
			loc := r.Header.Get("Location")
			if !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Location") || !strings.HasPrefix(loc, srv.URL+transfer.TusPath) {
				t.Fatalf("created upload: Location %q, exposed %q", loc, r.Header.Get("Access-Control-Expose-Headers"))
			}
			req, _ := http.NewRequest(http.MethodPatch, loc, strings.NewReader("hello"))
			req.Header.Set("Origin", "null")
			req.Header.Set("Tus-Resumable", "1.0.0")
			req.Header.Set("Upload-Offset", "0")
			req.Header.Set("Content-Type", "application/offset+octet-stream")
			req.Header.Set(transfer.HeaderUploadCapability, token)
			pr, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			pr.Body.Close()
			fileURL := pr.Header.Get(transfer.HeaderFileURL)
			if pr.StatusCode != http.StatusNoContent || fileURL == "" {
				t.Fatalf("PATCH: %s, File-Url %q", pr.Status, fileURL)
			}
			got, err := http.Get(fileURL)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(got.Body)
			got.Body.Close()
			if string(body) != "hello" {
				t.Errorf("the staged file holds %q, want hello", body)
			}
		}
	}
}

// The upload view names a file to the model by reference, never by
// capability: attach_file's text and structured content hold no signed URL,
// and the tus answer that completes a file carries, beside the signed
// File-Url (for the view), the file's URI without token (X-File-Uri,
// exposed to the view by CORS). A HEAD of the complete upload answers the
// same reference. The reference reads the file in the session that called
// attach_file, and in another session is an unknown file.
func TestUploadViewReference(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	if err := svc.AddAttachTool(); err != nil {
		t.Fatal(err)
	}
	type readInput struct {
		Source FileAttachment `json:"source"`
	}
	AddTool(svc, Tool{Name: "read", OutputTypes: []string{}}, func(ctx context.Context, call *Call, in readInput) (*Result, error) {
		f, err := call.ResolveFileAttachment(ctx, in.Source)
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(f.Path)
		if err != nil {
			return nil, err
		}
		return TextResult(f.Name + ": " + string(b)), nil
	})
	ctx := context.Background()
	cs := connect(t, srv.URL, "")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: AttachToolName, Arguments: map[string]any{"note": "the invoice"}})
	if err != nil || res.IsError {
		t.Fatal(err, res)
	}
	seen, _ := json.Marshal([]any{res.Content, res.StructuredContent})
	for _, capability := range []string{"token=", "/files/", "eyJ"} {
		if strings.Contains(string(seen), capability) {
			t.Errorf("attach_file shows the model %q: %s", capability, seen)
		}
	}
	c, _ := res.Meta[transfer.MetaUploadCapability].(map[string]any)
	token, _ := c["token"].(string)

	tus := func(method, url string, h map[string]string, body string) *http.Response {
		t.Helper()
		h = maps.Clone(h)
		if h == nil {
			h = map[string]string{}
		}
		h[transfer.HeaderUploadCapability] = token
		return viewRequest(t, method, url, h, body)
	}
	created := tus(http.MethodPost, srv.URL+transfer.TusPath, map[string]string{"Upload-Length": "5",
		"Upload-Metadata": "filename " + base64.StdEncoding.EncodeToString([]byte("invoice.txt"))}, "")
	loc := created.Header.Get("Location")
	if created.StatusCode != http.StatusCreated || loc == "" || created.Header.Get(transfer.HeaderFileURI) != "" {
		t.Fatalf("create: %s, Location %q, %s %q", created.Status, loc, transfer.HeaderFileURI, created.Header.Get(transfer.HeaderFileURI))
	}
	done := tus(http.MethodPatch, loc, map[string]string{"Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"}, "hello")
	ref := done.Header.Get(transfer.HeaderFileURI)
	if done.StatusCode != http.StatusNoContent || done.Header.Get(transfer.HeaderFileURL) == "" ||
		!strings.HasPrefix(ref, "mcp-file://") || strings.Contains(ref, "token") || strings.Contains(ref, "/files/") {
		t.Fatalf("PATCH: %s, File-Url %q, %s %q; want a file URI without token", done.Status, done.Header.Get(transfer.HeaderFileURL), transfer.HeaderFileURI, ref)
	}
	if !strings.Contains(done.Header.Get("Access-Control-Expose-Headers"), transfer.HeaderFileURI) {
		t.Errorf("Access-Control-Expose-Headers %q does not expose %s to the view", done.Header.Get("Access-Control-Expose-Headers"), transfer.HeaderFileURI)
	}
	if again := tus(http.MethodHead, loc, nil, ""); again.Header.Get(transfer.HeaderFileURI) != ref {
		t.Errorf("HEAD of the complete upload: %s %q, want %q", transfer.HeaderFileURI, again.Header.Get(transfer.HeaderFileURI), ref)
	}

	// The caller's scope: a session has its session; a sessionless caller
	// the owner handle attach_file answered, which it sends back.
	handle, _ := res.Meta[transfer.MetaOwner].(string)
	read := func(cs *mcp.ClientSession, handle string) (string, bool) {
		t.Helper()
		p := &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"source": map[string]any{"name": "invoice.txt", "content": ref}}}
		if handle != "" {
			p.Meta = mcp.Meta{transfer.MetaOwner: handle}
		}
		r, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		text := ""
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		return text, r.IsError
	}
	if text, isErr := read(cs, handle); isErr || !strings.Contains(text, "invoice.txt: hello") {
		t.Errorf("the reference in the session that attached it: %q (error %v); want the file", text, isErr)
	}
	if text, isErr := read(connect(t, srv.URL, ""), ""); !isErr || !strings.Contains(text, "unknown") {
		t.Errorf("the reference in another session: %q (error %v); want the unknown-file error", text, isErr)
	}
}
