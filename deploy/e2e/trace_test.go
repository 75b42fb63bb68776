//go:build e2e

package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// jaegerTrace is a trace as Jaeger's query API returns it (GET /api/traces).
type jaegerTrace struct {
	TraceID   string       `json:"traceID"`
	Spans     []jaegerSpan `json:"spans"`
	Processes map[string]struct {
		ServiceName string      `json:"serviceName"`
		Tags        []jaegerTag `json:"tags"`
	} `json:"processes"`
}

type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	StartTime int64       `json:"startTime"` // µs
	Duration  int64       `json:"duration"`  // µs
	Tags      []jaegerTag `json:"tags"`
	Logs      []struct {
		Fields []jaegerTag `json:"fields"`
	} `json:"logs"`
	ProcessID string `json:"processID"`
}

type jaegerTag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// traceSpan is a span of the trace with its service and kind resolved.
type traceSpan struct {
	jaegerSpan
	service, kind, parent string
}

func (s traceSpan) tag(key string) string {
	for _, tg := range s.Tags {
		if tg.Key == key {
			return fmt.Sprint(tg.Value)
		}
	}
	return ""
}

// spansOf resolves each span's service (its process), kind (the span.kind
// tag; internal when absent) and parent (its CHILD_OF reference).
func spansOf(tr jaegerTrace) []traceSpan {
	var out []traceSpan
	for _, sp := range tr.Spans {
		s := traceSpan{jaegerSpan: sp, service: tr.Processes[sp.ProcessID].ServiceName}
		s.kind = s.tag("span.kind")
		if s.kind == "" {
			s.kind = "internal"
		}
		for _, r := range sp.References {
			if r.RefType == "CHILD_OF" {
				s.parent = r.SpanID
			}
		}
		out = append(out, s)
	}
	return out
}

// traceTree renders the spans as an indented tree, children in start order:
// name, service, kind, duration.
func traceTree(spans []traceSpan) string {
	children := map[string][]traceSpan{}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	for _, s := range spans {
		p := s.parent
		if !ids[p] {
			p = "" // a root, or a parent that never arrived
		}
		children[p] = append(children[p], s)
	}
	var b strings.Builder
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		list := children[parent]
		slices.SortFunc(list, func(a, b traceSpan) int { return int(a.StartTime - b.StartTime) })
		for _, s := range list {
			fmt.Fprintf(&b, "%s%s  [%s, %s]  %.1f ms\n", strings.Repeat("  ", depth), s.OperationName, s.service, s.kind, float64(s.Duration)/1000)
			walk(s.SpanID, depth+1)
		}
	}
	walk("", 0)
	return b.String()
}

