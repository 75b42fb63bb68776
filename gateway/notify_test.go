package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/gateway"
)

// Notifications between a host and an agent through the gateway: both are
// go-sdk peers (the agent on real HTTP, the host in memory), the gateway the
// real one. The gateway speaks the newest revision the agent serves: over
// initialize and a session (2025-11-25) with a stateful agent, and
// 2026-07-28 with a stateless one, where it asks for log messages in each
// call's _meta, list changes come over subscriptions/listen and a dropped
// request is the cancellation.
func TestNotificationsPassThrough(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(map[bool]string{false: "2025-11-25", true: "2026-07-28"}[stateless], func(t *testing.T) { testNotificationsPassThrough(t, stateless) })
	}
}

func testNotificationsPassThrough(t *testing.T, stateless bool) {
	agent := mcp.NewServer(&mcp.Implementation{Name: "notifier", Version: "1"}, nil)
	started, cancelled := make(chan struct{}), make(chan struct{})
	mcp.AddTool(agent, &mcp.Tool{Name: "work", Description: "works"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "w", Data: "fetching http://agent.example/files/1/a.pdf?sig=SECRET"})
		if tok := req.Params.GetProgressToken(); tok != nil {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half way"})
			// As a real agent's work would: the go-sdk handles incoming
			// notifications on a queue of their own, so progress sent an
			// instant before the result may be handled after it, when the
			// gateway drops it (no progress after a call's end, as MCP says).
			time.Sleep(300 * time.Millisecond)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	mcp.AddTool(agent, &mcp.Tool{Name: "wait", Description: "waits to be cancelled"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, nil, ctx.Err()
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return agent },
		&mcp.StreamableHTTPOptions{Stateless: stateless, PropagateRequestCancellation: true}))
	defer ts.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.New(ctx, gateway.Config{Agents: []gateway.Agent{{URL: ts.URL}}, Roots: []string{t.TempDir()}, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()

	var mu sync.Mutex
	var progress, logs []string
	listChanged := make(chan struct{}, 8)
	host := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, fmt.Sprintf("%v: %s", req.Params.ProgressToken, req.Params.Message))
			mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			mu.Lock()
			logs = append(logs, fmt.Sprintf("%s %s %v", req.Params.Level, req.Params.Logger, req.Params.Data))
			mu.Unlock()
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged <- struct{}{} },
	})
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := host.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}

	params := &mcp.CallToolParams{Name: "work", Arguments: map[string]any{}}
	params.SetProgressToken("host-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("work: %v %+v", err, res)
	}
	waitFor(t, &mu, func() bool { return len(progress) > 0 && len(logs) > 0 }, func() string { return fmt.Sprintf("progress %q, logs %q", progress, logs) })
	mu.Lock()
	if !slices.ContainsFunc(progress, func(p string) bool { return strings.HasPrefix(p, "host-1: half way") }) {
		t.Errorf("progress the host saw: %q, want the agent's under the host's token", progress)
	}
	if len(logs) != 1 || !strings.HasPrefix(logs[0], "info notifier/w fetching http://agent.example/files/1/a.pdf") || strings.Contains(logs[0], "SECRET") {
		t.Errorf("logs the host saw: %q, want the agent's, named after it, without the URL's token", logs)
	}
	mu.Unlock()

	// A tool the agent adds reaches the host's list, and the host is told.
	for len(listChanged) > 0 {
		<-listChanged
	}
	mcp.AddTool(agent, &mcp.Tool{Name: "late", Description: "added later"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	select {
	case <-listChanged:
	case <-time.After(20 * time.Second):
		t.Fatal("the host was not told that the tool list changed")
	}
	waitFor(t, &mu, func() bool {
		for tool, err := range cs.Tools(ctx, nil) {
			if err == nil && tool.Name == "late" {
				return true
			}
		}
		return false
	}, func() string { return "the host's tools lack late" })

	// A host's cancellation reaches the agent's call.
	cctx, ccancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
		done <- err
	}()
	<-started
	ccancel()
	select {
	case <-cancelled:
	case <-time.After(20 * time.Second):
		t.Fatal("the agent's call was not cancelled when the host cancelled")
	}
	<-done
}

// waitFor polls cond for up to 20 seconds; state says what was seen.
func waitFor(t *testing.T, mu *sync.Mutex, cond func() bool, state func() string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		ok := cond()
		mu.Unlock()
		if ok {
			return
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Fatalf("not within 20s: %s", state())
}
