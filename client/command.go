package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/internal/lib/mcptrace"
)

// commandTransport runs a stdio server as mcp.CommandTransport does — the
// command started on Connect, newline-delimited JSON on its stdin and
// stdout, and on Close its stdin closed, then SIGTERM and SIGKILL for a
// process that does not exit — with each line of its output capped
// (LimitMessages). The go-sdk's CommandTransport reads the output itself,
// with a cap of its own (16 MiB) whose error names no server.
type commandTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration // 0: defaultTerminate
	max       int64
}

// defaultTerminate is how long Close waits for the process after closing
// its stdin, and again after SIGTERM: the go-sdk's own default.
const defaultTerminate = 5 * time.Second

func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	book := &callBook{}
	server := strings.Join(t.cmd.Args, " ")
	lines := &heldUnits{rc: stdout, max: t.max, over: func(begin []byte) ([]byte, error) {
		call := leadingMembers(bytes.NewReader(begin[:min(len(begin), 4<<10)]))
		o := overflow{server: server, max: t.max}
		if call.id != nil {
			if method, ok := book.method(call.id); ok {
				o.call = rpcCall{id: call.id, method: method}
				return append(o.answer(), '\n'), nil
			}
		}
		return nil, o.err()
	}}
	term := t.terminate
	if term <= 0 {
		term = defaultTerminate
	}
	// The go-sdk's decoder reads the lines one at a time (heldUnits), so
	// its own cap on a frame, set just above ours, is met only by a message
	// spread over many lines, which the stdio transport does not allow.
	frame := int(min(t.max+1, int64(^uint(0)>>1)))
	conn, err := (&mcp.IOTransport{
		Reader:        io.NopCloser(lines), // the connection ends by closing stdin
		Writer:        &childInput{w: stdin, cmd: t.cmd, terminate: term},
		MaxLineLength: frame,
	}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	return bookedConn{conn, book, overflow{server: server, max: t.max}}, nil
}

// bookedConn notes the calls sent and answered (callBook), and names the
// server in the go-sdk's error of a frame over its cap.
type bookedConn struct {
	mcp.Connection
	book *callBook
	over overflow
}

func (c bookedConn) Write(ctx context.Context, m jsonrpc.Message) error {
	c.book.sent(m)
	if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
		mcptrace.RecordRequestID(ctx, req.ID) // the span of the request (Trace) has its id
	}
	return c.Connection.Write(ctx, m)
}

func (c bookedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		c.book.answered(m)
	} else if strings.Contains(err.Error(), "exceeded the configured maximum line length") {
		err = c.over.err()
	}
	return m, err
}

// childInput is the server's stdin; closing it ends the process: stdin
// closed (the MCP stdio transport's way to ask a server to exit), then, if
// it has not exited within terminate, SIGTERM, and SIGKILL after as long
// again.
type childInput struct {
	w         io.WriteCloser
	cmd       *exec.Cmd
	terminate time.Duration
	once      sync.Once
	err       error
}

func (c *childInput) Write(p []byte) (int, error) { return c.w.Write(p) }

func (c *childInput) Close() error {
	c.once.Do(func() { c.err = c.stop() })
	return c.err
}

func (c *childInput) stop() error {
	if err := c.w.Close(); err != nil {
		return fmt.Errorf("close the server's stdin: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	var err error // the process's, once it exited
	wait := func() bool {
		t := time.NewTimer(c.terminate)
		defer t.Stop()
		select {
		case err = <-exited:
			return true
		case <-t.C:
			return false
		}
	}
	if wait() || (c.cmd.Process.Signal(syscall.SIGTERM) == nil && wait()) {
		return err
	}
	if kerr := c.cmd.Process.Kill(); kerr != nil && !errors.Is(kerr, os.ErrProcessDone) {
		return kerr
	}
	if wait() {
		return err
	}
	return fmt.Errorf("the server %s did not exit after SIGKILL", strings.Join(c.cmd.Args, " "))
}
