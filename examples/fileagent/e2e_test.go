package fileagent_test

// End-to-end test of the example agent: the real binary, started as a
// subprocess, driven by an independent MCP client (mark3labs/mcp-go) over
// streamable HTTP and over stdio, with downloads fetched over plain HTTP.

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/contractcheck"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// agentBin is the fileagent binary built once by TestMain.
var agentBin string

func TestMain(m *testing.M) {
	os.Exit(mcptest.Main(m, "fileagent-e2e", func(dir string) (err error) {
		// Built with -race when the tests are, so that a data race in the
		// server makes it exit non-zero (66) and fails the graceful-shutdown
		// checks.
		agentBin, err = mcptest.Build(dir, "./cmd/fileagent", mcptest.RaceEnabled())
		return err
	}))
}

// newAgent prepares the agent on a free loopback port with a fresh data
// folder and debug logs; args are extra command-line arguments.
func newAgent(t *testing.T, args ...string) *mcptest.Agent {
	t.Helper()
	a := mcptest.NewAgent(t, agentBin, "AGENT_LOG_LEVEL=debug")
	a.Cmd.Args = append(a.Cmd.Args, args...)
	return a
}

// checkServer checks the server's name in the initialize result.
func checkServer(t *testing.T, res *mcp.InitializeResult) {
	t.Helper()
	if res.ServerInfo.Name != "fileagent" {
		t.Errorf("server name = %q, want fileagent", res.ServerInfo.Name)
	}
}

// connectHTTP connects an mcp-go streamable HTTP client to a's /mcp.
func connectHTTP(t *testing.T, a *mcptest.Agent) *client.Client {
	t.Helper()
	c, res := mcptest.Connect(t, a.URL+"/mcp")
	checkServer(t, res)
	return c
}

// inspectOutput is the structured content of inspect_file.
type inspectOutput struct {
	Name      string `json:"name"`
	MIMEType  string `json:"mime_type"`
	SizeBytes int64  `json:"size_bytes"`
	SHA256    string `json:"sha256"`
}

// producedFile is one file of a result, as the contract describes it
// (docs/contract.md, "What an agent returns"); defined here rather than taken from
// the transfer package so the test checks the contract, not the code.
type producedFile struct {
	DownloadURL string `json:"download_url"`
	Filename    string `json:"filename"`
	MIMEType    string `json:"mime_type"`
	SizeBytes   int64  `json:"size_bytes"`
}

// ---------------------------------------------------------------------------
// Test files

// testPNG returns a small PNG made with image/png.
func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 24, 16))
	for y := range 16 {
		for x := range 24 {
			img.Set(x, y, color.RGBA{R: uint8(x * 10), G: uint8(y * 15), B: 128, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatalf("encode PNG: %v", err)
	}
	return buf.Bytes()
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// dataURI is data:<mime>[;name=<name>];base64,<data>.
func dataURI(mimeType, name string, b []byte) string {
	if name != "" {
		mimeType += ";name=" + name
	}
	return "data:" + mimeType + ";base64," + b64(b)
}

// ---------------------------------------------------------------------------
// HTTP downloads

// checkDownloadHeaders checks the headers every download must carry.
func checkDownloadHeaders(t *testing.T, h http.Header, wantName, wantType string) {
	t.Helper()
	if got := h.Get("Content-Type"); got != wantType {
		t.Errorf("%s: Content-Type = %q, want %q", wantName, got, wantType)
	}
	disp, params, err := mime.ParseMediaType(h.Get("Content-Disposition"))
	if err != nil || disp != "attachment" || params["filename"] != wantName {
		t.Errorf("%s: Content-Disposition = %q (%v), want attachment with filename %q",
			wantName, h.Get("Content-Disposition"), err, wantName)
	}
	if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options = %q, want nosniff", wantName, got)
	}
}

// unzip returns the members of a zip archive by name.
func unzip(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("open zip: %v", err)
	}
	members := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("open zip member %s: %v", f.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("read zip member %s: %v", f.Name, err)
		}
		members[f.Name] = b
	}
	return members
}

// tamperToken returns rawURL with one character in the middle of its
// token's signature changed (a middle character: the last one of a base64url
// signature may carry only padding bits).
func tamperToken(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("parse download URL %q: %v", rawURL, err)
	}
	q := u.Query()
	tok := q.Get("token")
	dot := strings.LastIndexByte(tok, '.')
	if tok == "" || dot < 0 || len(tok)-dot < 8 {
		t.Fatalf("download URL %q has no JWT in ?token=", rawURL)
	}
	i := dot + (len(tok)-dot)/2
	repl := byte('A')
	if tok[i] == 'A' {
		repl = 'B'
	}
	q.Set("token", tok[:i]+string(repl)+tok[i+1:])
	u.RawQuery = q.Encode()
	return u.String()
}

