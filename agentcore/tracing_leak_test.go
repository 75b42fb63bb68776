package agentcore

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/lib/mcptrace"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

type echoResult struct {
	Structured struct {
		DownloadURL string `json:"download_url"`
	} `json:"structuredContent"`
	IsError bool `json:"isError"`
}

// The conventions' request attributes and duration (issue 38): one
// tools/call is a server span with its JSON-RPC id, a file input's span
// with its transport, size, SHA-256 and time to first byte, and exactly one
// point of mcp.server.operation.duration, in seconds, with the method, the
// tool, the operation and the revision, and neither the session nor the id.
func TestToolCallDurationAndRequestID(t *testing.T) {
	recv, flush := startTelemetry(t)
	svc, srv := serveTestService(t, nil)
	addEchoTool(svc)
	caller := mcptest.NewSessionless(srv.URL + "/mcp")
	res := mcptest.Call[echoResult](t, caller, "tools/call", map[string]any{"name": "echo",
		"arguments": map[string]any{"source": "data:text/plain;base64,aGVsbG8="}})
	if res.IsError {
		t.Fatalf("call: %+v", res)
	}
	flush()

	var calls, inputs int
	for _, s := range recv.Spans() {
		switch s.Name {
		case "tools/call echo":
			calls++
			if id := spanAttr(s, "jsonrpc.request.id"); id != "1" {
				t.Errorf("server span: jsonrpc.request.id %q, want the caller's 1 (attributes %v)", id, s.Attributes)
			}
		case "resolve file input":
			inputs++
			sum := sha256.Sum256([]byte("hello"))
			if spanAttr(s, "agentura.file.sha256") != hex.EncodeToString(sum[:]) || spanAttr(s, "agentura.file.transport") != "data" {
				t.Errorf("input span: attributes %v, want the SHA-256 of hello and the data transport", s.Attributes)
			}
			if ttfb := attrOf(s.Attributes, "agentura.file.time_to_first_byte"); ttfb == nil || ttfb.GetDoubleValue() <= 0 || ttfb.GetDoubleValue() > 60 {
				t.Errorf("input span: time to first byte %v, want seconds > 0", ttfb)
			}
			if size := attrOf(s.Attributes, "agentura.file.size"); size.GetIntValue() != 5 {
				t.Errorf("input span: size %v, want 5", size)
			}
		}
	}
	if calls != 1 || inputs != 1 {
		t.Fatalf("%d call spans, %d input spans; want 1 and 1", calls, inputs)
	}

	var points int
	for _, m := range recv.Metrics() {
		if m.Name != mcptrace.MetricServerDuration {
			continue
		}
		if m.Unit != "s" || m.GetHistogram() == nil || m.Service != "traced-agent" {
			t.Fatalf("%s: unit %q, histogram %v, service %q; want a histogram in s of traced-agent", m.Name, m.Unit, m.GetHistogram() != nil, m.Service)
		}
		for _, p := range m.GetHistogram().DataPoints {
			if stringAttr(p.Attributes, "mcp.method.name") != "tools/call" {
				continue
			}
			points++
			want := map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo",
				"gen_ai.operation.name": "execute_tool", "mcp.protocol.version": mcptest.Revision}
			got := map[string]string{}
			for _, kv := range p.Attributes {
				got[kv.Key] = kv.Value.GetStringValue()
			}
			if p.Count != 1 || p.Sum == nil || *p.Sum <= 0 || !maps.Equal(got, want) {
				t.Errorf("tools/call point: count %d, sum %v, attributes %v; want one call of some seconds with %v", p.Count, p.Sum, got, want)
			}
		}
	}
	if points != 1 {
		t.Errorf("%d points of %s for tools/call, want 1", points, mcptrace.MetricServerDuration)
	}
}

// Issue 38: no exported span (its name, attributes, events, links, status)
// holds a file's bytes, their base64, a download token, a signed URL's
// query, the signing key or a fetched URL's token, over calls that read an
// input inline, by the agent's own signed URL, by a fetched URL whose query
// carries a token, and one refused for a bare name and one whose fetch
// fails: with AGENT_TRACE_FILE_NAMES off no span names a file either (not
// even in a URL's path); on, the input and output spans carry the cleaned
// names, and still nothing else.
func TestSpansHoldNoSecrets(t *testing.T) {
	for _, names := range []bool{false, true} {
		t.Run(map[bool]string{false: "names off", true: "names on"}[names], func(t *testing.T) {
			spansHoldNoSecrets(t, names)
		})
	}
}

