package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// Escape E23 on the built binary: an agent answering tools/list with 800
// tools of 256 KiB descriptions (200 MiB, streamed as one JSON body or one
// SSE event) took `agentura call` to 1.2–1.3 GB of resident memory. It now
// exits 1 with an error naming the agent and the cap, its peak RSS about
// the cap (32 MiB) above what it needs anyway (47 MiB measured, against
// 1271 MiB for the JSON body and 1345 MiB for the SSE event before).
//
// Memory is measured on a binary built without -race: the race detector's
// shadow memory multiplies the figure (388 MiB under -race on CI), so it
// says nothing about the cap.
func TestCallRefusesAnswerOverCap(t *testing.T) {
	bin := cliBin
	if mcptest.RaceEnabled() {
		bin = mcptest.BuildBinary(t, ".", false)
	}
	for _, sse := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "sse"}[sse], func(t *testing.T) {
			endpoint := largeToolsAgent(t, sse, 800, 256<<10)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "call", endpoint, "echo", "--json", "{}", "--out", t.TempDir())
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := procgroup.Run(cmd)
			if cmd.ProcessState == nil {
				t.Fatalf("agentura call did not run: %v", err)
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
			t.Logf("peak RSS of agentura call: %d MiB", rss>>20)
			if rss > 160<<20 {
				t.Errorf("agentura call peaked at %d MiB resident; want about the cap (32 MiB) above its own needs", rss>>20)
			}
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFailed {
				t.Fatalf("agentura call: %v, want exit status 1\nstderr:\n%s", err, stderr.String())
			}
			want := "the answer of " + endpoint + " to tools/list passed 32 MiB, the most one message may hold (agentura --max-message"
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
			}
		})
	}
}
