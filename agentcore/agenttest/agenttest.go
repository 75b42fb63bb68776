// Package agenttest runs an agent built on agentcore inside a test: no
// ports, no network. Start builds the Service with its tools, connects an
// MCP client to it over the go-sdk's in-memory transport, and puts the host
// side of the contract in between (package client): local files go in by
// name, as a model names them, and the files the tool hands out come back
// as local files, downloaded through the Service's own HTTP handler called
// in-process.
//
//	a := agenttest.Start(t, agentcore.Info{Name: "lines"}, register)
//	res, err := a.Call(ctx, "number_lines", map[string]any{"source": "notes.txt"}, "testdata/notes.txt")
//	// res.Text is what the model reads; res.Files[0].Path is the output on disk.
package agenttest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PublicURL is the base of the URLs a test agent hands out. The name
// resolves nowhere: requests to it never leave the process.
const PublicURL = "http://agent.test"

// Agent is a Service running inside a test, with an MCP client session to
// it. Everything it holds is removed when the test ends.
type Agent struct {
	// Service is the agent under test.
	Service *agentcore.Service
	// Session is the MCP client session to it, through the client
	// middleware; use it for requests Call does not cover.
	Session *mcp.ClientSession
	// Registry holds the files of the session: the inputs given to Call and
	// the outputs of every call.
	Registry *client.Registry
	// HTTPClient reaches the Service's HTTP handler in-process (downloads,
	// /uploads, /a2a, the agent card) for any URL under PublicURL.
	HTTPClient *http.Client

	t testing.TB
}

// An Option changes the configuration an agent starts with.
type Option func(*agentcore.Config)

// WithConfig lets a test change the configuration (for example
// EmbedMaxBytes, or an agent's limits) before the Service is built.
func WithConfig(edit func(*agentcore.Config)) Option { return Option(edit) }

// Start builds the Service with a private data folder, a fresh random signing
// key given in the configuration (so the framework neither writes one into
// the data folder nor warns that it did) and the framework's defaults, registers its tools with register, and
// connects to it. A failure stops the test.
func Start(t testing.TB, info agentcore.Info, register func(*agentcore.Service) error, opts ...Option) *Agent {
	t.Helper()
	cfg, err := agentcore.ConfigFromLookup(func(string) (string, bool) { return "", false }, info.Name, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("agenttest: default configuration: %v", err)
	}
	cfg.DataDir = t.TempDir()
	cfg.StorageURL = "file://" + cfg.DataDir
	cfg.PublicURL = PublicURL
	cfg.SigningKeys = []string{rand.Text() + rand.Text()} // 256 random bits in 52 bytes
	for _, o := range opts {
		o(&cfg)
	}
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	svc, err := agentcore.New(info, cfg, logger)
	if err != nil {
		t.Fatalf("agenttest: start %s: %v", info.Name, err)
	}
	t.Cleanup(func() { svc.Close() })
	if err := register(svc); err != nil {
		t.Fatalf("agenttest: register the tools of %s: %v", info.Name, err)
	}

	hc := &http.Client{Transport: handlerTransport{svc.Handler()}}
	reg, err := client.NewRegistry(t.TempDir(), nil)
	if err != nil {
		t.Fatalf("agenttest: registry: %v", err)
	}
	t.Cleanup(func() { reg.Close() })
	mw, err := client.New(client.Config{Registry: reg, BaseURL: cfg.PublicURL, HTTPClient: hc})
	if err != nil {
		t.Fatalf("agenttest: client middleware: %v", err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "agenttest", Version: "0"}, nil)
	mw.Attach(c)
	client.Trace(c) // outermost: a call's span covers its uploads
	serverT, clientT := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := svc.MCPServer().Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatalf("agenttest: connect the server: %v", err)
	}
	cs, err := c.Connect(ctx, clientT, nil)
	if err != nil {
		ss.Close()
		t.Fatalf("agenttest: connect the client: %v", err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return &Agent{Service: svc, Session: cs, Registry: reg, HTTPClient: hc, t: t}
}

// File is a file a tool handed out, saved locally.
type File struct {
	// Name is the file's name as the tool gave it (it may hold folders,
	// "images/chart.png"), made unique in the session ("report (2).pdf").
	Name string
	// Path is where it lies on disk.
	Path string
	// MIMEType and Size are those of the downloaded file.
	MIMEType string
	Size     int64
}

// Result is the outcome of a call as the model sees it, with the files.
type Result struct {
	// Text is the text content, joined by newlines: the tool's text and a
	// "Tool produced: name (kind, size)" line per file, without URLs.
	Text string
	// Structured is the structured content, file URLs removed.
	Structured map[string]any
	// Files are the files the tool handed out, downloaded and verified.
	Files []File
	// Raw is the whole MCP result after the client middleware.
	Raw *mcp.CallToolResult
}

// ToolError is a call the tool answered with an error (isError).
type ToolError struct {
	Tool, Text string
}

func (e *ToolError) Error() string { return fmt.Sprintf("tool %s failed: %s", e.Tool, e.Text) }

// Call adds files (local paths) to the session's registry under their base
// names, then calls tool with args, which name those files as a model would
// ({"source": "notes.txt"}). It returns the result with the produced files
// saved locally; a tool's error is a *ToolError (with the Result), anything
// else (a name not in the registry, a protocol error) a plain error.
func (a *Agent) Call(ctx context.Context, tool string, args map[string]any, files ...string) (*Result, error) {
	for _, path := range files {
		if _, err := a.Registry.AddFile(ctx, path, filepath.Base(path), client.SourceUpload); err != nil {
			return nil, fmt.Errorf("agenttest: add %s to the registry: %w", path, err)
		}
	}
	res, err := a.Session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, err
	}
	out := &Result{Raw: res}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	out.Text = strings.Join(texts, "\n")
	out.Structured, _ = res.StructuredContent.(map[string]any)
	for _, name := range client.ProducedNames(res) {
		e, err := a.Registry.Lookup(name)
		if err != nil {
			return out, fmt.Errorf("agenttest: produced file %s: %w", name, err)
		}
		out.Files = append(out.Files, File{Name: e.Name, Path: e.Path, MIMEType: e.MIMEType, Size: e.Size})
	}
	if res.IsError {
		return out, &ToolError{Tool: tool, Text: out.Text}
	}
	if failed := client.FailedFiles(res); len(failed) > 0 {
		return out, fmt.Errorf("agenttest: %s: files not fetched: %s", tool, strings.Join(failed, "; "))
	}
	return out, nil
}

// handlerTransport answers requests with an http.Handler in the same
// process: no listener, no network.
type handlerTransport struct{ h http.Handler }

func (ht handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme+"://"+r.URL.Host != PublicURL {
		return nil, fmt.Errorf("agenttest: %s is not the test agent's (%s); a test agent reaches nothing else", r.URL, PublicURL)
	}
	rec := httptest.NewRecorder()
	req := r.Clone(r.Context())
	req.RequestURI = r.URL.RequestURI()
	req.RemoteAddr = "127.0.0.1:1"
	req.Body = cmp.Or[io.ReadCloser](req.Body, http.NoBody)
	ht.h.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = r
	resp.Body = cmp.Or(resp.Body, io.NopCloser(bytes.NewReader(nil)))
	return resp, nil
}

// testWriter sends the agent's warnings and errors to the test's log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