func spansHoldNoSecrets(t *testing.T, names bool) {
	const (
		content     = "TOP-SECRET-BYTES-4711 of the quarterly plan"
		signingKey  = "signing-key-of-the-test-0123456789abcdef"
		originToken = "ORIGIN-TOKEN-93f1c2"
	)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/share/remote-secret.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(content))
	}))
	t.Cleanup(origin.Close)
	originURL, _ := url.Parse(origin.URL)

	recv, flush := startTelemetry(t)
	t.Cleanup(func() { mcptrace.SetFileNames(false) })
	svc, srv := serveTestService(t, func(c *Config) {
		c.SigningKeys = []string{signingKey}
		c.FetchAllowHosts = []string{originURL.Host}
		c.TraceFileNames = names
	})
	addEchoTool(svc)
	caller := mcptest.NewSessionless(srv.URL + "/mcp")
	call := func(source any) echoResult {
		return mcptest.Call[echoResult](t, caller, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"source": source}})
	}
	b64 := base64.StdEncoding.EncodeToString([]byte(content))
	first := call("data:text/plain;name=secret-plan.txt;base64," + b64)
	u, err := url.Parse(first.Structured.DownloadURL)
	if err != nil || first.IsError || u.Query().Get("token") == "" {
		t.Fatalf("first call: %+v (%v), want a download URL with its token", first, err)
	}
	token := u.Query().Get("token")
	if r := call(first.Structured.DownloadURL); r.IsError {
		t.Fatalf("input by the signed URL: %+v", r)
	}
	if r := call(origin.URL + "/share/remote-secret.txt?token=" + originToken); r.IsError {
		t.Fatalf("input fetched: %+v", r)
	}
	if r := call(map[string]any{"name": "secret-plan.txt", "content": "secret-plan.txt"}); !r.IsError {
		t.Fatalf("a bare name as the file: %+v, want a tool error", r)
	}
	if r := call(origin.URL + "/missing/secret-gone.txt?token=" + originToken); !r.IsError {
		t.Fatalf("a fetch answered 404: %+v, want a tool error", r)
	}
	flush()
	spans := recv.Spans()

	forbidden := []string{content[:16], b64[:16], token, "token=", signingKey, originToken, u.RawQuery}
	if !names {
		forbidden = append(forbidden, "secret-plan", "remote-secret", "secret-gone")
	}
	var named []string
	for _, s := range spans {
		for _, v := range spanTexts(s.Span) {
			for _, f := range forbidden {
				if strings.Contains(v, f) {
					t.Errorf("span %q holds %q (in %q)", s.Name, f, v)
				}
			}
		}
		if n := spanAttr(s, "agentura.file.name"); n != "" {
			named = append(named, s.Name+": "+n)
		}
		if kv := attrOf(s.Attributes, "agentura.file.names"); kv != nil {
			for _, v := range kv.GetArrayValue().GetValues() {
				named = append(named, s.Name+"s: "+v.GetStringValue())
			}
		}
		if s.Name == "resolve file input" && s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR && s.Status.GetMessage() == "" {
			t.Errorf("a refused input's span has no reason")
		}
	}
	slices.Sort(named)
	var want []string
	if names {
		want = []string{
			"resolve file input: remote-secret.txt", "resolve file input: secret-gone.txt", "resolve file input: secret-plan.txt",
			"resolve file input: secret-plan.txt", "resolve file input: secret-plan.txt",
			"store outputs: remote-secret.txt", "store outputs: secret-plan.txt", "store outputs: secret-plan.txt",
		}
		for i, n := range want { // the outputs' attribute is a list: "store outputss"
			if strings.HasPrefix(n, "store outputs: ") {
				want[i] = "store outputss: " + strings.TrimPrefix(n, "store outputs: ")
			}
		}
		slices.Sort(want)
	}
	if !slices.Equal(named, want) {
		t.Errorf("file names in spans:\n%q\nwant\n%q", named, want)
	}
	if len(spans) != 13 {
		t.Errorf("%d spans exported, want 13: a request and an input span for each of 5 calls, an output span for the 3 that succeeded", len(spans))
	}
}

// spanTexts is every text an exported span holds.
func spanTexts(s *tracepb.Span) []string {
	out := []string{s.Name, s.Status.GetMessage(), s.TraceState}
	attrs := func(kvs []*commonpb.KeyValue) {
		for _, kv := range kvs {
			out = append(out, kv.Key, kv.Value.String())
		}
	}
	attrs(s.Attributes)
	for _, ev := range s.Events {
		out = append(out, ev.Name)
		attrs(ev.Attributes)
	}
	for _, l := range s.Links {
		out = append(out, l.TraceState)
		attrs(l.Attributes)
	}
	return out
}

func attrOf(kvs []*commonpb.KeyValue, key string) *commonpb.AnyValue {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

func stringAttr(kvs []*commonpb.KeyValue, key string) string {
	return attrOf(kvs, key).GetStringValue()
}
