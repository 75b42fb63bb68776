package mcpfile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// The shapes as the draft's examples and the reference host's tests write them.
func TestWireShapes(t *testing.T) {
	size := int64(248123)
	got, _ := json.Marshal(AuthorizeUploadResult{
		File:   FileValue{URI: "mcp-file://server/file-1", Name: "report.pdf", MIMEType: "application/pdf", Size: &size, Digest: &Digest{Algorithm: DigestSHA256, Value: "v"}},
		Upload: TransferDescriptor{Transport: TransportHTTPS, Method: "POST", URL: "https://u", Headers: map[string]string{"X-Upload": "t"}, Multipart: &Multipart{FileField: "file", Fields: map[string]string{"token": "abc"}}, ExpiresAt: "2030-01-01T00:00:00Z"},
	})
	want := `{"file":{"uri":"mcp-file://server/file-1","name":"report.pdf","mimeType":"application/pdf","size":248123,"digest":{"algorithm":"sha-256","value":"v"}},"upload":{"transport":"https","method":"POST","url":"https://u","headers":{"X-Upload":"t"},"multipart":{"fileField":"file","fields":{"token":"abc"}},"expiresAt":"2030-01-01T00:00:00Z"}}`
	if string(got) != want {
		t.Fatalf("AuthorizeUploadResult:\n got %s\nwant %s", got, want)
	}
	got, _ = json.Marshal(Input{Accept: []string{"application/pdf"}, MaxSize: 10485760, TransferModes: []string{ModeInline, ModeUpload}})
	if want := `{"accept":["application/pdf"],"maxSize":10485760,"transferModes":["inline","upload"]}`; string(got) != want {
		t.Fatalf("Input: got %s, want %s", got, want)
	}
}

func TestDigest(t *testing.T) {
	sum := sha256.Sum256([]byte("Hello world!"))
	d := SHA256(hex.EncodeToString(sum[:]))
	if d == nil || d.Algorithm != "sha-256" || len(d.Value) != 43 {
		t.Fatalf("SHA256 = %+v", d)
	}
	if h, err := d.Hex(); err != nil || h != hex.EncodeToString(sum[:]) {
		t.Fatalf("Hex = %q, %v", h, err)
	}
	if _, err := (Digest{Algorithm: "md5", Value: d.Value}).Hex(); err == nil {
		t.Fatal("md5 accepted")
	}
	if _, err := (Digest{Algorithm: "sha-256", Value: "short"}).Hex(); err == nil {
		t.Fatal("short value accepted")
	}
}

func TestAccepts(t *testing.T) {
	for _, c := range []struct {
		accept []string
		mime   string
		want   bool
	}{
		{nil, "application/pdf", true},
		{[]string{".pdf"}, "image/png", true},
		{[]string{"application/pdf", "image/*"}, "image/png", true},
		{[]string{"application/pdf", "image/*"}, "text/plain; charset=utf-8", false},
		{[]string{"*/*"}, "text/plain", true},
		{[]string{"image/*"}, "imagex/png", false},
	} {
		if got := Accepts(c.accept, c.mime); got != c.want {
			t.Errorf("Accepts(%q, %q) = %v, want %v", c.accept, c.mime, got, c.want)
		}
	}
}

func TestURI(t *testing.T) {
	u := URI("agent.example:8001", "in", "0193-ab")
	if u != "mcp-file://agent.example:8001/in/0193-ab" || !IsFileURI(u) {
		t.Fatalf("URI = %q", u)
	}
	a, k, id, tok, ok := ParseURI(u)
	if !ok || a != "agent.example:8001" || k != "in" || id != "0193-ab" || tok != "" {
		t.Fatalf("ParseURI = %q %q %q %q %v", a, k, id, tok, ok)
	}
	c := CapabilityURI("agent.example:8001", "out", "0193-ab", "eyJ.a-b_c.d")
	if c != "mcp-file://agent.example:8001/out/0193-ab?token=eyJ.a-b_c.d" || !IsFileURI(c) {
		t.Fatalf("CapabilityURI = %q", c)
	}
	if _, k, id, tok, ok := ParseURI(c); !ok || k != "out" || id != "0193-ab" || tok != "eyJ.a-b_c.d" {
		t.Fatalf("ParseURI(%q) = %q %q %q %v", c, k, id, tok, ok)
	}
	for _, bad := range []string{"https://x/in/1", "mcp-file:///in/1", "mcp-file://h/in", "mcp-file://h/in/1/2", "mcp-file://h/in/1?x=1",
		"mcp-file://h/in/1?token=", "mcp-file://h/in/1?token=a&token=b", "mcp-file://h/in/1?token=a&x=1", "mcp-file://h/in/1?token=a#f"} {
		if _, _, _, _, ok := ParseURI(bad); ok {
			t.Errorf("ParseURI(%q) ok", bad)
		}
	}
	for _, s := range []string{"data:,x", "https://x", "file:///x", "/tmp/x"} {
		if IsFileURI(s) {
			t.Errorf("IsFileURI(%q)", s)
		}
	}
}