// ---------------------------------------------------------------------------
// Tests

// TestHTTP drives the agent over MCP streamable HTTP, the way a host does.
func TestHTTP(t *testing.T) {
	a := mcptest.StartAgent(t, agentBin, "AGENT_LOG_LEVEL=debug")
	c := connectHTTP(t, a)
	scan := testPNG(t)

	t.Run("ListTools", func(t *testing.T) { testListTools(t, c) })
	t.Run("InspectFile", func(t *testing.T) { testInspectFile(t, c, scan) })
	t.Run("ArchiveFiles", func(t *testing.T) { testArchiveFiles(t, c, scan) })
	t.Run("Errors", func(t *testing.T) { testErrors(t, c, scan) })
	t.Run("LargeInlineInput", func(t *testing.T) { testLargeInlineInput(t, c) })

	// Ending the session first is what a well-behaved host does; the agent
	// must then stop on SIGTERM with status 0.
	if err := c.Close(); err != nil {
		t.Errorf("close MCP client: %v", err)
	}
	a.Stop(t)
}

func testListTools(t *testing.T, c *client.Client) {
	listed := mcptest.ListTools(t, c)
	tools := map[string]mcp.Tool{}
	for _, tool := range listed {
		tools[tool.Name] = tool
	}

	inspect, ok := tools["inspect_file"]
	if !ok {
		t.Fatalf("inspect_file is not listed; tools: %v", toolNames(listed))
	}
	schema := schemaMap(t, inspect)
	source := prop(t, schema, "source")
	if source["x-file"] != true {
		t.Errorf("inspect_file: source has no \"x-file\": true: %v", source)
	}
	checkURIString(t, "inspect_file: source", source)
	checkFileAttachmentDef(t, schema)
	checkFileParamsMeta(t, inspect, "source")

	archive, ok := tools["archive_files"]
	if !ok {
		t.Fatalf("archive_files is not listed; tools: %v", toolNames(listed))
	}
	schema = schemaMap(t, archive)
	sources := prop(t, schema, "sources")
	if sources["type"] != "array" || sources["x-file"] != true {
		t.Errorf("archive_files: sources = %v, want an array with \"x-file\": true", sources)
	}
	// Each item is a FileAttachment, published as a URI string and
	// declared to the draft's hosts by an x-mcp-file object (SEP-2631 puts
	// it on an array's items).
	items, _ := sources["items"].(map[string]any)
	checkURIString(t, "archive_files: sources.items", items)
	checkFileAttachmentDef(t, schema)
	checkFileParamsMeta(t, archive, "sources")

	// SEP-2631 §5 read literally, on every tool: each x-mcp-file on a URI
	// string property or on an array's items.
	var all []*gomcp.Tool
	for _, tool := range listed {
		all = append(all, &gomcp.Tool{Name: tool.Name, InputSchema: schemaMap(t, tool)})
	}
	if faults := contractcheck.FileInputFaults(all); len(faults) > 0 {
		t.Errorf("SEP-2631 §5 refuses the tools' input schemas:\n%s", strings.Join(faults, "\n"))
	}
}

// checkURIString checks that a file node is what SEP-2631 §5 declares, a
// URI string with an x-mcp-file object, and the seed's "x-file": true where
// it is no array's item.
func checkURIString(t *testing.T, what string, n map[string]any) {
	t.Helper()
	if n["type"] != "string" || n["format"] != "uri" || n["anyOf"] != nil {
		t.Errorf("%s = %v, want {\"type\": \"string\", \"format\": \"uri\"} without anyOf", what, n)
	}
	if _, ok := n["x-mcp-file"].(map[string]any); !ok {
		t.Errorf("%s has no x-mcp-file object: %v", what, n)
	}
}

func toolNames(tools []mcp.Tool) []string {
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	return names
}

