package a2acall_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/a2acall"
	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/internal/testkit/testagent"
)

// Send tells the task's status updates as they come (an agent's progress
// reports), and a caller that gives up cancels the task at the agent: the
// tool sees its context end. (a2a-go runs a task detached from the
// request: without tasks/cancel it would run on.)
func TestSendStatusAndCancel(t *testing.T) {
	srv := serveAgent(t, testagent.Options{})
	held := make(chan error, 1)
	agentcore.AddTool(srv.Service, agentcore.Tool{Name: "hold", Description: "reports progress until it is cancelled"},
		func(ctx context.Context, call *agentcore.Call, in struct{}) (*agentcore.Result, error) {
			limit := time.After(time.Minute)
			for i := 1; ; i++ {
				call.Progress(float64(i), 10, "holding")
				select {
				case <-ctx.Done():
					held <- ctx.Err()
					return nil, ctx.Err()
				case <-limit:
					held <- errors.New("never cancelled")
					return agentcore.TextResult("held"), nil
				case <-time.After(100 * time.Millisecond):
				}
			}
		})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var seen []a2acall.Status
	_, err := (&a2acall.Client{}).Send(ctx, srv.Base, a2acall.Request{Skill: "hold", Text: "hold on", Status: func(s a2acall.Status) {
		seen = append(seen, s)
		if s.Text == "holding" {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "was cancelled at the agent") {
		t.Errorf("Send after the caller gave up: %v, want context.Canceled and the task cancelled at the agent", err)
	}
	if len(seen) == 0 || seen[len(seen)-1].State != "working" || seen[len(seen)-1].Total != 10 || seen[len(seen)-1].TaskID == "" {
		t.Errorf("status updates seen: %+v, want a working update with the progress report and the task id", seen)
	}
	select {
	case err := <-held:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the agent's tool ended with %v, want it cancelled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the agent's tool was not cancelled")
	}
}
