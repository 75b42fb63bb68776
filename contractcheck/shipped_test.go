package contractcheck_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/composer"
	"github.com/agentura/agentura/agents/ocr"
	"github.com/agentura/agentura/contractcheck"
	"github.com/agentura/agentura/examples/a2apipeline"
	"github.com/agentura/agentura/examples/fileagent"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/testagent"
)

// listTools registers an agent's tools on a fresh service and returns its
// tools/list as an MCP client reads it.
func listTools(t *testing.T, register func(*agentcore.Service) error) []*mcp.Tool {
	t.Helper()
	cfg := agentcore.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PublicURL: "http://agent.test", CleanupSchedule: "@every 1h"}
	svc, err := agentcore.New(agentcore.Info{Name: "shipped", Version: "0"}, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	if err := register(svc); err != nil {
		t.Fatal(err)
	}
	serverT, clientT := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := svc.MCPServer().Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "section5", Version: "0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		ss.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// Every tool of every agent this repository ships, and of its test agent,
// declares its file inputs as SEP-2631 §5 says, read literally: each
// x-mcp-file on a URI string property or on an array's items (issue 37).
func TestShippedAgentsMeetSection5(t *testing.T) {
	for _, a := range []struct {
		name     string
		register func(*agentcore.Service) error
	}{
		{"fileagent", fileagent.Register},
		{"composer", composer.Register},
		{"ocr", ocr.Register},
		{"a2apipeline", func(svc *agentcore.Service) error {
			return a2apipeline.Register(svc, a2apipeline.Target{AgentURL: "http://peer.test", Skill: "inspect_file"})
		}},
		{"testagent", testagent.Register},
	} {
		t.Run(a.name, func(t *testing.T) {
			tools := listTools(t, a.register)
			declared := 0
			for _, tool := range tools {
				if tool.Meta["openai/fileParams"] != nil {
					declared++
				}
			}
			if declared == 0 {
				t.Fatalf("no tool of %s declares a file input; the test reads nothing", a.name)
			}
			if faults := contractcheck.FileInputFaults(tools); len(faults) > 0 {
				t.Errorf("SEP-2631 §5 refuses %s's tools:\n%s", a.name, strings.Join(faults, "\n"))
			}
		})
	}
}

// Our agents judged by SEP-2631 alone: the example agent and the composer
// (whose file input sits in an array's items' field) fail no point, the
// x-mcp-file point (§5) among them, over HTTP as a host of the draft meets them.
func TestOurAgentsByTheStandard(t *testing.T) {
	for name, bin := range map[string]*string{"fileagent": &fileagentBin, "composer": &composerBin} {
		t.Run(name, func(t *testing.T) {
			a := mcptest.StartAgent(t, *bin)
			r := runStandard(t, a.URL+"/mcp", contractcheck.Options{ExpiryWait: -1})
			if failed := r.Failed(); len(failed) > 0 {
				t.Errorf("failed %v, want none\n%s", failed, reportText(r))
			}
			expect(t, r, "", map[string]wanted{contractcheck.PointMCPFile: {contractcheck.Pass, nil}})
		})
	}
}