// schemaMap returns the tool's input schema as plain JSON values.
func schemaMap(t *testing.T, tool mcp.Tool) map[string]any {
	t.Helper()
	raw, err := json.Marshal(tool.InputSchema)
	if err != nil {
		t.Fatalf("%s: encode input schema: %v", tool.Name, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: decode input schema: %v", tool.Name, err)
	}
	return m
}

// prop returns the schema of property name.
func prop(t *testing.T, schema map[string]any, name string) map[string]any {
	t.Helper()
	props, _ := schema["properties"].(map[string]any)
	p, ok := props[name].(map[string]any)
	if !ok {
		t.Fatalf("input schema has no property %q: %v", name, schema)
	}
	return p
}

// field returns obj[key] when obj is a JSON object.
func field(obj any, key string) any {
	m, _ := obj.(map[string]any)
	return m[key]
}

func checkFileAttachmentDef(t *testing.T, schema map[string]any) {
	t.Helper()
	def, _ := field(schema["$defs"], "FileAttachment").(map[string]any)
	req, _ := def["required"].([]any)
	if def["type"] != "object" || len(req) != 2 || req[0] != "name" || req[1] != "content" {
		t.Errorf("$defs.FileAttachment = %v, want an object requiring name and content", def)
	}
}

func checkFileParamsMeta(t *testing.T, tool mcp.Tool, want string) {
	t.Helper()
	if tool.Meta == nil {
		t.Errorf("%s: no _meta; want %q under agentura/fileParams", tool.Name, want)
		return
	}
	params, _ := tool.Meta.AdditionalFields["agentura/fileParams"].([]any)
	if len(params) != 1 || params[0] != want {
		t.Errorf("%s: _meta[agentura/fileParams] = %v, want [%s]", tool.Name, tool.Meta.AdditionalFields["agentura/fileParams"], want)
	}
}

func testInspectFile(t *testing.T, c *client.Client, scan []byte) {
	want := inspectOutput{Name: "scan.png", MIMEType: "image/png", SizeBytes: int64(len(scan)), SHA256: sha256Hex(scan)}
	for _, tc := range []struct {
		name   string
		source any
	}{
		{"ObjectWithBase64", map[string]any{"name": "scan.png", "content": b64(scan)}},
		{"PlainDataURI", dataURI("image/png", "scan.png", scan)},
		{"ObjectWithDataURI", map[string]any{"name": "scan.png", "content": dataURI("image/png", "", scan)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mcptest.CallTool(t, c, "inspect_file", map[string]any{"source": tc.source})
			mcptest.MustSucceed(t, "inspect_file", res)
			if got := mcptest.Structured[inspectOutput](t, res); got != want {
				t.Errorf("structured content = %+v, want %+v", got, want)
			}
			if txt := mcptest.Text(res); !strings.Contains(txt, want.SHA256) {
				t.Errorf("text %q does not mention the sha256 %s", txt, want.SHA256)
			}
		})
	}
}

func testArchiveFiles(t *testing.T, c *client.Client, scan []byte) {
	notes := []byte("first line\nsecond line, ünïcödé\n")
	res := mcptest.CallTool(t, c, "archive_files", map[string]any{"sources": []any{
		map[string]any{"name": "notes.txt", "content": b64(notes)},
		dataURI("image/png", "scan.png", scan),
	}})
	mcptest.MustSucceed(t, "archive_files", res)

	// Structured content: both files, the sub-path of the second kept.
	out := mcptest.Structured[struct {
		Files []mcptest.File `json:"files"`
	}](t, res)
	if len(out.Files) != 2 {
		t.Fatalf("structured content has %d files, want 2: %s", len(out.Files), res.RawStructuredContent)
	}
	zipFile, sumsFile := out.Files[0], out.Files[1]
	if zipFile.Filename != "bundle.zip" || zipFile.MIMEType != "application/zip" {
		t.Errorf("files[0] = %+v, want bundle.zip, application/zip", zipFile)
	}
	if sumsFile.Filename != "bundle/SHA256SUMS" {
		t.Errorf("files[1].filename = %q, want bundle/SHA256SUMS", sumsFile.Filename)
	}
	if strings.Contains(string(res.RawStructuredContent), b64(scan)) {
		t.Errorf("structured content carries file bytes")
	}

	checkFileContent(t, res, out.Files)

	// The downloads: bytes, headers, the archive's members, the sums.
	resp, zipBytes := mcptest.Get(t, zipFile.DownloadURL, nil)
	if resp.StatusCode != http.StatusOK || int64(len(zipBytes)) != zipFile.SizeBytes {
		t.Fatalf("GET bundle.zip: %s, %d bytes; want 200, %d bytes", resp.Status, len(zipBytes), zipFile.SizeBytes)
	}
	checkDownloadHeaders(t, resp.Header, "bundle.zip", "application/zip")
	members := unzip(t, zipBytes)
	if len(members) != 2 || !bytes.Equal(members["notes.txt"], notes) || !bytes.Equal(members["scan.png"], scan) {
		var names []string
		for n := range members {
			names = append(names, n)
		}
		t.Errorf("bundle.zip holds %v; want notes.txt and scan.png with the bytes sent", names)
	}

	resp, sums := mcptest.Get(t, sumsFile.DownloadURL, nil)
	if resp.StatusCode != http.StatusOK || int64(len(sums)) != sumsFile.SizeBytes {
		t.Fatalf("GET SHA256SUMS: %s, %d bytes; want 200, %d bytes", resp.Status, len(sums), sumsFile.SizeBytes)
	}
	checkDownloadHeaders(t, resp.Header, "SHA256SUMS", sumsFile.MIMEType)
	wantSums := sha256Hex(notes) + "  notes.txt\n" + sha256Hex(scan) + "  scan.png\n"
	if string(sums) != wantSums {
		t.Errorf("SHA256SUMS =\n%s\nwant\n%s", sums, wantSums)
	}

	checkEmbedded(t, res, map[string][]byte{zipFile.DownloadURL: zipBytes, sumsFile.DownloadURL: sums})
}

// checkFileContent checks the content blocks naming files: a "Tool
// produced: ..." line and a resource_link per file, in the files' order.
func checkFileContent(t *testing.T, res *mcp.CallToolResult, files []mcptest.File) {
	t.Helper()
	var produced []string
	for _, line := range strings.Split(mcptest.Text(res), "\n") {
		if strings.HasPrefix(line, "Tool produced: ") {
			produced = append(produced, line)
		}
	}
	var links []mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(mcp.ResourceLink); ok {
			links = append(links, l)
		}
	}
	if len(produced) != len(files) || len(links) != len(files) {
		t.Fatalf("%d \"Tool produced\" lines and %d resource links for %d files; content: %+v", len(produced), len(links), len(files), res.Content)
	}
	for i, f := range files {
		if !strings.HasPrefix(produced[i], "Tool produced: "+f.Filename+" (") || !strings.HasSuffix(produced[i], " "+f.DownloadURL) {
			t.Errorf("line %d = %q, want \"Tool produced: %s (...) <download_url>\"", i, produced[i], f.Filename)
		}
		l := links[i]
		if l.URI != f.DownloadURL || l.Name != f.Filename || l.MIMEType != f.MIMEType || l.Size == nil || *l.Size != f.SizeBytes {
			t.Errorf("resource_link %d = {uri %q, name %q, mime %q, size %v}, want the file %+v", i, l.URI, l.Name, l.MIMEType, l.Size, f)
		}
	}
}

