package filehttp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/otlptest"
	"github.com/agentura/agentura/transfer"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// The file routes' spans (issue 38): a staging upload, a download, a
// refused download and a tus upload's creation and completing PATCH each
// continue the trace of their traceparent header in a server span with
// the route, the status and the owner-scoped ids and sizes; the store's
// taking of a finished tus upload is a span under its PATCH's. No span
// holds a download token, "token=" or the file's name.
func TestFileRouteSpans(t *testing.T) {
	flush := otlptest.Export(t)
	env := newTusEnv(t, nil, nil)
	uploads := httptest.NewServer(http.HandlerFunc(env.srv.ServeUpload))
	t.Cleanup(uploads.Close)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	parent := func(n int) string { return "00f067aa0ba902" + strconv.Itoa(10+n) }
	traced := func(n int, h map[string]string) map[string]string {
		h["Traceparent"] = "00-" + traceID + "-" + parent(n) + "-01"
		return h
	}
	content := []byte("the contract's words, 34 bytes ok!")
	var tokens []string
	fileOf := func(raw string) (id string) {
		t.Helper()
		u, err := url.Parse(raw)
		if err != nil || u.Query().Get("token") == "" {
			t.Fatalf("URL %q: %v, want a signed URL", raw, err)
		}
		tokens = append(tokens, u.Query().Get("token"))
		id, _ = fileIDFromPath(u.Path)
		return id
	}

	resp, body := tusReq(t, "POST", uploads.URL+"/uploads", "alice", traced(1, map[string]string{"X-Filename": "secret-contract.txt"}), content)
	var up transfer.Upload
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &up) != nil {
		t.Fatalf("POST /uploads: %s %s", resp.Status, body)
	}
	staged := fileOf(up.URL)
	dl := strings.Replace(up.URL, env.url, env.back.URL, 1)
	if resp, body := tusReq(t, "GET", dl, "", traced(2, map[string]string{}), nil); resp.StatusCode != http.StatusOK || string(body) != string(content) {
		t.Fatalf("download: %s %q", resp.Status, body)
	}
	wrong := dl[:strings.Index(dl, "token=")] + "token=" + flip(tokens[0], 1)
	if resp, _ := tusReq(t, "GET", wrong, "", traced(3, map[string]string{}), nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("download with a broken token: %s, want 403", resp.Status)
	}
	resp, body = tusReq(t, "POST", env.back.URL+transfer.TusPath, "alice", traced(4, map[string]string{
		"Upload-Length":   strconv.Itoa(len(content)),
		"Upload-Metadata": "filename c2VjcmV0LWNvbnRyYWN0LnR4dA==", // secret-contract.txt
	}), nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("tus create: %s %s", resp.Status, body)
	}
	loc := env.back.URL + strings.TrimPrefix(resp.Header.Get("Location"), env.url)
	uploadID := loc[strings.LastIndexByte(loc, '/')+1:]
	resp, body = tusReq(t, "PATCH", loc, "alice", traced(5, map[string]string{"Upload-Offset": "0"}), content)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("tus PATCH: %s %s", resp.Status, body)
	}
	tusFile := fileOf(resp.Header.Get(transfer.HeaderFileURL))

	spans := flush()
	want := []struct {
		name   string
		status int64
		attrs  map[string]any
	}{
		{"POST /uploads", 201, map[string]any{"agentura.file.id": staged, "agentura.file.size": int64(len(content)), "http.route": "/uploads"}},
		{"GET /files/{id}", 200, map[string]any{"agentura.file.id": staged, "agentura.file.bytes_sent": int64(len(content))}},
		{"GET /files/{id}", 403, map[string]any{"agentura.file.id": staged}},
		{"POST /uploads/tus/", 201, map[string]any{"agentura.upload.id": uploadID, "agentura.upload.offset": int64(0)}},
		{"PATCH /uploads/tus/{id}", 204, map[string]any{"agentura.upload.id": uploadID, "agentura.upload.offset": int64(len(content)),
			"agentura.upload.bytes_received": int64(len(content))}},
	}
	var patch otlptest.Span
	for i, w := range want {
		var got *otlptest.Span
		for _, s := range otlptest.Named(spans, w.name) {
			if s.ChildOf(traceID, parent(i+1)) {
				got = &s
			}
		}
		if got == nil {
			t.Errorf("no span %q under the caller's %s", w.name, parent(i+1))
			continue
		}
		if got.Kind != tracepb.Span_SPAN_KIND_SERVER || got.Attr("http.response.status_code").GetIntValue() != w.status ||
			got.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("span %q: kind %v, status %v %v, want server, %d, not an error", w.name, got.Kind, got.Attr("http.response.status_code"), got.Status, w.status)
		}
		for k, v := range w.attrs {
			a := got.Attr(k)
			if s, ok := v.(string); ok && a.GetStringValue() != s || !ok && a.GetIntValue() != v.(int64) {
				t.Errorf("span %q: %s = %v, want %v", w.name, k, a, v)
			}
		}
		if w.name == "PATCH /uploads/tus/{id}" {
			patch = *got
		}
	}
	finish := otlptest.Named(spans, "tus finish")
	if len(finish) != 1 || patch.Span == nil || !finish[0].ChildOf(traceID, otlptest.Hex(patch.SpanId)) ||
		finish[0].Attr("agentura.file.id").GetStringValue() != tusFile || finish[0].Attr("agentura.file.size").GetIntValue() != int64(len(content)) {
		t.Errorf("tus finish spans %v, want one under the PATCH's with the staged file's id and size", finish)
	}
	otlptest.Clean(t, spans, append(tokens, "secret-contract")...)
}

