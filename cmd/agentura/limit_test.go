package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// --max-message sets the cap on one message for the commands that talk to
// an agent, and for the gateway (where max_message_bytes in --config says
// the same, and the flag wins).
func TestMaxMessageFlag(t *testing.T) {
	endpoint := largeToolsAgent(t, false, 4, 1<<10) // about 4.3 KiB
	r := runCLI(t, t.TempDir(), "tools", endpoint, "--max-message", "2KiB")
	if r.code != exitFailed || !strings.Contains(r.stderr, "the answer of "+endpoint+" to tools/list passed 2 KiB") {
		t.Errorf("tools --max-message 2KiB: %s\nwant a failure naming the agent and the cap", r)
	}
	if r := runCLI(t, t.TempDir(), "tools", endpoint, "--max-message", "8KiB"); r.code != exitOK || !strings.Contains(r.stdout, "t3") {
		t.Errorf("tools --max-message 8KiB: %s\nwant the four tools", r)
	}
	r = runCLI(t, t.TempDir(), "check", endpoint, "--max-message", "2KiB")
	if r.code != exitFailed || !strings.Contains(r.stdout, "passed 2 KiB") {
		t.Errorf("check --max-message 2KiB: %s\nwant the tools point failed naming the cap", r)
	}

	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "gw.yaml")
	os.WriteFile(cfgFile, []byte("agents: [{url: http://localhost:8001}]\nmax_message_bytes: 65536\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want int64
	}{
		{[]string{"http://localhost:8001/mcp"}, 0},
		{[]string{"--max-message", "64MiB", "http://localhost:8001/mcp"}, 64 << 20},
		{[]string{"--config", cfgFile}, 64 << 10},
		{[]string{"--config", cfgFile, "--max-message", "1MiB"}, 1 << 20},
	} {
		cfg, _, err := parseGatewayArgs(tc.args, io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if cfg.MaxMessageBytes != tc.want {
			t.Errorf("%v: MaxMessageBytes %d, want %d", tc.args, cfg.MaxMessageBytes, tc.want)
		}
	}
}

// largeToolsAgent is a go-sdk agent with the tool "echo" that answers
// tools/list with n tools of size-byte descriptions, as one JSON body or
// one SSE event, streamed until the client stops reading; it returns the
// MCP endpoint.
func largeToolsAgent(t *testing.T, sse bool, n, size int) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "large-tools", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	desc := bytes.Repeat([]byte("d"), size)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &m) != nil || m.Method != "tools/list" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
			return
		}
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: ")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`, m.ID)
		for i := range n {
			if i > 0 {
				io.WriteString(w, ",")
			}
			fmt.Fprintf(w, `{"name":"t%d","inputSchema":{"type":"object"},"description":"`, i)
			if _, err := w.Write(desc); err != nil {
				return
			}
			io.WriteString(w, `"}`)
		}
		io.WriteString(w, "]}}\n\n")
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}
