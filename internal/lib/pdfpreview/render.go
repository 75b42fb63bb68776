package pdfpreview

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentura/agentura/internal/lib/childproc"
)

// Defaults of Config.
const (
	DefaultCommand       = "pdftoppm"
	DefaultMaxInputBytes = 64 << 20
	DefaultSide          = 1000
	DefaultTimeout       = 15 * time.Second
	DefaultMaxMemory     = 512 << 20
	DefaultCacheBytes    = 32 << 20
	// maxPNGBytes caps what is read of pdftoppm's output: a page of
	// DefaultSide pixels is far below it.
	maxPNGBytes = 16 << 20
)

// Config is what a Renderer is built from; zero fields take the defaults.
type Config struct {
	// Command is pdftoppm's name or path; "": DefaultCommand from PATH.
	Command string
	// MaxInputBytes is the largest PDF rendered; a larger one is refused
	// with ErrTooLarge.
	MaxInputBytes int64
	// Side is the longest side of the picture in pixels.
	Side int
	// Timeout bounds one render; its process group is killed then.
	Timeout time.Duration
	// MaxMemory caps the address space of pdftoppm (RLIMIT_AS, Linux).
	MaxMemory int64
	// Concurrency is the most renders at once; 0: half the CPUs, at least 1.
	Concurrency int
	// CacheBytes bounds the cache of pictures and failures.
	CacheBytes int64
	// Logger is told once when pdftoppm is missing; nil: slog.Default().
	Logger *slog.Logger
}

// Errors of Render. A PDF pdftoppm cannot render, or not in time, is a
// *RenderError.
var (
	// ErrUnavailable is returned when pdftoppm is not installed.
	ErrUnavailable = errors.New("PDF previews are not available on this agent: pdftoppm is not installed (Debian/Ubuntu: apt-get install poppler-utils)")
	// ErrTooLarge is returned for a PDF over Config.MaxInputBytes.
	ErrTooLarge = errors.New("the PDF is too large to preview")
	// ErrBusy is returned when no render slot frees up before the
	// request's context ends.
	ErrBusy = errors.New("the agent is busy rendering other previews; try again")
)

// RenderError is a PDF that pdftoppm could not render: not a PDF, broken,
// locked, or too slow or too large to render within the limits.
type RenderError struct {
	// Reason says what went wrong, for the person who asked.
	Reason string
}

func (e *RenderError) Error() string {
	return "the PDF's first page could not be rendered: " + e.Reason
}

// Renderer renders PDFs' first pages. It is safe for concurrent use.
type Renderer struct {
	cfg     Config
	env     []string
	slots   chan struct{}
	cache   *cache
	log     *slog.Logger
	missing sync.Once
}

// New returns a Renderer with cfg's limits.
func New(cfg Config) *Renderer {
	cfg.Command = cmp.Or(cfg.Command, DefaultCommand)
	orDefault(&cfg.MaxInputBytes, DefaultMaxInputBytes)
	orDefault(&cfg.Side, DefaultSide)
	orDefault(&cfg.Timeout, DefaultTimeout)
	orDefault(&cfg.MaxMemory, DefaultMaxMemory)
	orDefault(&cfg.Concurrency, max(1, runtime.NumCPU()/2))
	orDefault(&cfg.CacheBytes, DefaultCacheBytes)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	return &Renderer{cfg: cfg, env: commandEnv(os.Environ()), slots: make(chan struct{}, cfg.Concurrency),
		cache: newCache(cfg.CacheBytes), log: cfg.Logger}
}

// orDefault sets *v to d when it is 0 or less.
func orDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Render returns the PNG of the first page of the PDF that open reads, of
// size bytes. key names the PDF's content (its id and version): a picture,
// or the failure, of the same key is answered from the cache without
// opening the PDF.
func (r *Renderer) Render(ctx context.Context, key string, size int64, open func() (io.ReadCloser, error)) ([]byte, error) {
	if png, err, ok := r.cache.get(key); ok {
		return png, err
	}
	if size > r.cfg.MaxInputBytes {
		return nil, fmt.Errorf("%w: %d bytes, over the limit of %d", ErrTooLarge, size, r.cfg.MaxInputBytes)
	}
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w (%v)", ErrBusy, context.Cause(ctx))
	}
	defer func() { <-r.slots }()
	if png, err, ok := r.cache.get(key); ok { // rendered while this one waited
		return png, err
	}
	in, err := open()
	if err != nil {
		return nil, err
	}
	defer in.Close()
	// pdftoppm reads the PDF from stdin: a file of any store, no temporary
	// copy; it needs to seek, so poppler keeps what it read in memory,
	// within MaxInputBytes and the address-space limit.
	png, err := r.render(ctx, io.LimitReader(in, r.cfg.MaxInputBytes))
	if _, failed := errors.AsType[*RenderError](err); err == nil || failed {
		r.cache.put(key, png, err) // a broken PDF stays broken
	}
	return png, err
}

// render runs pdftoppm on the PDF in, reading it from stdin and the PNG
// from stdout.
func (r *Renderer) render(parent context.Context, in io.Reader) ([]byte, error) {
	ctx, cancel := context.WithTimeout(parent, r.cfg.Timeout)
	defer cancel()
	// In a process group of its own, killed whole when ctx ends, and
	// killed with the agent however it dies (internal/lib/childproc).
	cmd := childproc.Command(ctx, r.cfg.Command, "-png", "-singlefile", "-f", "1", "-l", "1",
		"-scale-to", strconv.Itoa(r.cfg.Side), "-")
	cmd.Env = r.env
	cmd.Stdin = in
	out, stderr := &capped{limit: maxPNGBytes}, capped{limit: 4 << 10}
	cmd.Stdout, cmd.Stderr = out, &stderr
	cmd.WaitDelay = 2 * time.Second
	err := childproc.Start(cmd)
	if err == nil {
		limit(cmd.Process.Pid, r.cfg.MaxMemory, r.cfg.Timeout)
		err = cmd.Wait()
	}
	switch {
	case cmd.Process == nil && (errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist)):
		r.missing.Do(func() {
			r.log.Warn("pdfpreview: PDFs get no preview picture", slog.String("command", r.cfg.Command), slog.String("error", err.Error()),
				slog.String("fix", "install poppler-utils (Debian/Ubuntu: apt-get install poppler-utils)"))
		})
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	case parent.Err() != nil:
		return nil, context.Cause(parent)
	case ctx.Err() != nil:
		return nil, &RenderError{Reason: fmt.Sprintf("it took longer than %v", r.cfg.Timeout)}
	case err != nil:
		return nil, &RenderError{Reason: childproc.LastLine(stderr.String(), err)}
	case out.over:
		return nil, &RenderError{Reason: "the picture is larger than " + strconv.Itoa(maxPNGBytes>>20) + " MiB"}
	case !bytes.HasPrefix(out.Bytes(), []byte("\x89PNG\r\n\x1a\n")):
		return nil, &RenderError{Reason: childproc.LastLine(stderr.String(), errors.New("pdftoppm wrote no picture"))}
	}
	return out.Bytes(), nil
}

// commandEnv is the agent's environment without its AGENT_* settings: a
// parser of untrusted files has no business with the signing key.
func commandEnv(environ []string) []string {
	var env []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "AGENT_") {
			env = append(env, kv)
		}
	}
	return env
}

// capped keeps the first limit bytes written to it and notes more.
type capped struct {
	bytes.Buffer
	limit int
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.Len(); room < len(p) {
		c.over = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}
