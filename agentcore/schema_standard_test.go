package agentcore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/contractcheck"
)

// registerFileTools registers tools with every kind of file parameter: one
// file, an optional one, a list, and items with a FileContent field; each
// answers with what it received, as name:size lines.
func registerFileTools(svc *Service) {
	type item struct {
		Name    string      `json:"name"`
		Content FileContent `json:"content,omitempty"`
	}
	type input struct {
		Source   FileAttachment   `json:"source" jsonschema:"the document"`
		Optional *FileAttachment  `json:"optional,omitempty"`
		Sources  []FileAttachment `json:"sources,omitempty" accept:"image/png"`
		Embeds   []item           `json:"embeds,omitempty"`
	}
	AddTool(svc, Tool{Name: "sizes", Description: "Lists the files it gets."},
		func(ctx context.Context, call *Call, in input) (*Result, error) {
			var lines []string
			all := append([]FileAttachment{in.Source}, in.Sources...)
			if in.Optional != nil {
				all = append(all, *in.Optional)
			}
			for _, a := range all {
				f, err := call.ResolveFileAttachment(ctx, a)
				if err != nil {
					return nil, err
				}
				lines = append(lines, fmt.Sprintf("%s:%d", f.Name, f.Size))
			}
			for _, e := range in.Embeds {
				f, err := call.ResolveFileAttachment(ctx, FileAttachment{Name: e.Name, Content: string(e.Content)})
				if err != nil {
					return nil, err
				}
				lines = append(lines, fmt.Sprintf("%s:%d", f.Name, f.Size))
			}
			return &Result{Text: strings.Join(lines, " ")}, nil
		})
}

// The tools/list an agent serves passes SEP-2631 §5 read literally (every
// x-mcp-file on a URI string property, or on an array's items), while a
// tools/call still takes the seed's object form, a data: URI and a path;
// a bare name reaches the tool, whose resolver says what it is, rather
// than being refused by a schema check (the go-sdk's, or a format).
func TestPublishedSchemaIsSection5AndCallsStayLenient(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	registerFileTools(svc)
	cs := connect(t, srv.URL, "")
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if faults := contractcheck.FileInputFaults(list.Tools); len(faults) > 0 {
		t.Errorf("§5 refuses the published schema:\n%s", strings.Join(faults, "\n"))
	}
	b, _ := json.Marshal(list.Tools[0].InputSchema)
	var m map[string]any
	json.Unmarshal(b, &m)
	jsonEqual(t, get(t, m, "properties/source/type"), `"string"`)
	jsonEqual(t, get(t, m, "properties/source/x-file"), `true`)
	jsonEqual(t, get(t, m, "properties/sources/items/x-mcp-file/accept"), `["image/png"]`)
	jsonEqual(t, get(t, m, "properties/embeds/items/properties/content/format"), `"uri"`)
	jsonEqual(t, list.Tools[0].Meta["openai/fileParams"], `["source", "optional", "sources", "embeds"]`)

	call := func(args string) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sizes", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		var text []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		return strings.Join(text, "\n"), res.IsError
	}
	const hello = "data:text/plain;base64,aGVsbG8=" // 5 bytes
	for _, tc := range []struct{ args, want string }{
		{`{"source": {"name": "a.txt", "content": "` + hello + `"}}`, "a.txt:5"},
		{`{"source": "data:text/plain;name=b.txt;base64,aGVsbG8="}`, "b.txt:5"},
		{`{"source": "` + hello + `", "sources": [{"name": "c.txt", "content": "` + hello + `"}, "` + hello + `"], "optional": {"name": "d.txt", "content": "` + hello + `"}}`, "c.txt:5"},
		{`{"source": "` + hello + `", "embeds": [{"name": "e.txt", "content": "` + hello + `"}]}`, "e.txt:5"},
	} {
		if got, isErr := call(tc.args); isErr || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q (error %v), want %s", tc.args, got, isErr, tc.want)
		}
	}
	got, isErr := call(`{"source": "report.pdf"}`)
	if !isErr || !strings.Contains(got, "is a file name, not the file") {
		t.Errorf("a bare name: %q (error %v), want the resolver's answer that it is a file name", got, isErr)
	}
	if strings.Contains(got, "validat") || strings.Contains(got, "uri") {
		t.Errorf("a bare name was judged by the schema, not by the resolver: %q", got)
	}
}
