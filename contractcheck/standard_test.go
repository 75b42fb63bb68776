package contractcheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/contractcheck"
	"github.com/agentura/agentura/internal/testkit/drafttest"
)

// The points of a complete standard check, in order.
var standardPoints = []string{
	contractcheck.PointConnect, contractcheck.PointTools, contractcheck.PointMCPFile, contractcheck.PointInline,
	contractcheck.PointUpload, contractcheck.PointInputUpload, contractcheck.PointUploadDigest, contractcheck.PointUploadExpiry,
	contractcheck.PointOutputs, contractcheck.PointDownload, contractcheck.PointSize, contractcheck.PointDigest,
	contractcheck.PointUnknownFile,
}

// filesCapability is capabilities.files as SEP-2631 §2 spells it.
const filesCapability = `{"upload":true,"download":true,"transports":["https"]}`

// expiryProbe is the name the standard check gives the file of its
// expired-descriptor probe (drafttest.Options.ShortLived).
const expiryProbe = "agentura-check-expiry"

// runStandard checks the server at endpoint by SEP-2631 alone.
func runStandard(t *testing.T, endpoint string, o contractcheck.Options) *contractcheck.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o.Standard = true
	return contractcheck.Run(ctx, contractcheck.Target{URL: endpoint}, o)
}

// reportText is the report as a person reads it, for failures.
func reportText(r *contractcheck.Report) string {
	var b bytes.Buffer
	r.WriteText(&b)
	return b.String()
}

// A server written from SEP-2631 alone (drafttest) passes every point of
// the standard check: over 2025-11-25 with its FileValue in
// structuredContent, and over 2026-07-28 without sessions with its
// FileValue in a §8 file content block. The check declared the files
// capability (§2) to it, and each point names its section.
func TestDraftServerMeetsTheStandard(t *testing.T) {
	for _, tc := range []struct {
		name     string
		o        drafttest.Options
		protocol string
		where    string
	}{
		{"2025-11-25, structuredContent", drafttest.Options{ShortLived: expiryProbe}, "2025-11-25", "reverse's structuredContent.result"},
		{"2026-07-28, a file block", drafttest.Options{ShortLived: expiryProbe, Stateless: true, FileBlock: true}, "2026-07-28", "reverse's file block content[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := drafttest.StartWith(t, tc.o)
			r := runStandard(t, d.Endpoint(), contractcheck.Options{})
			var ids []string
			for _, p := range r.Points {
				ids = append(ids, p.ID)
				if p.Status != contractcheck.Pass {
					t.Errorf("%s: %s: %s", p.ID, p.Status, p.Detail)
				}
				if p.Section == "" && p.ID != contractcheck.PointTools {
					t.Errorf("%s names no section of the SEP", p.ID)
				}
			}
			if !slices.Equal(ids, standardPoints) {
				t.Errorf("points %v, want %v", ids, standardPoints)
			}
			if r.Protocol != tc.protocol || r.Standard != contractcheck.StandardRevision || !strings.Contains(r.Standard, "c3cf0eba") {
				t.Errorf("MCP %s judged by %q; want %s, by SEP-2631 at c3cf0eba", r.Protocol, r.Standard, tc.protocol)
			}
			if p, _ := r.Point(contractcheck.PointOutputs); !strings.Contains(p.Detail, tc.where) {
				t.Errorf("outputs: %q does not say the FileValue came in %s", p.Detail, tc.where)
			}
			if got := d.FilesDeclared(); len(got) == 0 || got[0] != filesCapability {
				t.Errorf("the server saw the files capability %q first; want %s (§2)", got, filesCapability)
			}
			if t.Failed() {
				t.Logf("the report:\n%s", reportText(r))
			}
		})
	}
}

