package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/term"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/gateway"
)

// version is the CLI's version, sent as the client's implementation version.
const version = "0.1.0"

// callFlags are the flags of `agentura call`.
type callFlags struct {
	common
	attach      listFlag
	args        string
	out         string
	allowHosts  listFlag
	inlineMax   sizeFlag
	maxDownload sizeFlag
	tusMin      sizeFlag
	progress    string
	task        string
}

// savedFile is a produced file saved on disk, as --output json prints it.
type savedFile struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	MIMEType string `json:"mime_type"`
	Size     int64  `json:"size_bytes"`
	SHA256   string `json:"sha256"`
}

// callOutput is what `agentura call --output json` prints.
type callOutput struct {
	Tool       string      `json:"tool"`
	IsError    bool        `json:"is_error"`
	Error      string      `json:"error,omitempty"`
	Text       string      `json:"text"`
	Structured any         `json:"structured_content,omitempty"`
	Attached   []string    `json:"attached"`
	Files      []savedFile `json:"files"`
	Failed     []string    `json:"failed,omitempty"`
	// Task is the id of the task the agent ran the call as, if it did.
	Task string `json:"task,omitempty"`
}

func runCall(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f := callFlags{inlineMax: defaultInline}
	fs := newFlagSet("call", "agentura call [flags] <url> <tool> [--attach PATH]... [--json ARGS] [--out DIR]\n"+
		"       agentura call [flags] --stdio <tool> [--attach PATH]... [--json ARGS] -- CMD [ARG]...", stderr)
	f.register(fs)
	fs.Var(&f.attach, "attach", "a file to put in the registry under its base name (repeatable)")
	fs.StringVar(&f.args, "json", "{}", "the tool's arguments as JSON, naming attached files as a model would; @FILE reads them from FILE")
	fs.StringVar(&f.out, "out", ".", "folder where produced files are saved (sub-folders kept, nothing overwritten)")
	fs.Var(&f.allowHosts, "allow-host", "a host (host or host:port) besides the agent's own that produced files may be fetched from (repeatable)")
	fs.Var(&f.inlineMax, "inline-max", "largest file sent inline as a data URI; larger ones go through /uploads (0: all)")
	fs.Var(&f.tusMin, "tus-min", "smallest file uploaded resumably (tus, resumes after a dropped connection; default 64MiB)")
	fs.Var(&f.maxDownload, "max-download", "largest produced file fetched (default 1GiB)")
	fs.StringVar(&f.progress, "progress", "auto", "progress bars for transfers over 1 MiB: auto (when stdout is a terminal), always, never")
	fs.StringVar(&f.task, "task", "auto", "auto: a long tool's call runs as an MCP task the agent keeps (it survives a dropped connection; "+
		"Ctrl-C leaves it running, \"agentura task get\" resumes it); never: hold the request open to the end")
	rawURL, rest, ok := f.parse(fs, args, []string{"the tool"}, stderr)
	if !ok {
		return exitUsage
	}
	tool := rest[0]
	arguments, err := readArgs(f.args)
	switch {
	case f.progress != "auto" && f.progress != "always" && f.progress != "never":
		err = fmt.Errorf("--progress %q: use auto, always or never", f.progress)
	case f.task != "auto" && f.task != "never":
		err = fmt.Errorf("--task %q: use auto or never", f.task)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentura call: %v\n", err)
		return exitUsage
	}

	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	out := &callOutput{Tool: tool, Attached: []string{}, Files: []savedFile{}}
	code, err := doCall(ctx, &f, rawURL, tool, arguments, out, stdout, stderr)
	if err != nil {
		out.Error = err.Error()
	}
	if f.output == "json" {
		printJSON(stdout, out)
	} else {
		printText(stdout, out)
	}
	if out.Error != "" {
		fmt.Fprintf(stderr, "agentura call: %s\n", out.Error)
	}
	return code
}

