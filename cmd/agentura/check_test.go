package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/internal/testkit/drafttest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/untrusted"
)

// `agentura check`: a table and status 0 for an agent that meets the
// contract, JSON with --json, status 1 naming the failed point for a server
// that does not, status 2 without a server.
func TestCheckCommand(t *testing.T) {
	a := mcptest.StartAgent(t, agentBin)
	r := runCLI(t, t.TempDir(), "check", a.URL)
	if r.code != exitOK || !strings.Contains(r.stdout, "13 points: 13 passed, 0 failed") ||
		!regexp.MustCompile(`PASS +token`).MatchString(r.stdout) {
		t.Errorf("check of the example agent:\n%s", r)
	}
	r = runCLI(t, t.TempDir(), "check", "--json", a.URL+"/mcp")
	var report struct {
		Tool   string
		Points []struct{ ID, Status string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil || r.code != exitOK || len(report.Points) != 13 || report.Tool != "archive_files" {
		t.Errorf("check --json: %v\n%s", err, r)
	}

	// A server whose tool takes text but marks no file parameter.
	plain := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "1"}, nil)
	mcp.AddTool(plain, &mcp.Tool{Name: "echo", Description: "echoes"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return plain }, nil))
	defer ts.Close()
	r = runCLI(t, t.TempDir(), "check", ts.URL+"/mcp")
	if r.code != exitFailed || !strings.Contains(r.stderr, "1 point failed: file-params") || !strings.Contains(r.stdout, "FAIL         file-params") {
		t.Errorf("check of a server without file parameters:\n%s", r)
	}
	// What it does not offer is said in words (issue 41): the draft's file
	// transfer not offered rather than a raw "Bad Request" skip, no claim
	// that a tool produced no file when none was called, and "1 tool".
	if !regexp.MustCompile(`NOT OFFERED +file-transfer .*\n +the server does not offer files/authorizeUpload \(it answered HTTP 400 Bad Request`).MatchString(r.stdout) ||
		!regexp.MustCompile(`SKIP +output-fields .*\n +no tool was called with a file`).MatchString(r.stdout) ||
		!regexp.MustCompile(`PASS +tools .*\n +1 tool\n`).MatchString(r.stdout) ||
		strings.Contains(r.stdout, "produced no file") || strings.Contains(r.stdout+r.stderr, "(s)") {
		t.Errorf("check of a server without file parameters does not say what is true:\n%s", r)
	}

	if r = runCLI(t, t.TempDir(), "check"); r.code != exitUsage {
		t.Errorf("check without a server:\n%s", r)
	}
}

// `agentura check` fetches nothing off the checked server's origin: a
// server whose download_url lies on another local service fails the
// download point, the report naming that host and --allow-host, and the
// service receives no request; with --allow-host it is fetched from and
// the check passes.
func TestCheckAllowHost(t *testing.T) {
	s := untrusted.Start(t, untrusted.Lures{Download: untrusted.Other, SameLink: true})
	r := runCLI(t, t.TempDir(), "check", s.Endpoint)
	if r.code != exitFailed || !strings.Contains(r.stderr, "2 points failed: output-links, download") ||
		!regexp.MustCompile(`out\.txt: not fetched: .*http://`+regexp.QuoteMeta(s.OtherHost)+` is refused.*--allow-host`).MatchString(r.stdout) {
		t.Errorf("check of a server whose files lie elsewhere:\n%s", r)
	}
	if got := s.Reached(); len(got) > 0 {
		t.Errorf("the other service received %v, want nothing", got)
	}
	r = runCLI(t, t.TempDir(), "check", "--allow-host", s.OtherHost, s.Endpoint)
	if r.code != exitOK || !regexp.MustCompile(`PASS +download `).MatchString(r.stdout) {
		t.Errorf("check with --allow-host %s:\n%s", s.OtherHost, r)
	}
	if got := s.Reached(); len(got) == 0 {
		t.Error("the allowed host received no request")
	}
}

// `agentura check --standard` judges a server by SEP-2631 (at c3cf0eba)
// alone: a server written from the SEP (drafttest) passes, the check
// having declared the files capability (§2) at initialize; --json carries
// the revision and each point's section; the same server with wrong
// digests fails the digest point alone, and the command says so.
func TestCheckStandard(t *testing.T) {
	d := drafttest.Start(t)
	r := runCLI(t, t.TempDir(), "check", "--standard", d.Endpoint())
	if r.code != exitOK || !strings.Contains(r.stdout, "SEP-2631 at modelcontextprotocol c3cf0eba") ||
		!regexp.MustCompile(`PASS +digest .*\(§4, §8\)`).MatchString(r.stdout) || !strings.Contains(r.stdout, "--expiry-wait") {
		t.Errorf("check --standard of a server written from the SEP:\n%s", r)
	}
	if got := d.FilesDeclared(); len(got) == 0 || got[0] != `{"upload":true,"download":true,"transports":["https"]}` {
		t.Errorf("the server saw the files capability %q at initialize; want §2's", got)
	}
	r = runCLI(t, t.TempDir(), "check", "--standard", "--json", "--expiry-wait", "0", d.Endpoint())
	var report struct {
		Standard string
		Points   []struct{ ID, Section, Status string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil || r.code != exitOK || !strings.Contains(report.Standard, "c3cf0eba") ||
		len(report.Points) != 13 || report.Points[2].ID != "x-mcp-file" || report.Points[2].Section != "§5" {
		t.Errorf("check --standard --json: %v\n%s", err, r)
	}

	wrong := drafttest.StartWith(t, drafttest.Options{WrongDigest: true})
	r = runCLI(t, t.TempDir(), "check", "--standard", wrong.Endpoint())
	if r.code != exitFailed || !strings.Contains(r.stderr, "1 point failed: digest") || !regexp.MustCompile(`FAIL +digest`).MatchString(r.stdout) {
		t.Errorf("check --standard of a server with wrong digests:\n%s", r)
	}

	// §5: a marker on a property that is no URI string fails the x-mcp-file point.
	onObject := drafttest.StartWith(t, drafttest.Options{MarkerOnObject: true})
	r = runCLI(t, t.TempDir(), "check", "--standard", "--expiry-wait", "0", onObject.Endpoint())
	if r.code != exitFailed || !strings.Contains(r.stderr, "failed: x-mcp-file") || !strings.Contains(r.stdout, `x-mcp-file on a property of type "object"`) {
		t.Errorf("check --standard of a server with its marker on an object:\n%s", r)
	}
}
