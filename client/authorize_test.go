package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/transfer/mcpfile"
)

type oddParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type oddResult struct {
	mcp.ResultBase
	File any `json:"file"`
}

// AuthorizeUpload and AuthorizeDownload return the answer as sent beside
// the decoded one, and the answer also when it is not of the draft's shape
// (with an error saying so): a host that checks servers judges it.
func TestAuthorizeAnswersAsSent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	s := mcp.NewServer(&mcp.Implementation{Name: "odd", Version: "1"}, nil)
	mcp.AddReceivingCustomMethod(s, mcpfile.MethodAuthorizeUpload, func(context.Context, *mcp.ServerSession, *oddParams) (*oddResult, error) {
		return &oddResult{File: map[string]any{"uri": 5}}, nil // a number where the draft has a string
	})
	mcp.AddReceivingCustomMethod(s, mcpfile.MethodAuthorizeDownload, func(_ context.Context, _ *mcp.ServerSession, p *oddParams) (*oddResult, error) {
		return &oddResult{File: map[string]any{"uri": p.URI, "size": 3}}, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	client.RegisterFileMethods(c)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	_, raw, err := client.AuthorizeUpload(ctx, cs, mcpfile.AuthorizeUploadParams{Name: "a.txt"})
	if err == nil || !strings.Contains(err.Error(), "not of the draft's shape") || !strings.Contains(string(raw), `"uri":5`) {
		t.Errorf("a malformed answer: %v, raw %s; want an error and the answer as sent", err, raw)
	}
	got, raw, err := client.AuthorizeDownload(ctx, cs, mcpfile.AuthorizeDownloadParams{URI: "mcp-file://odd/1"}, nil)
	if err != nil || got.File.URI != "mcp-file://odd/1" || got.File.Size == nil || *got.File.Size != 3 || !strings.Contains(string(raw), `"size":3`) {
		t.Errorf("a download answer: %+v, raw %s, %v", got, raw, err)
	}
}