// The same server with one deviation at a time fails exactly the point of
// that deviation, naming it in its detail; the JSON report carries the
// failure and the section.
func TestDraftDeviationsNamed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		o     drafttest.Options
		point string
		words []string
	}{
		{"a wrong digest", drafttest.Options{WrongDigest: true}, contractcheck.PointDigest, []string{"reversed.txt", "digest", "MUST verify the digest"}},
		{"a wrong size", drafttest.Options{WrongSize: true}, contractcheck.PointSize, []string{"reversed.txt: 47 bytes received", "states size 48"}},
		{"the marker on a non-string property", drafttest.Options{MarkerOnObject: true}, contractcheck.PointMCPFile, []string{"count.document", `of type "object"`, "§5"}},
		{"an expired descriptor accepted", drafttest.Options{AcceptExpired: true}, contractcheck.PointUploadExpiry, []string{"expired at", "was taken"}},
		{"bytes that miss the digest accepted", drafttest.Options{IgnoreDigest: true}, contractcheck.PointUploadDigest, []string{"not the digest declared", "MUST reject"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.o.ShortLived = expiryProbe
			d := drafttest.StartWith(t, tc.o)
			r := runStandard(t, d.Endpoint(), contractcheck.Options{})
			if failed := r.Failed(); !slices.Equal(failed, []string{tc.point}) {
				t.Errorf("failed %v, want [%s] alone", failed, tc.point)
			}
			p, _ := r.Point(tc.point)
			for _, w := range tc.words {
				if !strings.Contains(p.Detail, w) {
					t.Errorf("%s: the detail lacks %q: %s", tc.point, w, p.Detail)
				}
			}
			raw, _ := json.Marshal(r)
			var back struct {
				Standard string
				Points   []struct{ ID, Section, Status string }
			}
			json.Unmarshal(raw, &back)
			i := slices.IndexFunc(back.Points, func(p struct{ ID, Section, Status string }) bool { return p.ID == tc.point })
			if back.Standard == "" || i < 0 || back.Points[i].Status != string(contractcheck.Fail) || back.Points[i].Section == "" {
				t.Errorf("the JSON report does not carry the failure and its section: %s", raw)
			}
			if t.Failed() {
				t.Logf("the report:\n%s", reportText(r))
			}
		})
	}
}

// The standard check honours transferModes (drafttest's count refuses a
// file URI, its reverse a data: URI, so a mode not listed fails a point),
// sends only data: URIs and file URIs of uploads, and never asks for
// /uploads nor a URL for the server to fetch. Without a wait for expiry,
// the expired-descriptor probe is skipped, saying what to give.
func TestStandardHonoursTransferModes(t *testing.T) {
	d := drafttest.Start(t)
	r := runStandard(t, d.Endpoint(), contractcheck.Options{ExpiryWait: -1})
	if failed := r.Failed(); len(failed) > 0 {
		t.Errorf("failed %v\n%s", failed, reportText(r))
	}
	for _, a := range d.Args() {
		var in struct{ Document string }
		json.Unmarshal([]byte(a), &in)
		if !strings.HasPrefix(in.Document, "data:") && !strings.HasPrefix(in.Document, d.URI("in-")) {
			t.Errorf("a tool got %q, neither a data: URI nor a file URI of an upload", in.Document)
		}
	}
	if p, _ := r.Point(contractcheck.PointUploadExpiry); p.Status != contractcheck.Skip || !strings.Contains(p.Detail, "--expiry-wait") {
		t.Errorf("upload-expiry with no wait: %s %q; want it skipped, naming --expiry-wait", p.Status, p.Detail)
	}
	for _, p := range r.Points {
		if strings.Contains(p.Detail, "/uploads") {
			t.Errorf("%s speaks of /uploads: %s", p.ID, p.Detail)
		}
	}
}

