package agentcore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel"

	"github.com/agentura/agentura/agentcore"
)

// An agent author declares file parameters with FileAttachment, resolves
// them to local files, and hands outputs out with FileResponse.
func ExampleAddTool() {
	dir, _ := os.MkdirTemp("", "agent")
	defer os.RemoveAll(dir)
	svc, err := agentcore.New(agentcore.Info{Name: "upper"},
		agentcore.Config{DataDir: dir, PublicURL: "http://localhost:8000"},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		panic(err)
	}

	type Input struct {
		Source agentcore.FileAttachment `json:"source" jsonschema:"a text file"`
	}
	agentcore.AddTool(svc, agentcore.Tool{Name: "shout", Description: "Upper-cases a text file."},
		func(ctx context.Context, call *agentcore.Call, in Input) (*agentcore.Result, error) {
			f, err := call.ResolveFileAttachment(ctx, in.Source) // a local file named as the caller named it
			if err != nil {
				return nil, err
			}
			text, err := os.ReadFile(f.Path)
			if err != nil {
				return nil, err
			}
			return call.FileResponse(ctx, agentcore.OutputBytes("LOUD-"+f.Name, []byte(strings.ToUpper(string(text)))))
		})

	fmt.Println("file params:", svc.Tools()[0].FileParams)
	res, err := svc.Invoke(context.Background(), "shout", "", json.RawMessage(
		`{"source": {"name": "note.txt", "content": "data:text/plain;base64,aGVsbG8="}}`))
	if err != nil {
		panic(err)
	}
	f := res.Files[0]
	fmt.Println(f.Filename, f.MIMEType, f.SizeBytes)
	fmt.Println(strings.HasPrefix(f.DownloadURL, "http://localhost:8000/files/"))

	// A bare file name is an unresolved reference, and the error says so.
	_, err = svc.Invoke(context.Background(), "shout", "", json.RawMessage(`{"source": "note.txt"}`))
	fmt.Println(err != nil && strings.Contains(err.Error(), "is a file name, not the file"))
	// Output:
	// file params: [source]
	// LOUD-note.txt text/plain; charset=utf-8 5
	// true
	// true
}

// InputSchema shows the schema a tool's input type produces.
func ExampleInputSchema() {
	type Input struct {
		Sources []agentcore.FileAttachment `json:"sources"`
	}
	schema, params, _ := agentcore.InputSchema[Input]()
	b, _ := json.Marshal(schema.Properties["sources"])
	fmt.Println(string(b))
	fmt.Println(params)
	// Output:
	// {"type":"array","items":{"type":"string","format":"uri","x-mcp-file":{"transferModes":["inline","upload"]}},"x-file":true}
	// [sources]
}

// A tool's own span names a file only where the operator allowed it
// (AGENT_TRACE_FILE_NAMES=true); by default it names none.
func ExampleTraceFileName() {
	_, span := otel.Tracer("invoice-agent").Start(context.Background(), "parse invoice")
	defer span.End()
	kv, ok := agentcore.TraceFileName("../scans/invoice 42.pdf")
	if ok {
		span.SetAttributes(kv)
	}
	fmt.Println("file names in spans:", ok)
	// Output: file names in spans: false
}
