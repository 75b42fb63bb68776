package ocr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/agentura/agentura/internal/lib/childproc"
)

// engine runs the external commands: tesseract, pdftoppm and pdfinfo. Heavy
// commands (tesseract, pdftoppm) take one of a fixed number of slots, so that
// however many calls arrive, no more than Config.Concurrency of them compete
// for the CPUs at once.
type engine struct {
	cfg     Config
	env     []string
	slots   chan struct{}
	langs   *languages
	metrics *metrics
}

func newEngine(cfg Config) *engine {
	e := &engine{cfg: cfg, env: commandEnv(os.Environ()), slots: make(chan struct{}, cfg.Concurrency), metrics: newMetrics()}
	e.langs = &languages{list: e.dataFiles}
	return e
}

// commandEnv is the environment the commands run in: the agent's, without
// its AGENT_* settings — a parser of untrusted files has no business with
// the signing key or the auth secret — and with OMP_THREAD_LIMIT=1.
// Parallelism comes from running several processes; tesseract's own OpenMP
// threads oversubscribe the CPUs: measured on a busy 2-core machine, 10
// pages took 41 s of wall time with them and 7.7 s without.
func commandEnv(environ []string) []string {
	var env []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "AGENT_") && !strings.HasPrefix(kv, "OMP_THREAD_LIMIT=") {
			env = append(env, kv)
		}
	}
	return append(env, "OMP_THREAD_LIMIT=1")
}

// outputLimit caps what is kept of a command's stdout and stderr.
const outputLimit = 1 << 20

// heavy runs a CPU-heavy command once a slot is free, returning its stdout.
func (e *engine) heavy(ctx context.Context, name string, args ...string) ([]byte, error) {
	e.metrics.waiting.Inc()
	select {
	case e.slots <- struct{}{}:
		e.metrics.waiting.Dec()
		slotAcquired(ctx, name)
	case <-ctx.Done():
		e.metrics.waiting.Dec()
		return nil, fmt.Errorf("waiting for a free OCR slot: %w", context.Cause(ctx))
	}
	e.metrics.running.Inc()
	defer func() {
		e.metrics.running.Dec()
		<-e.slots
	}()
	return e.run(ctx, name, args...)
}

// run runs name with args, without a shell, and returns its stdout. When ctx
// ends the process is killed; its error then wraps ctx's cause. A failure
// carries the end of the command's stderr.
func (e *engine) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	// In a process group of its own, killed whole when ctx ends (a tool
	// that forks leaves nothing running after a cancelled call), and
	// killed with the agent however it dies (internal/lib/childproc).
	cmd := childproc.Command(ctx, name, args...)
	cmd.Env = e.env
	// The killed process's pipes close with it; don't wait long for strays.
	cmd.WaitDelay = 5 * time.Second
	stdout := &tailBuffer{limit: outputLimit}
	stderr := &tailBuffer{limit: 16 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	err := childproc.Run(cmd)
	e.metrics.observe(name, start, err, ctx.Err() != nil)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s stopped: %w", name, context.Cause(ctx))
	}
	if err != nil {
		var notFound *exec.Error
		if errors.As(err, &notFound) || errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is not installed or not in PATH (%w); %s", name, err, installHint(name))
		}
		return nil, &commandError{Command: name, Err: err, Stderr: strings.TrimSpace(stderr.String())}
	}
	return stdout.Bytes(), nil
}

// commandError is a command that ran and failed.
type commandError struct {
	Command string
	Err     error
	Stderr  string
}

func (e *commandError) Error() string {
	if e.Stderr == "" {
		return fmt.Sprintf("%s failed: %v", e.Command, e.Err)
	}
	return fmt.Sprintf("%s failed: %v: %s", e.Command, e.Err, e.Stderr)
}

func (e *commandError) Unwrap() error { return e.Err }

// installHint says how to get a missing command.
func installHint(name string) string {
	switch base(name) {
	case "tesseract":
		return "install it (Debian/Ubuntu: apt-get install tesseract-ocr tesseract-ocr-eng; or run make deps)"
	case "pdftoppm", "pdfinfo":
		return "install it (Debian/Ubuntu: apt-get install poppler-utils; or run make deps)"
	}
	return "install it"
}

// base is a command's name without its directory.
func base(name string) string {
	return name[strings.LastIndexByte(name, '/')+1:]
}

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	limit int
	buf   bytes.Buffer
	cut   bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	b.buf.Write(p)
	if over := b.buf.Len() - b.limit; over > 0 {
		b.buf.Next(over)
		b.cut = true
	}
	return n, nil
}

func (b *tailBuffer) Bytes() []byte { return b.buf.Bytes() }

func (b *tailBuffer) String() string {
	if b.cut {
		return "…" + b.buf.String()
	}
	return b.buf.String()
}
