package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/agentura/agentura/client"
)

// A long call (a 200-page OCR) runs as an MCP task when the agent makes
// one: `agentura call` follows it, printing its progress, and when
// interrupted (Ctrl-C, --timeout) leaves it running and says how to pick it
// up again; `agentura task get` does, from any process, on any replica of
// the agent, for as long as the agent keeps the task.

// taskFollower prints the states of the task a call follows.
type taskFollower struct {
	w     io.Writer
	url   string
	quiet bool        // --output json: no progress lines
	out   *callOutput // gets the task's id

	mu   sync.Mutex
	id   string
	last string
}

// told is the middleware's Config.Task: the first state names the task
// and how to resume it, each change of the status message is a line.
func (f *taskFollower) told(t *client.Task) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.out != nil {
		f.out.Task = t.ID
	}
	if f.quiet {
		return
	}
	if f.id != t.ID {
		f.id = t.ID
		fmt.Fprintf(f.w, "task %s: the agent runs the call as a task; if this stops, resume with: agentura task get %s %s\n", t.ID, f.url, t.ID)
	}
	line := t.Status
	if msg := statusLine(t); msg != "" {
		line += ": " + msg
	}
	if t.Total > 0 {
		line += fmt.Sprintf(" (%.0f/%.0f)", t.Progress, t.Total)
	}
	if line != f.last {
		f.last = line
		fmt.Fprintf(f.w, "task %s %s\n", t.ID, line)
	}
}

// maxStatusRunes is the most of a status message a task line shows.
const maxStatusRunes = 100

// statusLine is what a task line shows of t's status message: nothing once
// the task completed or failed (an agent's message then is its result's
// text or its error, which the call prints in full anyway; an OCR's
// completed task repeated the recognised text on stderr), else its first
// line, cut to maxStatusRunes.
func statusLine(t *client.Task) string {
	if t.Status == client.TaskCompleted || t.Status == client.TaskFailed {
		return ""
	}
	msg, _, cut := strings.Cut(strings.TrimSpace(t.StatusMessage), "\n")
	msg = strings.TrimSpace(msg)
	if r := []rune(msg); len(r) > maxStatusRunes {
		msg, cut = string(r[:maxStatusRunes]), true
	}
	if cut {
		msg += "…"
	}
	return msg
}

// explain adds how to resume to the error of a call that left its task
// running.
func (f *taskFollower) explain(err error) error {
	var running *client.TaskRunningError
	if errors.As(err, &running) {
		return fmt.Errorf("%w\nthe agent goes on with it: fetch the result later with: agentura task get %s %s", err, f.url, running.Task.ID)
	}
	return err
}

// taskFlags are the flags of `agentura task`.
type taskFlags struct {
	common
	out         string
	allowHosts  listFlag
	maxDownload sizeFlag
	wait        bool
}

func runTask(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "get" && args[0] != "cancel") {
		fmt.Fprint(stderr, "agentura task: use \"agentura task get <url> <id>\" or \"agentura task cancel <url> <id>\"\n")
		return exitUsage
	}
	verb := args[0]
	f := taskFlags{}
	fs := newFlagSet("task "+verb, "agentura task "+verb+" [flags] <url> <id>", stderr)
	f.register(fs)
	if verb == "get" {
		fs.StringVar(&f.out, "out", ".", "folder where the produced files of a completed task are saved")
		fs.Var(&f.allowHosts, "allow-host", "a host besides the agent's own that produced files may be fetched from (repeatable)")
		fs.Var(&f.maxDownload, "max-download", "largest produced file fetched (default 1GiB)")
		fs.BoolVar(&f.wait, "wait", true, "wait for a running task to end (false: print its state and exit)")
	}
	rawURL, rest, ok := f.parse(fs, args[1:], []string{"the task's id"}, stderr)
	if !ok {
		return exitUsage
	}
	if f.stdio {
		fmt.Fprintf(stderr, "agentura task: tasks are kept by agents served over HTTP; give the agent's URL\n")
		return exitUsage
	}
	id := rest[0]
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	out := &callOutput{Tool: "task " + id, Attached: []string{}, Files: []savedFile{}, Task: id}
	code, status, err := doTask(ctx, &f, verb, rawURL, id, out, stderr)
	if err != nil {
		out.Error = err.Error()
	}
	if f.output == "json" {
		printJSON(stdout, struct {
			*callOutput
			Status string `json:"status"`
		}{out, status})
	} else {
		if status != "" && status != client.TaskCompleted {
			fmt.Fprintf(stdout, "task %s: %s\n", id, status)
		}
		printText(stdout, out)
	}
	if out.Error != "" {
		fmt.Fprintf(stderr, "agentura task %s: %s\n", verb, strings.TrimSpace(out.Error))
	}
	return code
}

// doTask connects and gets, waits for or cancels the task.
func doTask(ctx context.Context, f *taskFlags, verb, rawURL, id string, out *callOutput, stderr io.Writer) (code int, status string, _ error) {
	reg, err := client.NewRegistry("", nil)
	if err != nil {
		return exitFailed, "", err
	}
	defer reg.Close()
	cn, err := prepare(&f.common, rawURL, stderr)
	if err != nil {
		return exitUsage, "", err
	}
	follow := &taskFollower{w: stderr, url: rawURL, quiet: f.output != "text"}
	mw, err := client.New(client.Config{Registry: reg, BaseURL: cn.base, Token: f.token, MaxDownloadBytes: int64(f.maxDownload),
		AllowHosts: f.allowHosts, Logger: cn.logger, Tasks: true, Task: follow.told})
	if err != nil {
		return exitUsage, "", err
	}
	mw.Attach(cn.mcp)
	if err := cn.connect(ctx); err != nil {
		return exitFailed, "", err
	}
	defer cn.close()
	if verb == "cancel" {
		if err := mw.CancelTask(ctx, cn.session, id); err != nil {
			return exitFailed, "", err
		}
	}
	if verb == "cancel" || !f.wait {
		t, err := mw.GetTask(ctx, cn.session, id)
		if err != nil {
			return exitFailed, "", err
		}
		if verb == "cancel" {
			return exitOK, t.Status, nil
		}
		follow.told(t)
		if t.Status != client.TaskCompleted {
			return exitOK, t.Status, nil
		}
		code, err := saveResult(reg, t.Result, out.Tool, f.out, out)
		return code, t.Status, err
	}
	res, err := mw.WaitTask(ctx, cn.session, id)
	if err != nil {
		return exitFailed, "", follow.explain(err)
	}
	code, err = saveResult(reg, res, out.Tool, f.out, out)
	return code, client.TaskCompleted, err
}
