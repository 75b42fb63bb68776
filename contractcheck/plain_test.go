package contractcheck_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/contractcheck"
	"github.com/agentura/agentura/internal/testkit/drafttest"
	"github.com/agentura/agentura/transfer"
)

// A plain go-sdk server whose MCP handler answers every path, with a tool
// that takes a file marked x-file and names a file by resource_link only:
// /uploads answers 415 and files/authorizeUpload a plain 400, both "not
// offered" (as for a Python server), not a failure and not a raw "Bad
// Request"; the result's file without a download_url fails output-fields,
// and the points after it say that, not that the tool produced no file.
// Checked by SEP-2631 alone, it fails nothing: it declares no file input
// of the draft.
func TestPlainGoSDKServer(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "echoes a text file", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"source": map[string]any{"type": "string", "x-file": true}},
	}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echoed"}, &mcp.ResourceLink{URI: "mem://plain/echo.txt", Name: "echo.txt"}}}, nil
	})
	r := checkHandler(t, everyPath(s), contractcheck.Options{})
	expect(t, r, "", map[string]wanted{
		contractcheck.PointTools:        {contractcheck.Pass, []string{"1 tool"}},
		contractcheck.PointUploads:      {contractcheck.NotOffered, []string{"415 Unsupported Media Type", "has no upload endpoint", "declares none"}},
		contractcheck.PointFileTransfer: {contractcheck.NotOffered, []string{"does not offer files/authorizeUpload", "HTTP 400 Bad Request", "-32601", "neither"}},
		contractcheck.PointOutputFields: {contractcheck.Fail, []string{"names a file", "no download_url"}},
		contractcheck.PointOutputLinks:  {contractcheck.Skip, []string{"no download_url (output-fields)"}},
		contractcheck.PointDownload:     {contractcheck.Skip, []string{"no download_url (output-fields)"}},
		contractcheck.PointToken:        {contractcheck.Skip, []string{"no download_url (output-fields)"}},
	})
	for _, p := range r.Points {
		if strings.Contains(p.Detail, "produced no file") || strings.Contains(p.Detail, "1 tools") {
			t.Errorf("%s: %q", p.ID, p.Detail)
		}
	}

	r = checkHandler(t, everyPath(s), contractcheck.Options{Standard: true})
	if failed := r.Failed(); len(failed) > 0 {
		t.Errorf("checked by SEP-2631 alone, failed %v\n%s", failed, reportText(r))
	}
	expect(t, r, "", map[string]wanted{
		contractcheck.PointMCPFile:     {contractcheck.NotOffered, []string{"x-mcp-file"}},
		contractcheck.PointUpload:      {contractcheck.NotOffered, nil},
		contractcheck.PointUnknownFile: {contractcheck.NotOffered, nil},
	})
}