// The reference host's parsing test: x-mcp-file on a property and on array
// items, merged with openai/fileParams; malformed values spoil themselves.
func TestParams(t *testing.T) {
	var schema, meta map[string]any
	json.Unmarshal([]byte(`{"type":"object","properties":{
		"file":{"type":"string","x-mcp-file":{"accept":["text/plain"],"maxSize":42,"transferModes":["inline","upload"]}},
		"files":{"type":"array","items":{"type":"string","format":"uri","x-mcp-file":{"accept":["text/plain",7,""],"maxSize":-1,"transferModes":["upload","future-mode",7]}}},
		"old":{"type":"object","x-mcp-file":true},
		"legacy":{"type":"string"}}}`), &schema)
	json.Unmarshal([]byte(`{"openai/fileParams":["file","legacy"]}`), &meta)
	got := Params(schema, meta)
	if len(got) != 3 {
		t.Fatalf("Params = %+v", got)
	}
	if p := got[0]; p.Name != "file" || !p.Declared || !p.Listed || p.Input.MaxSize != 42 || !p.Input.Allows(ModeInline) {
		t.Errorf("file = %+v", p)
	}
	if p := got[1]; p.Name != "files" || !p.Array || p.Input.MaxSize != 0 || len(p.Input.Accept) != 1 || p.Input.Allows(ModeInline) || !p.Input.Allows(ModeUpload) {
		t.Errorf("files = %+v", p)
	}
	if p := got[2]; p.Name != "legacy" || p.Declared || !p.Listed {
		t.Errorf("legacy = %+v", p)
	}
	if !(Input{}).Allows(ModeUpload) || !(Input{}).Allows(ModeInline) {
		t.Error("no transferModes must allow both")
	}
}

// The three shapes a file block comes in, and what is not one.
func TestFileOfBlock(t *testing.T) {
	const uri = "mcp-file://server/files/f1"
	for _, c := range []struct {
		block string
		ok    bool
	}{
		{`{"type":"file","file":{"uri":"` + uri + `","name":"a.pdf"}}`, true},
		{`{"type":"file","uri":"` + uri + `","name":"a.pdf"}`, true},
		{`{"type":"file","content":{"uri":"` + uri + `"},"name":"a.pdf"}`, true},
		{`{"type":"file","file":{"uri":"https://example.com/a.pdf"}}`, false},
		{`{"type":"file","file":{"uri":7}}`, false},
		// A FileValue holds no file: a block nested in one is not looked into.
		{`{"type":"file","file":{"file":{"uri":"` + uri + `"}}}`, false},
	} {
		fv, ok := FileOfBlock([]byte(c.block))
		if ok != c.ok || ok && (fv.URI != uri || fv.Name != "a.pdf") {
			t.Errorf("FileOfBlock(%s) = %+v, %v; want ok %v", c.block, fv, ok, c.ok)
		}
	}
}

// A deeply nested block costs one pass over its JSON, not one per level
// (which made 9,000 levels take seconds): reading one 5,000 levels deep
// allocates about as often as reading one 10 levels deep.
func TestFileOfBlockNestedIsLinear(t *testing.T) {
	nested := func(depth int) []byte {
		return []byte(strings.Repeat(`{"file":`, depth) + `{"uri":"mcp-file://server/files/f1"}` + strings.Repeat(`}`, depth))
	}
	allocs := func(depth int) float64 {
		block := nested(depth)
		return testing.AllocsPerRun(3, func() { FileOfBlock(block) })
	}
	shallow, deep := allocs(10), allocs(5000)
	if deep > shallow+50 {
		t.Fatalf("FileOfBlock allocated %.0f times for a block 5,000 deep, %.0f for one 10 deep: it re-reads every level", deep, shallow)
	}
	t.Logf("allocations: %.0f at depth 10, %.0f at depth 5,000", shallow, deep)
}
