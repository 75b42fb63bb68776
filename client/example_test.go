package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentura/agentura/client"
)

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
