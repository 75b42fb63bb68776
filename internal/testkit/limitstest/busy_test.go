package limitstest

import (
	"strings"
	"sync"
	"testing"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// With one call slot taken, a second call waits AGENT_QUEUE_TIMEOUT and is
// refused with a tool error that says the agent is busy and to try again;
// once the slot is free, calls run again.
func TestBusyAgentRefusesCalls(t *testing.T) {
	a := mcptest.StartAgent(t, agentBin, "AGENT_MAX_CONCURRENT_CALLS=1", "AGENT_QUEUE_TIMEOUT=300ms")
	t.Cleanup(func() { a.Stop(t) })
	holder, _ := mcptest.Connect(t, a.URL+"/mcp")
	other, _ := mcptest.Connect(t, a.URL+"/mcp")

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, err := mcptest.TryCallTool(holder, "sleep", map[string]any{"millis": 3000})
		if err != nil || res.IsError {
			t.Errorf("the call holding the slot failed: %v %v", err, res)
		}
	}()
	waitFor(t, a, "agentura_tool_calls_running 1")

	res := mcptest.CallTool(t, other, "sleep", map[string]any{"millis": 1})
	text := mcptest.Text(res)
	if !res.IsError || !strings.Contains(text, "agent busy") || !strings.Contains(text, "try again") {
		t.Fatalf("second call: want a tool error saying the agent is busy and to try again, got error=%v %q", res.IsError, text)
	}
	if !strings.Contains(text, "AGENT_MAX_CONCURRENT_CALLS") {
		t.Errorf("the refusal does not name the setting: %q", text)
	}
	wg.Wait()
	if m := metric(t, a, `agentura_refused_total{reason="busy"}`); m != `agentura_refused_total{reason="busy"} 1` {
		t.Errorf("metric: got %q", m)
	}
	mcptest.MustSucceed(t, "sleep", mcptest.CallTool(t, other, "sleep", map[string]any{"millis": 1}))
}
