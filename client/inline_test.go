package client_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/internal/testkit/drafttest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/thirdparty"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inlineSession connects a middleware whose inline limit is 64 KiB (so
// that every file below is "large") to endpoint, logging into log.
func inlineSession(t *testing.T, endpoint string, tusMinBytes int64, log *mcptest.SyncBuffer) (*client.Registry, *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	reg, err := client.NewRegistry("", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	base, _ := client.BaseURLFromEndpoint(endpoint)
	mw, err := client.New(client.Config{Registry: reg, BaseURL: base, InlineMaxBytes: 64 << 10, TusMinBytes: tusMinBytes,
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "client-test", Version: "0"}, nil)
	mw.Attach(c)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: client.WithTasks(nil), DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return reg, cs
}

// A server whose file field declares only inline transfer (x-mcp-file
// transferModes ["inline"], maxSize 16 MiB) gets a 12 MiB file inline,
// though it is far over the host's inline limit, and the log line says
// how and why; a file over its maxSize is refused before anything is sent,
// naming the limit.
func TestInlineOnlyFieldGetsLargeFileInline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	d := drafttest.StartWith(t, drafttest.Options{MaxSize: 16 << 20})
	var log mcptest.SyncBuffer
	reg, cs := inlineSession(t, d.Endpoint(), -1, &log)
	add := func(name string, size int) {
		if _, err := reg.Add(ctx, name, bytes.NewReader(bytes.Repeat([]byte("x"), size)), client.SourceUpload); err != nil {
			t.Fatal(err)
		}
	}
	add("big.txt", 12<<20)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: map[string]any{"document": "big.txt"}})
	if err != nil {
		t.Fatalf("count of a 12 MiB file: %v; want it sent inline", err)
	}
	if res.IsError || !strings.Contains(modelText(res), "12582912 bytes") {
		t.Fatalf("count of a 12 MiB file: %q; want it sent inline", modelText(res))
	}
	if l := log.String(); !strings.Contains(l, "name=big.txt") || !strings.Contains(l, "how=inline") || !strings.Contains(l, "only inline") {
		t.Errorf("the log does not say the file went inline because the field takes only inline files:\n%s", l)
	}

	add("huge.txt", 16<<20+1)
	before := len(d.Args())
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: map[string]any{"document": "huge.txt"}})
	if err == nil || !strings.Contains(err.Error(), "at most 16777216 bytes (its maxSize)") {
		t.Errorf("a file over maxSize: %v; want a refusal naming the limit", err)
	}
	if len(d.Args()) != before {
		t.Errorf("a refused file reached the server")
	}
}

// A third-party server whose file fields are marked x-file but that has no
// /uploads (nor tus) gets a file over the host's inline limit inline: the
// upload's 404 tells the host that inline is the only way it takes files,
// and the log line says so.
func TestNoUploadEndpointFallsBackInline(t *testing.T) {
	for _, tc := range []struct {
		name        string
		tusMinBytes int64
	}{{"post", -1}, {"tus", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			endpoint := thirdparty.Start(t, false, "2025-11-25").Endpoint
			var log mcptest.SyncBuffer
			reg, cs := inlineSession(t, endpoint, tc.tusMinBytes, &log)
			if _, err := reg.Add(ctx, "notes.txt", bytes.NewReader(bytes.Repeat([]byte("y"), 1<<20)), client.SourceUpload); err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "size", Arguments: map[string]any{"source": "notes.txt"}})
			if err != nil {
				t.Fatalf("size of a 1 MiB file: %v; want it inline", err)
			}
			if res.IsError || !strings.Contains(modelText(res), "got data:text/plain") {
				t.Fatalf("size of a 1 MiB file: %q; want it inline", modelText(res))
			}
			if l := log.String(); !strings.Contains(l, "how=inline") || !strings.Contains(l, "offers no upload endpoint") {
				t.Errorf("the log does not say why the file went inline:\n%s", l)
			}
		})
	}
}