// readArgs parses --json (or the file it names with @) into a JSON object.
func readArgs(v string) (json.RawMessage, error) {
	if path, ok := strings.CutPrefix(v, "@"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("--json @%s: %w", path, err)
		}
		v = string(b)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(v), &obj); err != nil {
		return nil, fmt.Errorf("--json is not a JSON object (%v): give the arguments as '{\"source\": \"scan.png\"}'", err)
	}
	return json.RawMessage(v), nil
}

// doCall attaches, connects, calls and saves; it fills out and returns the
// exit status.
func doCall(ctx context.Context, f *callFlags, rawURL, tool string, args json.RawMessage, out *callOutput, stdout, stderr io.Writer) (int, error) {
	reg, err := client.NewRegistry("", nil)
	if err != nil {
		return exitFailed, err
	}
	defer reg.Close()
	for _, p := range f.attach {
		e, err := reg.AddFile(ctx, p, "", client.SourceUpload)
		if err != nil {
			return exitFailed, err
		}
		out.Attached = append(out.Attached, e.Name)
		if f.output == "text" && e.Name != filepath.Base(p) {
			fmt.Fprintf(stderr, "note: %s is attached as %s (the name was taken)\n", p, e.Name)
		}
	}

	tasks := f.task == "auto" && !f.stdio // tasks need the HTTP transport
	cn, err := prepare(&f.common, rawURL, stderr)
	if err != nil {
		return exitUsage, err
	}
	bars := newProgress(stderr, f.progress == "always" ||
		(f.progress == "auto" && f.output == "text" && isTerminal(stdout)))
	follow := &taskFollower{w: stderr, url: rawURL, quiet: f.output != "text", out: out}
	mw, err := client.New(client.Config{
		Registry:         reg,
		BaseURL:          cn.base,
		Token:            f.token,
		HTTPClient:       cn.hc,
		InlineMaxBytes:   gateway.InlineMax(int64(f.inlineMax)),
		MaxDownloadBytes: int64(f.maxDownload),
		TusMinBytes:      int64(f.tusMin),
		AllowHosts:       f.allowHosts,
		Progress:         bars.update,
		Logger:           cn.logger,
		Tasks:            tasks,
		Task:             follow.told,
	})
	if err != nil {
		return exitUsage, err
	}
	mw.Attach(cn.mcp)
	if err := cn.connect(ctx); err != nil {
		return exitFailed, err
	}
	defer cn.close()

	res, err := cn.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	bars.done()
	if err != nil {
		return exitFailed, cn.explain(follow.explain(err))
	}
	return saveResult(reg, res, tool, f.out, out)
}

// saveResult fills out from a tool's result and saves its produced files
// (fetched into reg by the middleware) under dir.
func saveResult(reg *client.Registry, res *mcp.CallToolResult, tool, dir string, out *callOutput) (int, error) {
	out.IsError = res.IsError
	out.Text = modelText(res)
	out.Structured = res.StructuredContent
	if res.IsError {
		return exitFailed, fmt.Errorf("%s failed: %s", tool, out.Text)
	}
	for _, name := range client.ProducedNames(res) {
		e, err := reg.Lookup(name)
		if err != nil {
			return exitFailed, err
		}
		path, err := saveFile(e, dir)
		if err != nil {
			return exitFailed, err
		}
		out.Files = append(out.Files, savedFile{Name: e.Name, Path: path, MIMEType: e.MIMEType, Size: e.Size, SHA256: e.SHA256})
	}
	if out.Failed = client.FailedFiles(res); len(out.Failed) > 0 {
		return exitFailed, fmt.Errorf("%d produced file(s) could not be fetched: %s", len(out.Failed), strings.Join(out.Failed, "; "))
	}
	return exitOK, nil
}

// printJSON prints v as --output json does: indented JSON.
func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// modelText is the text a model would read: every text block of the result.
func modelText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && t.Text != "" {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// printText prints the model's view and where each file went.
func printText(w io.Writer, out *callOutput) {
	if out.Text != "" {
		fmt.Fprintln(w, out.Text)
	}
	if len(out.Files) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Saved:")
		for _, f := range out.Files {
			fmt.Fprintf(w, "  %s\n", f.Path)
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
