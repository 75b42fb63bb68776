package attack

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/s3test"
)

// A task fenced at its lease (fault run of 2026-12-07, 2 of 2): two
// agents on one S3 store with AGENT_TASK_LEASE=6s, a 12 s tool run as a
// task on A, S3 killed 2 s in and started again 7 s later. B found the
// lease out and recorded the task failed while A ran on and committed
// slept.txt 2-3 s later. Now the task is failed on both replicas and no
// output of it is stored, whether the tool heeds its call's end or not;
// the record and the outputs agree.
func TestTaskFencedAtItsLease(t *testing.T) {
	for _, heedless := range []bool{false, true} {
		name := "tool stops with its call"
		if heedless {
			name = "tool ignores its call's end"
		}
		t.Run(name, func(t *testing.T) {
			srv := s3test.Start(t)
			bucket := srv.NewBucket(t)
			bin := faultagentBinary(t)
			env := s3Env(srv, bucket, "AGENT_TASK_LEASE=6s", "AGENT_MCP_STATELESS=true", "AGENT_CLEANUP_SCHEDULE=@every 1h")
			a := mcptest.StartAgent(t, bin, append(env, "AGENT_DATA_DIR="+t.TempDir())...)
			defer a.Stop(t)
			b := mcptest.StartAgent(t, bin, append(env, "AGENT_DATA_DIR="+t.TempDir(), "AGENT_PUBLIC_URL="+a.URL)...)
			defer b.Stop(t)

			tasksExt := map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
			onA := mcptest.NewSessionless(a.URL + "/mcp")
			onA.Extensions = tasksExt
			task := mcptest.Call[startedTask](t, onA, "tools/call", map[string]any{"name": "slow_output", "arguments": map[string]any{"seconds": 12, "heedless": heedless}})
			if task.ResultType != "task" || task.TaskID == "" {
				t.Fatalf("slow_output was not run as a task: %+v", task)
			}
			began := time.Now()
			onB := mcptest.NewSessionless(b.URL + "/mcp")
			onB.Extensions, onB.Owner = tasksExt, onA.Owner

			sleepUntil(began.Add(2 * time.Second))
			srv.Kill(t)
			sleepUntil(began.Add(9 * time.Second))
			srv.Restart(t)

			// B is asked until the task ended, and on past the tool's 12 s
			// and the time A took to commit slept.txt before the fix.
			status := func(c *mcptest.Sessionless) (string, string) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				ans, err := c.Send(ctx, "tasks/get", map[string]any{"taskId": task.TaskID}, nil)
				if err != nil || ans.Response.Error != nil {
					return "", ""
				}
				var got struct {
					Status        string `json:"status"`
					StatusMessage string `json:"statusMessage"`
				}
				json.Unmarshal(ans.Response.Result, &got)
				return got.Status, got.StatusMessage
			}
			var onBStatus, msg string
			for time.Since(began) < 20*time.Second {
				if s, m := status(onB); s != "" && s != "working" {
					onBStatus, msg = s, m
				}
				time.Sleep(250 * time.Millisecond)
			}
			if onBStatus != "failed" {
				t.Fatalf("the task on B after S3 was down past its lease: %q (%s), want failed", onBStatus, msg)
			}
			if s, m := status(onA); s != "failed" {
				t.Errorf("the task on A: %q (%s), want failed as on B", s, m)
			}
			keys, _ := bucketKeys(t, srv.Client(), bucket, "outputs/")
			if n := countSuffix(keys, "/meta.json"); n != 0 {
				t.Errorf("%d outputs of the failed task are stored (%v): the record says failed, the store holds its output", n, keys)
			}
			t.Logf("B reported %s: %s", onBStatus, msg)
		})
	}
}

// startedTask is a tools/call answered with a task.
type startedTask struct {
	ResultType string `json:"resultType"`
	TaskID     string `json:"taskId"`
}

// sleepUntil sleeps until t.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }
