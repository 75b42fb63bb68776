// Package testagent runs a real agentura agent inside a test process: the
// example agent's tools (inspect_file, archive_files) plus a few tools that
// exercise the host side — nested file fields, multi-file outputs with
// sub-folders, an echo for round trips, a large output and a download URL on
// a foreign host. It is a real server (agentcore over HTTP on a loopback
// port), not a mock; the client package and the agentura CLI test against it.
package testagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/examples/fileagent"
	"github.com/agentura/agentura/transfer"
)

// ForeignURL is the download URL the tool foreign_link hands out: a host
// that is not the agent's.
const ForeignURL = "http://198.51.100.7:8080/files/0123456789abcdef0123456789abcdef/evil.bin?token=x"

// Agent is a running test agent.
type Agent struct {
	// Base is the agent's base URL (http://127.0.0.1:PORT), also its public URL.
	Base string
	// Endpoint is its MCP endpoint, Base + "/mcp".
	Endpoint string
	// Service is the agent itself.
	Service *agentcore.Service
}

// Options tune the agent; the zero value is usable.
type Options struct {
	// MaxUploadBytes is AGENT_MAX_UPLOAD_BYTES; 0 means the default (50 MiB).
	MaxUploadBytes int64
	// EmbedMaxBytes is AGENT_EMBED_MAX_BYTES; 0 means never embed.
	EmbedMaxBytes int64
	// JWTSecret turns on AGENT_AUTH=jwt with this HS256 secret.
	JWTSecret string
	// OutputTTL is AGENT_OUTPUT_TTL, also the TTL of its tasks; 0 means
	// the default (24 h).
	OutputTTL time.Duration
}

// EmbedItem is an item of compose_page's embeds: a nested file field.
type EmbedItem struct {
	Name        string                `json:"name" jsonschema:"file name of the image"`
	Content     agentcore.FileContent `json:"content,omitempty" jsonschema:"the image"`
	Description string                `json:"description,omitempty"`
}

// ComposeInput are the arguments of compose_page.
type ComposeInput struct {
	Markdown string      `json:"markdown"`
	Embeds   []EmbedItem `json:"embeds,omitempty"`
}

// EchoInput are the arguments of echo_file.
type EchoInput struct {
	Source agentcore.FileAttachment `json:"source"`
}

// BlobInput are the arguments of make_blob.
type BlobInput struct {
	Bytes int64 `json:"bytes"`
}

// LinkInput are the arguments of link_to.
type LinkInput struct {
	URL      string `json:"url"`
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
}

