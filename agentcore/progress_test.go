package agentcore

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore/internal/mcpbind"
	"github.com/agentura/agentura/agentcore/internal/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The rate limit lets a burst through, then one report per interval; it
// drops a report below an earlier one and always lets the end through, once.
func TestProgressRateLimit(t *testing.T) {
	var p progressState
	now := time.Now()
	sent := 0
	for i := range 1000 { // a tight loop
		if p.allow(float64(i), 1000, now) {
			sent++
		}
	}
	if sent != progressBurst {
		t.Errorf("a tight loop of 1000 reports sent %d, want the burst of %d", sent, progressBurst)
	}
	if !p.allow(1000, 1000, now) {
		t.Error("the report reaching the total was dropped")
	}
	if p.allow(1000, 1000, now.Add(time.Second)) {
		t.Error("the end was told twice")
	}
	var q progressState
	q.allow(5, 10, now)
	if q.allow(4, 10, now.Add(time.Second)) {
		t.Error("a report below an earlier one went out")
	}
	if !q.allow(6, 10, now.Add(time.Second)) {
		t.Error("a report after the interval was dropped")
	}
}

// A large URL input is reported to a client that asked for info logs, every
// transport.FetchReportEvery bytes, as Call.Log messages: asked with logging/setLevel
// on 2025-11-25, with the logLevel in the request's _meta on 2026-07-28.
func TestFetchReportedToClient(t *testing.T) {
	for _, revision := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(revision, func(t *testing.T) { testFetchReportedToClient(t, revision) })
	}
}

func testFetchReportedToClient(t *testing.T, revision string) {
	body := bytes.Repeat([]byte("x"), 2*transport.FetchReportEvery+10)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	defer origin.Close()
	originURL, _ := url.Parse(origin.URL)
	svc, srv := serveTestService(t, func(c *Config) { c.FetchAllowHosts = []string{originURL.Host} })
	AddTool(svc, Tool{Name: "size"}, func(ctx context.Context, call *Call, in struct {
		Source FileAttachment `json:"source"`
	}) (*Result, error) {
		f, err := call.ResolveFileAttachment(ctx, in.Source)
		if err != nil {
			return nil, err
		}
		return TextResult(strconv.FormatInt(f.Size, 10)), nil
	})
	var mu sync.Mutex
	var logs []*mcp.LoggingMessageParams
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			mu.Lock()
			logs = append(logs, req.Params)
			mu.Unlock()
		},
	})
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var meta mcp.Meta
	if revision >= mcpbind.RevisionSessionless {
		meta = mcp.Meta{mcp.MetaKeyLogLevel: "info"}
	} else if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "size", Arguments: map[string]any{"source": origin.URL + "/big.bin"}, Meta: meta})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) != 2 {
		t.Fatalf("%d log messages for a fetch of %d bytes, want 2: %+v", len(logs), len(body), logs)
	}
	data, _ := logs[1].Data.(map[string]any)
	if logs[1].Level != "info" || data["message"] != "fetching an input" || data["received_bytes"].(float64) < 2*transport.FetchReportEvery || data["total_bytes"] != float64(len(body)) {
		t.Errorf("second log message %+v", logs[1])
	}
}