// The standard check sends to and fetches from descriptors only on the
// server's origin or a host the user allows: a server whose descriptors
// point at another service fails the upload point, naming the host and
// --allow-host, and the service receives nothing.
func TestStandardDescriptorsElsewhereNotFollowed(t *testing.T) {
	var mu sync.Mutex
	var reached []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reached = append(reached, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	defer other.Close()
	d := drafttest.StartWith(t, drafttest.Options{DescriptorBase: other.URL})
	r := runStandard(t, d.Endpoint(), contractcheck.Options{ExpiryWait: -1})
	host := strings.TrimPrefix(other.URL, "http://")
	expect(t, r, host, map[string]wanted{
		contractcheck.PointUpload:      {contractcheck.Fail, []string{"not followed", "HOST", "--allow-host"}},
		contractcheck.PointInputUpload: {contractcheck.Skip, nil},
		contractcheck.PointInline:      {contractcheck.Pass, nil},
	})
	mu.Lock()
	defer mu.Unlock()
	if len(reached) > 0 {
		t.Errorf("the other service received %v, want nothing", reached)
	}
}

// The Python example, written to agentura's contract, judged by SEP-2631
// alone: it fails no point, its marker on a URI string property (issue 37);
// declaring transferModes ["inline"], it is asked for no upload it does
// not offer.
func TestPythonServerByTheStandard(t *testing.T) {
	r := runStandard(t, pythonServer(t, ""), contractcheck.Options{})
	if failed := r.Failed(); len(failed) > 0 {
		t.Errorf("failed %v, want none\n%s", failed, reportText(r))
	}
	expect(t, r, "", map[string]wanted{
		contractcheck.PointMCPFile: {contractcheck.Pass, []string{"uppercase_text.source"}},
		contractcheck.PointInline:  {contractcheck.Pass, nil},
		contractcheck.PointUpload:  {contractcheck.NotOffered, []string{"transferModes"}},
	})
}

// FileInputFaults is §5 read literally, on schemas alone: a marker on a
// URI string property or on an array's items passes; one on an anyOf of
// object and string (agentura's schema before issue 37), on an object or
// on a string without "format": "uri" is refused, naming tool and argument.
func TestFileInputFaults(t *testing.T) {
	tool := func(name, props string) *mcp.Tool {
		var s map[string]any
		if err := json.Unmarshal([]byte(`{"type": "object", "properties": `+props+`}`), &s); err != nil {
			t.Fatal(err)
		}
		return &mcp.Tool{Name: name, InputSchema: s}
	}
	const decl = `"x-mcp-file": {"accept": ["application/pdf"], "maxSize": 1000, "transferModes": ["inline", "upload"]}`
	good := []*mcp.Tool{
		tool("one", `{"doc": {"type": "string", "format": "uri", `+decl+`, "x-file": true}}`),
		tool("list", `{"docs": {"type": "array", "x-file": true, "items": {"type": "string", "format": "uri", `+decl+`}}}`),
		tool("nested", `{"embeds": {"type": "array", "items": {"type": "object", "properties": {"content": {"type": "string", "format": "uri", `+decl+`}}}}}`),
		tool("none", `{"text": {"type": "string"}}`),
	}
	if faults := contractcheck.FileInputFaults(good); len(faults) > 0 {
		t.Errorf("§5 schemas refused:\n%s", strings.Join(faults, "\n"))
	}
	for _, tc := range []struct {
		tool *mcp.Tool
		want []string
	}{
		{tool("anyof", `{"doc": {"anyOf": [{"type": "object"}, {"type": "string"}], `+decl+`}}`), []string{"anyof.doc", "anyOf", "§5"}},
		{tool("items", `{"docs": {"type": "array", "items": {"anyOf": [{"type": "object"}, {"type": "string"}], `+decl+`}}}`), []string{"items.docs[]", "anyOf"}},
		{tool("object", `{"doc": {"type": "object", `+decl+`}}`), []string{"object.doc", `of type "object"`}},
		{tool("noformat", `{"doc": {"type": "string", `+decl+`}}`), []string{"noformat.doc", `"format": "uri"`}},
		{tool("boolean", `{"doc": {"type": "string", "format": "uri", "x-mcp-file": true}}`), []string{"boolean.doc", "FileInputDescriptor"}},
	} {
		faults := contractcheck.FileInputFaults([]*mcp.Tool{tc.tool})
		text := strings.Join(faults, "\n")
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: faults %q, want them to name %q", tc.tool.Name, text, w)
			}
		}
	}
}