// The plain go-sdk server of issue 41: one tool that takes and returns
// nothing about files, the MCP handler on every path. The check fails
// file-params (a host has no file parameter to fill) and says why each
// later point has nothing to check: no tool was called with a file, not
// that one produced none; the draft's file transfer is not offered, in
// words, not a raw "Bad Request" skip; "1 tool", never "1 tools".
func TestPlainGoSDKServerWithoutFiles(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "greets"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Name string `json:"name"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + in.Name}}}, nil, nil
	})
	r := checkHandler(t, everyPath(s), contractcheck.Options{})
	expect(t, r, "", map[string]wanted{
		contractcheck.PointTools:        {contractcheck.Pass, []string{"1 tool"}},
		contractcheck.PointFileParams:   {contractcheck.Fail, []string{"no tool marks a parameter", "1 tool listed", "take no file"}},
		contractcheck.PointInline:       {contractcheck.Skip, []string{"no tool has a file parameter"}},
		contractcheck.PointUploads:      {contractcheck.Skip, []string{"no tool takes a file"}},
		contractcheck.PointOutputFields: {contractcheck.Skip, []string{"no tool was called with a file (input-inline)"}},
		contractcheck.PointOutputLinks:  {contractcheck.Skip, []string{"no tool was called with a file (input-inline)"}},
		contractcheck.PointDownload:     {contractcheck.Skip, []string{"no tool was called with a file (input-inline)"}},
		contractcheck.PointToken:        {contractcheck.Skip, []string{"no tool was called with a file (input-inline)"}},
		contractcheck.PointFileTransfer: {contractcheck.NotOffered, []string{"does not offer files/authorizeUpload", "HTTP 400 Bad Request", "-32601", "neither"}},
	})
	if failed := r.Failed(); len(failed) != 1 || failed[0] != contractcheck.PointFileParams {
		t.Errorf("failed %v, want [file-params] alone\n%s", failed, reportText(r))
	}
	if line := r.FailedLine(); line != "1 point failed: file-params" {
		t.Errorf("FailedLine %q", line)
	}
	text := reportText(r)
	for _, wrong := range []string{"produced no file", "1 tools", "(s)"} {
		if strings.Contains(text, wrong) {
			t.Errorf("the report says %q:\n%s", wrong, text)
		}
	}
	if !strings.HasSuffix(text, "\n13 points: 2 passed, 1 failed, 8 skipped, 2 not offered (optional)\n") {
		t.Errorf("the summary line:\n%s", text)
	}
}

// /uploads is optional, so an answer that is not an upload endpoint's is
// "not offered" — unless the server declares the endpoint (agentura's
// agents name it in their agent card): then it fails, however it
// answered. An upload endpoint's own refusal ({"error": …}) fails too.
func TestUploadsDeclaredOrNot(t *testing.T) {
	card := `{"name": "declares", "capabilities": {"extensions": [{"uri": "` + transfer.A2AUploadsExtension + `", "params": {"url": "http://x/uploads"}}]}}`
	refuse := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error": "the body is empty"}`))
	}
	for _, tc := range []struct {
		name    string
		card    string           // the agent card served, "" for none
		uploads http.HandlerFunc // what answers /uploads, nil for the MCP handler
		want    wanted
	}{
		{"MCP handler on every path, no card", "", nil,
			wanted{contractcheck.NotOffered, []string{"has no upload endpoint", "415 Unsupported Media Type", "declares none"}}},
		{"404, a card without the extension", `{"name": "a2a", "capabilities": {}}`, http.NotFound,
			wanted{contractcheck.NotOffered, []string{"has no upload endpoint", "404 Not Found"}}},
		{"MCP handler on every path, declared", card, nil,
			wanted{contractcheck.Fail, []string{"415 Unsupported Media Type", "declares the endpoint", transfer.A2AUploadsExtension}}},
		{"404, declared", card, http.NotFound,
			wanted{contractcheck.Fail, []string{"404 Not Found", "declares the endpoint"}}},
		{"an upload endpoint's refusal", "", refuse,
			wanted{contractcheck.Fail, []string{"400 Bad Request: the body is empty"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "uploads", Version: "1"}, nil)
			s.AddTool(&mcp.Tool{Name: "size", Description: "says how long a text file is", InputSchema: map[string]any{
				"type": "object", "properties": map[string]any{"source": map[string]any{"type": "string", "x-file": true}},
			}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "got it"}}}, nil
			})
			mux := http.NewServeMux()
			mux.Handle("/", everyPath(s))
			if tc.card != "" {
				mux.HandleFunc("GET "+transfer.AgentCardPath, func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(tc.card))
				})
			}
			if tc.uploads != nil {
				mux.HandleFunc(transfer.UploadsPath, tc.uploads)
			}
			expect(t, checkHandler(t, mux, contractcheck.Options{}), "", map[string]wanted{contractcheck.PointUploads: tc.want})
		})
	}
}

// everyPath is the go-sdk's streamable HTTP handler of s, as a plain
// go-sdk server mounts it: on every path.
func everyPath(s *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

// checkHandler serves h for the test and checks its /mcp with o.
func checkHandler(t *testing.T, h http.Handler, o contractcheck.Options) *contractcheck.Report {
	t.Helper()
	ts := httptest.NewServer(h)
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return contractcheck.Run(ctx, contractcheck.Target{URL: ts.URL + "/mcp"}, o)
}

// agentura's own check of a server written from SEP-2631 alone: its
// upload-only field gets the file through files/authorizeUpload (no
// "needs the MCP session" error), no URL is asked of a field the draft
// declares, and its FileValue output is seen, output-fields saying what
// this contract wants beside it and that --standard judges by the SEP.
func TestDraftServerByOurContract(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := drafttest.Start(t)
	r := contractcheck.Run(ctx, contractcheck.Target{URL: d.Endpoint()}, contractcheck.Options{})
	expect(t, r, "", map[string]wanted{
		contractcheck.PointFileParams:   {contractcheck.Pass, []string{"--standard"}},
		contractcheck.PointInline:       {contractcheck.Pass, []string{"reverse resolved", "files/authorizeUpload"}},
		contractcheck.PointURL:          {contractcheck.NotOffered, []string{"x-mcp-file alone"}},
		contractcheck.PointOutputFields: {contractcheck.Fail, []string{"FileValues", d.URI("out-"), "--standard"}},
		contractcheck.PointFileTransfer: {contractcheck.Pass, nil},
	})
	if got := d.FilesDeclared(); len(got) == 0 || got[0] != filesCapability {
		t.Errorf("the server saw the files capability %q first; want %s", got, filesCapability)
	}
}
