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
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := contractcheck.Run(ctx, contractcheck.Target{URL: ts.URL + "/mcp"}, contractcheck.Options{})
	expect(t, r, "", map[string]wanted{
		contractcheck.PointTools:        {contractcheck.Pass, []string{"1 tool"}},
		contractcheck.PointUploads:      {contractcheck.NotOffered, []string{"415 Unsupported Media Type", "no upload endpoint there"}},
		contractcheck.PointFileTransfer: {contractcheck.NotOffered, []string{"HTTP 400 Bad Request", "-32601"}},
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

	r = contractcheck.Run(ctx, contractcheck.Target{URL: ts.URL + "/mcp"}, contractcheck.Options{Standard: true})
	if failed := r.Failed(); len(failed) > 0 {
		t.Errorf("checked by SEP-2631 alone, failed %v\n%s", failed, reportText(r))
	}
	expect(t, r, "", map[string]wanted{
		contractcheck.PointMCPFile:     {contractcheck.NotOffered, []string{"x-mcp-file"}},
		contractcheck.PointUpload:      {contractcheck.NotOffered, nil},
		contractcheck.PointUnknownFile: {contractcheck.NotOffered, nil},
	})
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
