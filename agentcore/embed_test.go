package agentcore

import (
	"context"
	"encoding/json"
	"testing"
)

// TestEmbeddedTextStaysText: JSON, CSV, XML and other text outputs are
// embedded as text, not as a base64 blob; text that is not UTF-8 and binary
// files stay blobs.
func TestEmbeddedTextStaysText(t *testing.T) {
	svc := newTestService(t, func(c *Config) { c.EmbedMaxBytes = defaultEmbedMaxBytes })
	ctx := context.Background()
	call := svc.newCall("make", "alice", "")
	defer call.end()
	outputs := map[string]struct {
		data []byte
		text bool
	}{
		"report.json": {[]byte(`{"total": 42, "currency": "EUR"}`), true},
		"items.csv":   {[]byte("name,qty\nmilk,2\n"), true},
		"feed.xml":    {[]byte(`<?xml version="1.0"?><feed><title>x</title></feed>`), true},
		"notes.txt":   {[]byte("Grüße\n"), true},
		"latin1.txt":  {[]byte("Gr\xfc\xdfe\n"), false},
		"chart.png":   {pngBytes(t), false},
	}
	var list []Output
	for name, o := range outputs {
		list = append(list, OutputBytes(name, o.data))
	}
	res, err := call.FileResponse(ctx, list...)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(svc.mcp.Render(ctx, res.outcome()))
	var wire struct {
		Content []struct {
			Type     string `json:"type"`
			Resource *struct {
				URI, MimeType, Text, Blob string
			} `json:"resource"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for i, c := range wire.Content {
		if c.Type != "resource" {
			continue
		}
		name := res.Files[seen].Filename
		seen++
		want := outputs[name]
		if want.text && (c.Resource.Text != string(want.data) || c.Resource.Blob != "") {
			t.Errorf("content[%d] %s (%s): text %q, blob %d chars; want the text", i, name, c.Resource.MimeType, c.Resource.Text, len(c.Resource.Blob))
		}
		if !want.text && (c.Resource.Text != "" || c.Resource.Blob == "") {
			t.Errorf("content[%d] %s (%s): text %q; want a blob", i, name, c.Resource.MimeType, c.Resource.Text)
		}
	}
	if seen != len(outputs) {
		t.Errorf("%d embedded resources; want %d", seen, len(outputs))
	}
}
