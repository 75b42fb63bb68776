package ocr_test

// The agent's commands die with it: kill -9 of the agent's pid alone, not
// its process group, mid-OCR, leaves none of its tesseract and pdftoppm
// running (a fault run found orphaned tesseracts after an OCR replica was
// killed).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// proc is a process seen in /proc: its pid, its start time (in clock ticks
// since boot: a pid used again by a new process has another), its command
// line.
type proc struct {
	pid     int
	start   string
	cmdline string
}

// statOf reads the state and the start time of pid from /proc/<pid>/stat,
// and its parent's pid.
func statOf(pid int) (state, ppid, start string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", "", "", false
	}
	// pid (comm) state ppid pgrp ... starttime (the 22nd field): comm may
	// hold spaces, so the fields are counted after the last ')'.
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return "", "", "", false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 20 {
		return "", "", "", false
	}
	return f[0], f[1], f[19], true
}

// childProcs lists the live processes whose parent is pid, walking /proc:
// only this agent's, not those of other tests on the machine.
func childProcs(t *testing.T, pid int) []proc {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to check processes: %v", err)
	}
	var out []proc
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, ppid, start, ok := statOf(p)
		if !ok || ppid != strconv.Itoa(pid) || state == "Z" {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, proc{pid: p, start: start, cmdline: strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))})
	}
	return out
}

// alive reports whether p still runs: its pid is there, with p's start time
// (not a new process under the same pid), and not a zombie.
func (p proc) alive() bool {
	state, _, start, ok := statOf(p.pid)
	return ok && start == p.start && state != "Z"
}

// denseLines is how many lines of text each page of densePDF holds: enough
// for tesseract to read one page for many seconds (about 20 s on a busy
// 2-core machine, several on a fast idle one), so that a command still
// running after the kill's grace is an orphan, not a slow command ending.
const denseLines = 250

// grace is how long after the agent's death its children may take to go:
// the kernel kills them as the agent exits, in milliseconds; the rest is
// headroom for a busy machine.
const grace = 5 * time.Second

// densePDF is a PDF of two pages, each denseLines lines of text (one image,
// drawn once).
func densePDF(t *testing.T) []byte {
	lines := make([]string, denseLines)
	for i := range lines {
		lines[i] = fmt.Sprintf("Line %d of the dense page: the quarterly report lists invoices", i+1)
	}
	page := ocrtest.Render(t, lines...)
	return ocrtest.ImagePDF(t, page, page)
}

// TestE2EChildrenDieWithAgent starts the OCR of densePDF, waits until the
// agent's tesseract reads a page, notes every child process the agent has,
// then kills the agent's pid alone with SIGKILL (no shutdown, no signal to
// its group, as the OOM killer or a crash would): each child must be gone
// within grace, long before it would have ended by itself.
func TestE2EChildrenDieWithAgent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's; elsewhere a child of an agent killed outright runs to its end")
	}
	ocrtest.Require(t, "tesseract", "pdftoppm", "pdfinfo")
	a := mcptest.StartAgent(t, agentBin, "AGENT_OCR_TIMEOUT=10m", "AGENT_OCR_CONCURRENCY=2")
	c, _ := mcptest.Connect(t, a.URL+"/mcp")
	args := map[string]any{"source": map[string]any{"name": "dense.pdf", "content": "data:application/pdf;base64," + b64(densePDF(t))}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	answered := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "ocr_document", Arguments: args}})
		answered <- err
	}()
	pid := a.Cmd.Process.Pid
	// pdftoppm renders a dense page for seconds (more than ten on a busy
	// 2-core machine) before tesseract reads it.
	for deadline := time.Now().Add(3 * time.Minute); !running(agentChildren(t, pid), " -l ", "tesseract"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("tesseract did not start within 3 minutes; the agent's children: %v", agentChildren(t, pid))
		}
	}
	// Two pages are read at once: give the second worker a moment to start
	// its command too, so that more than one child is checked.
	var children []proc
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		children = childProcs(t, pid)
		if len(children) >= 2 || time.Now().After(deadline) {
			break
		}
	}
	if !running(cmdlines(children), " -l ", "tesseract") {
		t.Fatalf("tesseract ended before its pid was noted; the agent's children: %v", children)
	}
	// Should the test fail, it leaves nothing running: each command is the
	// leader of a process group of its own.
	t.Cleanup(func() {
		for _, p := range children {
			if p.alive() {
				_ = syscall.Kill(-p.pid, syscall.SIGKILL)
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
	})

	a.Kill(t) // SIGKILL to the agent's pid, not to its group
	killed := time.Now()
	var left []proc
	for deadline := killed.Add(grace); ; time.Sleep(20 * time.Millisecond) {
		left = left[:0]
		for _, p := range children {
			if p.alive() {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("%v after kill -9 of the agent (pid %d), %d of its %d child processes still run: %v", grace, pid, len(left), len(children), left)
	} else {
		t.Logf("the agent's %d child processes %v were gone %v after kill -9 of the agent", len(children), cmdlines(children), time.Since(killed).Round(time.Millisecond))
	}
	cancel()
	<-answered
}

// cmdlines is the command lines of ps.
func cmdlines(ps []proc) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.cmdline
	}
	return out
}