// A file's deletion and a download URL's revocation are server spans too,
// continuing the caller's trace, with the file's id and the answer's
// status; neither holds the token, "token=" or the file's name.
func TestManageRouteSpans(t *testing.T) {
	flush := otlptest.Export(t)
	env, q := manageEnv(t, false)
	const traceID = "5cf92f3577b34da6a3ce929d0e0e4737"
	traced := func(parent string) http.Header {
		return http.Header{"X-Owner": {"alice"}, "Traceparent": {"00-" + traceID + "-" + parent + "-01"}}
	}
	m := env.putQuota(t, q, "alice", "secret-ledger.txt", 100)
	revoked, deleted := env.signedURL(t, m), env.signedURL(t, m)
	body, _ := json.Marshal(transfer.RevokeRequest{URL: revoked})
	if resp, b := do(t, "POST", env.ts.URL+transfer.RevokePath, traced("00f067aa0ba90201"), bytes.NewReader(body)); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke: %s %s", resp.Status, b)
	}
	if resp, b := do(t, "DELETE", deleted, traced("00f067aa0ba90202"), nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %s %s", resp.Status, b)
	}
	if resp, _ := do(t, "DELETE", deleted, traced("00f067aa0ba90203"), nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("DELETE again: %s, want 404", resp.Status)
	}
	spans := flush()
	for _, w := range []struct {
		name, parent string
		status       int64
	}{
		{"POST " + transfer.RevokePath, "00f067aa0ba90201", 204},
		{"DELETE /files/{id}", "00f067aa0ba90202", 204},
		{"DELETE /files/{id}", "00f067aa0ba90203", 404},
	} {
		var got *otlptest.Span
		for _, s := range otlptest.Named(spans, w.name) {
			if s.ChildOf(traceID, w.parent) {
				got = &s
			}
		}
		if got == nil {
			t.Errorf("no span %q under the caller's %s", w.name, w.parent)
			continue
		}
		if got.Kind != tracepb.Span_SPAN_KIND_SERVER || got.Attr("http.response.status_code").GetIntValue() != w.status ||
			got.Attr("agentura.file.id").GetStringValue() != m.ID || got.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("span %q: kind %v, status %v %v, file %v; want server, %d, not an error, %s", w.name, got.Kind,
				got.Attr("http.response.status_code"), got.Status, got.Attr("agentura.file.id"), w.status, m.ID)
		}
	}
	var tokens []string
	for _, u := range []string{revoked, deleted} {
		pu, _ := url.Parse(u)
		tokens = append(tokens, pu.Query().Get("token"))
	}
	otlptest.Clean(t, spans, append(tokens, "secret-ledger")...)
}
