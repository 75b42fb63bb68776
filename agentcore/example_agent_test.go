package agentcore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentura/agentura/agentcore"
)

// A whole agent: one tool that takes a file and hands one out. The part
// between the snippet lines is what README.md quotes (a test keeps the two
// the same); in a program, main is
//
//	func main() { os.Exit(agentcore.Main(agentcore.Info{Name: "lines"}, ":8000", os.Args[1:], register)) }
func Example() {
	// README snippet start
	type Input struct {
		Source agentcore.FileAttachment `json:"source" jsonschema:"a text file"`
	}
	register := func(svc *agentcore.Service) error {
		agentcore.AddTool(svc, agentcore.Tool{Name: "number_lines", Description: "Numbers the lines of a text file."},
			func(ctx context.Context, call *agentcore.Call, in Input) (*agentcore.Result, error) {
				f, err := call.ResolveFileAttachment(ctx, in.Source) // a local file, under the caller's (sanitised) name
				if err != nil {
					return nil, err // says what was wrong and what to do
				}
				text, err := os.ReadFile(f.Path)
				if err != nil {
					return nil, err
				}
				dir, err := call.WorkDir() // private to the call, removed when it ends
				if err != nil {
					return nil, err
				}
				var out strings.Builder
				for i, line := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
					fmt.Fprintf(&out, "%4d  %s\n", i+1, line)
				}
				path := filepath.Join(dir, "numbered.txt")
				if err := os.WriteFile(path, []byte(out.String()), 0o600); err != nil {
					return nil, err
				}
				res, err := call.FileResponse(ctx, agentcore.OutputFile("numbered-"+f.Name, path)) // moved, not copied
				if err != nil {
					return nil, err
				}
				res.Text = fmt.Sprintf("Numbered the lines of %s.", f.Name)
				return res, nil
			})
		return nil
	}
	// README snippet end

	dir, _ := os.MkdirTemp("", "agent")
	defer os.RemoveAll(dir)
	svc, err := agentcore.New(agentcore.Info{Name: "lines"},
		agentcore.Config{DataDir: dir, PublicURL: "http://localhost:8000"},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		panic(err)
	}
	defer svc.Close()
	if err := register(svc); err != nil {
		panic(err)
	}
	res, err := svc.Invoke(context.Background(), "number_lines", "", json.RawMessage(
		`{"source": {"name": "notes.txt", "content": "data:text/plain;base64,b25lCnR3bwo="}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	fmt.Println(res.Files[0].Filename, res.Files[0].SizeBytes)
	// Output:
	// Numbered the lines of notes.txt.
	// numbered-notes.txt 20
}