// checkEmbedded checks that the embedded resources (files no larger than
// AGENT_EMBED_MAX_BYTES, 64 KiB by default: here all of them) hold the bytes
// that the download of the same URL gave.
func checkEmbedded(t *testing.T, res *mcp.CallToolResult, downloaded map[string][]byte) {
	t.Helper()
	seen := 0
	for _, c := range res.Content {
		e, ok := c.(mcp.EmbeddedResource)
		if !ok {
			continue
		}
		var uri string
		var data []byte
		switch rc := e.Resource.(type) {
		case mcp.TextResourceContents:
			uri, data = rc.URI, []byte(rc.Text)
		case mcp.BlobResourceContents:
			var err error
			if data, err = base64.StdEncoding.DecodeString(rc.Blob); err != nil {
				t.Errorf("embedded %s: blob is not base64: %v", rc.URI, err)
			}
			uri = rc.URI
		default:
			t.Errorf("embedded resource of unexpected type %T", e.Resource)
			continue
		}
		want, ok := downloaded[uri]
		if !ok {
			t.Errorf("embedded resource %s is none of the produced files", uri)
			continue
		}
		if !bytes.Equal(data, want) {
			t.Errorf("embedded %s: %d bytes differ from the %d downloaded", uri, len(data), len(want))
		}
		seen++
	}
	if seen != len(downloaded) {
		t.Errorf("%d embedded resources, want %d (every file is under 64 KiB)", seen, len(downloaded))
	}
}

