package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/agentura/agentura/client"
)

// toolInfo is a tool as `agentura tools --output json` prints it.
type toolInfo struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	FileParams  []string `json:"file_params"`
	InputSchema any      `json:"input_schema"`
}

func runTools(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c common
	fs := newFlagSet("tools", "agentura tools [flags] <url>   (or --stdio -- CMD ARGS)", stderr)
	c.register(fs)
	rawURL, _, ok := c.parse(fs, args, nil, stderr)
	if !ok {
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cn, err := prepare(&c, rawURL, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agentura tools: %v\n", err)
		return exitUsage
	}
	if err := cn.connect(ctx); err != nil {
		fmt.Fprintf(stderr, "agentura tools: %v\n", err)
		return exitFailed
	}
	defer cn.close()

	var tools []toolInfo
	for t, err := range cn.session.Tools(ctx, nil) {
		if err != nil {
			fmt.Fprintf(stderr, "agentura tools: list tools: %v\n", cn.explain(err))
			return exitFailed
		}
		fields, err := client.FileFields(t.InputSchema)
		if err != nil {
			fmt.Fprintf(stderr, "agentura tools: %s: %v\n", t.Name, err)
			return exitFailed
		}
		info := toolInfo{Name: t.Name, Description: t.Description, FileParams: []string{}, InputSchema: t.InputSchema}
		for _, f := range fields {
			info.FileParams = append(info.FileParams, f.Path)
		}
		tools = append(tools, info)
	}
	if c.output == "json" {
		printJSON(stdout, tools)
		return exitOK
	}
	for _, t := range tools {
		fmt.Fprintln(stdout, t.Name)
		if t.Description != "" {
			fmt.Fprintf(stdout, "    %s\n", t.Description)
		}
		var parts []string
		for _, p := range paramNames(t.InputSchema) {
			if fileParam(t.FileParams, p) {
				p += " [file]"
			}
			parts = append(parts, p)
		}
		if len(parts) > 0 {
			fmt.Fprintf(stdout, "    params: %s\n", strings.Join(parts, ", "))
		}
		if len(t.FileParams) > 0 {
			fmt.Fprintf(stdout, "    file fields: %s\n", strings.Join(t.FileParams, ", "))
		}
	}
	return exitOK
}

// paramNames lists the top-level properties of an input schema, sorted.
func paramNames(schema any) []string {
	b, _ := json.Marshal(schema)
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	json.Unmarshal(b, &s)
	return slices.Sorted(maps.Keys(s.Properties))
}

// fileParam reports whether the top-level parameter p is one of the file
// fields, or holds some.
func fileParam(fields []string, p string) bool {
	return slices.ContainsFunc(fields, func(f string) bool {
		return f == p || f == p+"[]" || strings.HasPrefix(f, p+"[].") || strings.HasPrefix(f, p+".")
	})
}
