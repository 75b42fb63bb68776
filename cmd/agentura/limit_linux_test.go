package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
// The peak is the process's own high-water mark (VmHWM), read while it
// runs: its rusage Maxrss would include the test binary's resident size at
// the fork (386 MiB on CI, where this binary had grown), which says
// nothing about the cap. It is measured on a binary built without -race,
// whose shadow memory would double it (132 MiB).
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
			g, err := procgroup.StartGroup(cmd)
			if err != nil {
				t.Fatalf("agentura call did not start: %v", err)
			}
			peak := make(chan int64)
			go func() { peak <- highWaterMark(cmd.Process.Pid) }()
			err = cmd.Wait()
			g.Kill()
			rss := <-peak
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

// highWaterMark polls the resident high-water mark (VmHWM) of process pid
// until it has exited and returns the last one read: the mark only rises,
// so that is its peak but for its last few milliseconds.
func highWaterMark(pid int) int64 {
	var last int64
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return last
		}
		_, rest, ok := strings.Cut(string(b), "VmHWM:")
		if !ok { // exited, not yet reaped: no memory any more
			return last
		}
		fields := strings.Fields(rest)
		if kib, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
			last = kib << 10
		}
		time.Sleep(2 * time.Millisecond)
	}
}