func testErrors(t *testing.T, c *client.Client, scan []byte) {
	t.Run("BareFileName", func(t *testing.T) {
		res := mcptest.CallTool(t, c, "inspect_file", map[string]any{
			"source": map[string]any{"name": "invoice.pdf", "content": "invoice.pdf"},
		})
		txt := mcptest.Text(res)
		if !res.IsError || !strings.Contains(txt, "is a file name, not the file") {
			t.Errorf("isError = %v, text %q; want a tool error saying the content is a file name, not the file", res.IsError, txt)
		}
	})

	t.Run("UnknownTool", func(t *testing.T) {
		// MCP answers an unknown tool with a JSON-RPC error, not a tool result.
		res, err := mcptest.TryCallTool(c, "no_such_tool", map[string]any{})
		if err == nil {
			t.Fatalf("calling an unknown tool gave no error but %+v", res)
		}
		if !strings.Contains(err.Error(), "no_such_tool") {
			t.Errorf("error %q does not name the tool", err)
		}
	})

	t.Run("TamperedToken", func(t *testing.T) {
		res := mcptest.CallTool(t, c, "archive_files", map[string]any{"sources": dataURI("image/png", "scan.png", scan)})
		mcptest.MustSucceed(t, "archive_files", res)
		out := mcptest.Structured[struct {
			Files []mcptest.File `json:"files"`
		}](t, res)
		if len(out.Files) == 0 {
			t.Fatalf("archive_files produced no files: %s", res.RawStructuredContent)
		}
		if resp, _ := mcptest.Get(t, out.Files[0].DownloadURL, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("untampered URL: %s, want 200", resp.Status)
		}
		resp, body := mcptest.Get(t, tamperToken(t, out.Files[0].DownloadURL), nil)
		var e struct {
			Error string `json:"error"`
		}
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("tampered token: %s, want 403", resp.Status)
		}
		if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "application/json" {
			t.Errorf("tampered token: Content-Type %q, want application/json", resp.Header.Get("Content-Type"))
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
			t.Errorf("tampered token: body %q, want JSON {\"error\": \"...\"}", body)
		}
	})
}

// testLargeInlineInput sends 6 MiB inline (8 MiB of base64 in one JSON-RPC
// request), above the go-sdk's default 4 MiB request body cap.
func testLargeInlineInput(t *testing.T, c *client.Client) {
	data := make([]byte, 6<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	res := mcptest.CallTool(t, c, "inspect_file", map[string]any{
		"source": map[string]any{"name": "random.bin", "content": b64(data)},
	})
	mcptest.MustSucceed(t, "inspect_file", res)
	got := mcptest.Structured[inspectOutput](t, res)
	if got.Name != "random.bin" || got.SizeBytes != int64(len(data)) || got.SHA256 != sha256Hex(data) {
		t.Errorf("structured content = %+v, want random.bin, %d bytes, sha256 %s", got, len(data), sha256Hex(data))
	}
}

// TestStdio drives the agent over MCP on stdin/stdout (--stdio), and checks
// that it exits with status 0 once its stdin is closed.
func TestStdio(t *testing.T) {
	a := newAgent(t, "--stdio")
	// Pipes of our own, so that closing the client's end of stdin is the
	// only thing that asks the agent to stop (mcp-go's own stdio launcher
	// would send SIGTERM after two seconds).
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	a.Cmd.Stdin, a.Cmd.Stdout = stdinR, stdoutW
	a.Start(t)
	stdinR.Close()
	stdoutW.Close()
	t.Cleanup(func() { stdinW.Close(); stdoutR.Close() })

	c := client.NewClient(transport.NewIO(stdoutR, stdinW, nil), client.WithProtocolVersion(mcptest.Protocol))
	checkServer(t, mcptest.Initialize(t, c))

	// The HTTP server for /files/ runs beside stdio.
	a.WaitReady(t)

	// The order of tools/list is the server's (go-sdk sorts by name).
	if names := toolNames(mcptest.ListTools(t, c)); !slices.Equal(slices.Sorted(slices.Values(names)), []string{"archive_files", "inspect_file"}) {
		t.Errorf("tools over stdio = %v, want archive_files and inspect_file", names)
	}

	scan := testPNG(t)
	res := mcptest.CallTool(t, c, "inspect_file", map[string]any{"source": dataURI("image/png", "scan.png", scan)})
	mcptest.MustSucceed(t, "inspect_file", res)
	want := inspectOutput{Name: "scan.png", MIMEType: "image/png", SizeBytes: int64(len(scan)), SHA256: sha256Hex(scan)}
	if got := mcptest.Structured[inspectOutput](t, res); got != want {
		t.Errorf("structured content over stdio = %+v, want %+v", got, want)
	}

	if err := c.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		t.Errorf("close stdio client: %v", err)
	}
	a.WaitExit(t, "stdin closing")
}
