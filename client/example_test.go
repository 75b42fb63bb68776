package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
)

// A host wires the middleware into its go-sdk client before connecting;
// from then on the model's file names are resolved on the way out and the
// produced files registered on the way back.
func ExampleMiddleware() {
	ctx := context.Background()
	reg, err := client.NewRegistry("", nil) // a private folder, removed by Close
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	endpoint := "http://localhost:8001/mcp"
	base, _ := client.BaseURLFromEndpoint(endpoint)
	mw, err := client.New(client.Config{Registry: reg, BaseURL: base})
	if err != nil {
		panic(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "my-host", Version: "1.0"}, nil)
	mw.Attach(c)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		fmt.Println("no agent at", endpoint)
		return
	}
	defer cs.Close()

	e, _ := reg.AddFile(ctx, "scan.png", "", client.SourceUpload)
	fmt.Println("User attached:", e.Describe()) // what the model is told
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{
		Name:      "ocr_document",
		Arguments: map[string]any{"source": "scan.png", "outputs": []string{"searchable_pdf"}}, // as the model wrote it
	})
	if err != nil {
		fmt.Println(err) // e.g. a name not in the registry: the call was not sent
		return
	}
	for _, name := range client.ProducedNames(res) {
		f, _ := reg.Lookup(name)
		fmt.Println("offer the user", f.Path)
	}
}

// A registry shows the model names, types and sizes, never bytes.
func ExampleRegistry_Describe() {
	reg, err := client.NewRegistry("", nil)
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	ctx := context.Background()
	reg.Add(ctx, "invoice.pdf", strings.NewReader("%PDF-1.4\n"+strings.Repeat(" ", 240<<10)), client.SourceUpload)
	reg.Add(ctx, "images/diagram_002.png", strings.NewReader("\x89PNG\r\n\x1a\n"), client.ToolSource("compose_document"))
	again, _ := reg.Add(ctx, "invoice.pdf", strings.NewReader("%PDF-1.4\n"), client.SourceUpload)
	fmt.Print(reg.Describe())
	fmt.Println("the second invoice.pdf is", again.Name)
	// Output:
	// images/diagram_002.png (PNG image, 8 B)
	// invoice (2).pdf (PDF, 9 B)
	// invoice.pdf (PDF, 240 KB)
	// the second invoice.pdf is invoice (2).pdf
}

// FileFields finds the file parameters of a tool, however deep the schema
// puts them.
func ExampleFileFields() {
	var schema any
	json.Unmarshal([]byte(`{
	  "type": "object",
	  "$defs": {
	    "FileAttachment": {"type": "object", "properties": {"name": {"type": "string"}, "content": {"type": "string"}}},
	    "EmbedItem": {"type": "object", "properties": {"name": {"type": "string"}, "content": {"type": "string", "x-file": true}}}
	  },
	  "properties": {
	    "source": {"anyOf": [{"$ref": "#/$defs/FileAttachment"}, {"type": "string"}], "x-file": true},
	    "embeds": {"type": "array", "items": {"$ref": "#/$defs/EmbedItem"}},
	    "title": {"type": "string"}
	  }
	}`), &schema)
	fields, _ := client.FileFields(schema)
	for _, f := range fields {
		fmt.Println(f.Path)
	}
	// Output:
	// embeds[].content
	// source
}