// jaegerTraces asks Jaeger's query API for the traces of service.
func jaegerTraces(t *testing.T, base, service string) []jaegerTrace {
	t.Helper()
	q := url.Values{"service": {service}, "lookback": {"1h"}, "limit": {"20"}}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get(base + "/api/traces?" + q.Encode())
	if err != nil {
		t.Logf("jaeger query: %v", err)
		return nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Logf("jaeger query: %s %s", resp.Status, body)
		return nil
	}
	var out struct {
		Data []jaegerTrace `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("jaeger's answer is not its JSON (%v): %.500s", err, body)
	}
	return out.Data
}

// TestComposeTrace runs `make up-trace`'s deployment: the agents exporting
// to Jaeger (deploy/docker-compose.trace.yml), brought up by the transcript
// of make up-trace in docs/observability.md (make up-trace, a PDF composed,
// a traced `agentura call` of the OCR agent on it, the trace's services and
// span names read back from Jaeger's query API). The composer makes a PDF (a
// call of its own); then one CLI command, `agentura call` of the OCR agent's
// ocr_document on the PDF's download URL, exports its spans to Jaeger's
// published OTLP port. The OCR agent fetches the URL from the composer
// inside the network (AGENT_PEER_URLS), sending the trace context in the
// fetch's traceparent. Jaeger's query API must hold one trace with the
// spans of the CLI, the OCR agent and the composer, each agent's server
// span the child of its caller's span, under the names
// docs/observability.md lists, and no span may hold `token=`, the URL's
// download token or the PDF's bytes.
func TestComposeTrace(t *testing.T) {
	start := time.Now()
	jaegerPort, otlpPort := envPort(t, "E2E_JAEGER_PORT"), envPort(t, "E2E_OTLP_PORT")
	// IMAGE_TAG picks the images' tag (default latest), as for the scale-out
	// tests: `make e2e IMAGE_TAG=x` builds and tests images no other build
	// on the same engine retags meanwhile.
	tag := cmp.Or(os.Getenv("IMAGE_TAG"), "latest")
	// make up-trace builds and names the images by IMAGE_TAG (a make
	// variable from the environment); Compose takes the images' names from
	// the env file's settings, in the transcript's environment.
	project := runProject("trace")
	d := startDeploymentWith(t, project, []string{"docker-compose.trace.yml"}, map[string]string{
		"JAEGER_PORT": strconv.Itoa(jaegerPort), "OTLP_PORT": strconv.Itoa(otlpPort),
		"OCR_IMAGE": "agentura/ocr-agent:" + tag, "COMPOSER_IMAGE": "agentura/composer-agent:" + tag, "JAEGER_IMAGE": "agentura/jaeger:" + tag},
		&makeUp{target: "up-trace", defaultProject: "agenturatrace",
			vars:  []string{"TRACE_PROJECT=" + project, "IMAGE_TAG=" + tag},
			subst: [][2]string{{"localhost:16686", "localhost:" + strconv.Itoa(jaegerPort)}, {"localhost:4318", "localhost:" + strconv.Itoa(otlpPort)}}})
	jaeger := "http://127.0.0.1:" + strconv.Itoa(jaegerPort)
	t.Logf("deployment up and its transcript run after %s", time.Since(start).Round(time.Second))

	if uid := processUID(t, d.containerID(t, "jaeger")); uid == "0" {
		t.Errorf("jaeger runs as root")
	}

	// The input: a PDF the composer made (its own trace).
	composer := connectMCP(t, d.composerURL)
	out := callTool(t, composer, "compose_document", map[string]any{
		"markdown": "# Invoice 4711\n\nTotal due 1234 EUR\n",
		"format":   "pdf",
		"filename": "invoice.pdf",
	})
	pdfURL := fileOf(t, out, "invoice.pdf")
	u, err := url.Parse(pdfURL)
	must(t, err, "parse the PDF's URL")
	token := u.Query().Get("token")
	if token == "" {
		t.Fatalf("the composer's download URL %s has no token parameter", redact(pdfURL))
	}

	// The traced command.
	cli := agenturaCLI(t, d.root)
	cli.env = []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:" + strconv.Itoa(otlpPort), "OTEL_METRICS_EXPORTER=none"}
	work := t.TempDir()
	args, _ := json.Marshal(map[string]any{"source": pdfURL})
	var res cliResult
	cli.call(t, &res, d.ocrURL+"/mcp", "ocr_document", string(args), work)
	if text, _ := res.Structured["text"].(string); !strings.Contains(text, "4711") {
		t.Errorf("ocr_document of the composer's PDF lacks 4711: %q", text)
	}

	// The spans the trace must hold, by service: name and kind.
	want := map[string][]string{
		"agentura":       {"agentura call/internal", "tools/call ocr_document/client"},
		"ocr-agent":      {"tools/call ocr_document/server", "task ocr_document/internal", "resolve file input/internal", "ocr page/internal"},
		"composer-agent": {"GET /files/{id}/server"},
	}
	complete := func(spans []traceSpan) bool {
		have := map[string]bool{}
		for _, s := range spans {
			have[s.service+"|"+s.OperationName+"/"+s.kind] = true
		}
		for svc, names := range want {
			for _, n := range names {
				if !have[svc+"|"+n] {
					return false
				}
			}
		}
		return true
	}
	// The CLI flushed its spans as it ended; the agents' batch processors
	// export within a second (OTEL_BSP_SCHEDULE_DELAY), Jaeger stores them as
	// they come.
	// Jaeger also holds the transcript's `agentura call`, a trace without
	// the composer: the test's is the one of the composer's download span.
	var tr jaegerTrace
	var spans []traceSpan
	deadline := time.Now().Add(60 * time.Second)
	for {
		tr, spans = jaegerTrace{}, nil
		for _, cand := range jaegerTraces(t, jaeger, "agentura") {
			s := spansOf(cand)
			if slices.ContainsFunc(s, func(s traceSpan) bool { return s.OperationName == "agentura call" }) &&
				(tr.TraceID == "" || slices.ContainsFunc(s, func(s traceSpan) bool { return s.service == "composer-agent" })) {
				tr, spans = cand, s
			}
		}
		if complete(spans) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Complete, the trace may still gain the last poll's server span (its
	// agent's next batch): take it once two reads 1.5 s apart agree.
	for n := -1; complete(spans) && len(spans) != n && time.Now().Before(deadline); {
		n = len(spans)
		time.Sleep(1500 * time.Millisecond)
		for _, cand := range jaegerTraces(t, jaeger, "agentura") {
			if cand.TraceID == tr.TraceID {
				tr, spans = cand, spansOf(cand)
			}
		}
	}
	t.Logf("trace %s as Jaeger's query API returns it (%s after the start):\n%s", tr.TraceID, time.Since(start).Round(time.Second), traceTree(spans))
	if tr.TraceID == "" {
		t.Fatalf("Jaeger at %s holds no trace of the CLI's `agentura call` after 60 s", jaeger)
	}
	if !complete(spans) {
		t.Fatalf("trace %s lacks spans after 60 s; want %v", tr.TraceID, want)
	}

	byID := map[string]traceSpan{}
	services := map[string]bool{}
	for _, s := range spans {
		byID[s.SpanID] = s
		services[s.service] = true
		if s.TraceID != tr.TraceID {
			t.Errorf("span %s of %s is in trace %s, not %s", s.OperationName, s.service, s.TraceID, tr.TraceID)
		}
	}
	if len(services) != 3 {
		t.Errorf("the trace holds the services %v; want agentura, ocr-agent and composer-agent alone", services)
	}
	find := func(service, name, kind string) []traceSpan {
		var out []traceSpan
		for _, s := range spans {
			if s.service == service && s.OperationName == name && s.kind == kind {
				out = append(out, s)
			}
		}
		return out
	}
	parentOf := func(s traceSpan) traceSpan { return byID[s.parent] }
	// The root: the CLI's command.
	for _, s := range find("agentura", "agentura call", "internal") {
		if s.parent != "" {
			t.Errorf("agentura call has a parent %s; want it the root", s.parent)
		}
	}
	// The OCR agent's server span is the child of the CLI's client span.
	for _, s := range find("ocr-agent", "tools/call ocr_document", "server") {
		if p := parentOf(s); p.service != "agentura" || p.OperationName != "tools/call ocr_document" || p.kind != "client" {
			t.Errorf("the OCR agent's tools/call span's parent is %q of %q (%s); want the CLI's client span", p.OperationName, p.service, p.kind)
		}
	}
	// Every server span of an agent is the child of a span of another
	// process: the CLI's request, or (the composer's download) the OCR
	// agent's fetch.
	for _, s := range spans {
		if s.kind == "server" {
			if p, ok := byID[s.parent]; !ok || p.service == s.service {
				t.Errorf("%s's server span %q has the parent %q of %q; want a span of its caller", s.service, s.OperationName, p.OperationName, p.service)
			}
		}
	}
	// The composer's download span is the child of the OCR agent's input resolution.
	for _, s := range find("composer-agent", "GET /files/{id}", "server") {
		p := parentOf(s)
		if p.service != "ocr-agent" || p.OperationName != "resolve file input" {
			t.Errorf("the composer's GET /files/{id} span's parent is %q of %q; want the OCR agent's resolve file input", p.OperationName, p.service)
		}
		// ocr_document is a long tool: its work is an MCP task, under the call's span.
		if gp := parentOf(p); gp.OperationName != "task ocr_document" || gp.service != "ocr-agent" ||
			parentOf(gp).OperationName != "tools/call ocr_document" {
			t.Errorf("resolve file input's parent is %q of %q; want the OCR agent's task ocr_document under its tools/call span", gp.OperationName, gp.service)
		}
		if st := s.tag("http.response.status_code"); st != "200" {
			t.Errorf("the composer's download answered %s; want 200", st)
		}
	}
	// Every span is one docs/observability.md names.
	doc, err := os.ReadFile(filepath.Join(d.root, "docs", "observability.md"))
	must(t, err, "read docs/observability.md")
	for _, s := range spans {
		if !strings.Contains(string(doc), "`"+s.OperationName+"`") {
			t.Errorf("span %q (%s) is not named in docs/observability.md", s.OperationName, s.service)
		}
	}

	// Nothing secret: no token, no file bytes in names, tags, logs or the
	// processes' tags.
	secret := func(where, v string) {
		switch {
		case strings.Contains(v, "token="), strings.Contains(v, token):
			t.Errorf("%s holds a download token: %.200s", where, v)
		case strings.Contains(v, "%PDF"), strings.Contains(v, "JVBERi"), len(v) > 1024:
			t.Errorf("%s holds file bytes (%d characters): %.200s", where, len(v), v)
		}
	}
	for _, s := range spans {
		where := s.service + " " + s.OperationName
		secret(where, s.OperationName)
		for _, tg := range s.Tags {
			secret(where+" tag "+tg.Key, fmt.Sprint(tg.Value))
		}
		for _, l := range s.Logs {
			for _, f := range l.Fields {
				secret(where+" log "+f.Key, fmt.Sprint(f.Value))
			}
		}
	}
	for _, p := range tr.Processes {
		for _, tg := range p.Tags {
			secret(p.ServiceName+" process tag "+tg.Key, fmt.Sprint(tg.Value))
		}
	}
}