// Start runs the agent on a free loopback port until the test ends.
func Start(t testing.TB, opts Options) *Agent {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	base := "http://" + ln.Addr().String()
	embed := opts.EmbedMaxBytes
	if embed == 0 {
		embed = -1 // never: in agentcore.Config a zero field is the 64 KiB default
	}
	cfg := agentcore.Config{
		PublicURL:       base,
		DataDir:         t.TempDir(),
		MaxUploadBytes:  opts.MaxUploadBytes,
		EmbedMaxBytes:   embed,
		OutputTTL:       opts.OutputTTL,
		ShutdownTimeout: 5 * time.Second,
	}
	if opts.JWTSecret != "" {
		cfg.Auth, cfg.AuthJWTSecret = "jwt", opts.JWTSecret
	}
	svc, err := agentcore.New(agentcore.Info{Name: "testagent", Version: "0.1.0"}, cfg,
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		ln.Close()
		t.Fatalf("agentcore.New: %v", err)
	}
	if err := Register(svc); err != nil {
		t.Fatalf("register: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Serve(ctx, ln) }()
	t.Cleanup(func() {
		// http.Server.Shutdown waits up to 5 s for a connection that was
		// dialled but never carried a request (Go's transport keeps such
		// spares idle); close the test clients' idle connections first.
		if tr, ok := http.DefaultTransport.(*http.Transport); ok {
			tr.CloseIdleConnections()
		}
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("agent stopped with: %v", err)
		}
		svc.Close()
	})
	return &Agent{Base: base, Endpoint: base + "/mcp", Service: svc}
}

// SleepInput are the arguments of sleep.
type SleepInput struct {
	Millis int `json:"millis" jsonschema:"how long to hold the call"`
}

// Register adds the test agent's tools to svc: the example agent's and the
// ones this package lists. cmd/testagent serves them as a binary.
func Register(svc *agentcore.Service) error {
	if err := fileagent.Register(svc); err != nil {
		return err
	}
	agentcore.AddTool(svc, agentcore.Tool{Name: "accept_file", Description: "Take a file without reading it (measures how inputs arrive)."},
		func(ctx context.Context, call *agentcore.Call, in EchoInput) (*agentcore.Result, error) {
			return agentcore.TextResult("accepted"), nil
		})
	agentcore.AddTool(svc, agentcore.Tool{Name: "sleep", Description: "Hold the call for the given time (tests of the call limits)."},
		func(ctx context.Context, call *agentcore.Call, in SleepInput) (*agentcore.Result, error) {
			select {
			case <-time.After(time.Duration(in.Millis) * time.Millisecond):
				return agentcore.TextResult("slept"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	agentcore.AddTool(svc, agentcore.Tool{Name: "long_sleep", Long: true, Description: "Hold the call for the given time, reporting progress each second; " +
		"a long tool: a client supporting tasks gets a task (tests of tasks)."},
		func(ctx context.Context, call *agentcore.Call, in SleepInput) (*agentcore.Result, error) {
			end := time.Now().Add(time.Duration(in.Millis) * time.Millisecond)
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for s := 1; time.Now().Before(end); s++ {
				select {
				case <-time.After(time.Until(end)):
				case <-tick.C:
					call.Progress(float64(s), float64(in.Millis/1000), fmt.Sprintf("%d s slept", s))
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return call.FileResponse(ctx, agentcore.OutputBytes("slept.txt", []byte(fmt.Sprintf("slept %d ms\n", in.Millis))))
		})
	agentcore.AddTool(svc, agentcore.Tool{
		Name:        "compose_page",
		Description: "Write a Markdown page that shows images; returns the page and each image under images/.",
	}, composePage)
	agentcore.AddTool(svc, agentcore.Tool{Name: "echo_file", Description: "Return the file it was given."}, echoFile)
	agentcore.AddTool(svc, agentcore.Tool{Name: "make_blob", Description: "Produce a file of the given size."}, makeBlob)
	agentcore.AddTool(svc, agentcore.Tool{Name: "link_to", Description: "Return the given URL as a produced file."},
		func(ctx context.Context, call *agentcore.Call, in LinkInput) (*agentcore.Result, error) {
			return &agentcore.Result{Files: []transfer.File{{
				DownloadURL: in.URL, Filename: in.Filename, MIMEType: "application/octet-stream", SizeBytes: in.Size,
			}}}, nil
		})
	agentcore.AddTool(svc, agentcore.Tool{Name: "foreign_link", Description: "Return a download URL on another host."},
		func(ctx context.Context, call *agentcore.Call, _ struct{}) (*agentcore.Result, error) {
			return &agentcore.Result{Text: "Here is a file.", Files: []transfer.File{{
				DownloadURL: ForeignURL, Filename: "evil.bin", MIMEType: "application/octet-stream", SizeBytes: 4,
			}}}, nil
		})
	return nil
}

func composePage(ctx context.Context, call *agentcore.Call, in ComposeInput) (*agentcore.Result, error) {
	var outs []agentcore.Output
	var page strings.Builder
	page.WriteString(in.Markdown + "\n")
	for _, e := range in.Embeds {
		f, err := call.ResolveFile(ctx, e.Name, string(e.Content))
		if err != nil {
			return nil, fmt.Errorf("embed %s: %w", e.Name, err)
		}
		fmt.Fprintf(&page, "\n![%s](images/%s)\n", e.Description, f.Name)
		outs = append(outs, agentcore.OutputFile("images/"+f.Name, f.Path))
	}
	outs = append([]agentcore.Output{agentcore.OutputBytes("page.md", []byte(page.String()))}, outs...)
	res, err := call.FileResponse(ctx, outs...)
	if err != nil {
		return nil, err
	}
	res.Text = fmt.Sprintf("Composed a page with %d image(s).", len(in.Embeds))
	return res, nil
}

func echoFile(ctx context.Context, call *agentcore.Call, in EchoInput) (*agentcore.Result, error) {
	f, err := call.ResolveFileAttachment(ctx, in.Source)
	if err != nil {
		return nil, err
	}
	return call.FileResponse(ctx, agentcore.OutputFile("echo-"+f.Name, f.Path))
}

func makeBlob(ctx context.Context, call *agentcore.Call, in BlobInput) (*agentcore.Result, error) {
	if in.Bytes < 0 || in.Bytes > 1<<30 {
		return nil, errors.New("bytes must be between 0 and 1 GiB")
	}
	dir, err := call.WorkDir()
	if err != nil {
		return nil, err
	}
	p := filepath.Join(dir, "blob.bin")
	f, err := os.Create(p)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(in.Bytes); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return call.FileResponse(ctx, agentcore.OutputFile("blob.bin", p))
}

// Metric returns the lines of the agent's /metrics that start with series
// ("agentura_uploads_total", or a whole series with its labels), joined by
// newlines; "" when there are none.
func (a *Agent) Metric(t testing.TB, series string) string {
	t.Helper()
	resp, err := http.Get(a.Base + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, series) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}
