package ocr_test

// The draft MCP file contract (SEP-2631 at modelcontextprotocol commit
// c3cf0eba) against the built ocr-agent and composer-agent, driven by a
// raw JSON-RPC client written from the reference host's shapes (openai/codex
// PR 28337: codex-rs/codex-mcp/src/file_transfer.rs and
// core/src/mcp_file_transfer.rs), not from agentura's packages: it reads
// x-mcp-file objects and _meta["openai/fileParams"] as codex does, sends
// files/authorizeUpload {name, mimeType, size, digest}, follows the upload
// descriptor (PUT raw body, or POST multipart), calls the tool with the file
// URI, finds FileValue outputs the way codex walks a result, resolves them
// with files/authorizeDownload and checks size and sha-256 of the bytes.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// Shapes as the reference host declares them (serde, camelCase).
type (
	sepDigest struct {
		Algorithm string `json:"algorithm"`
		Value     string `json:"value"`
	}
	sepFileValue struct {
		URI      string     `json:"uri"`
		Name     *string    `json:"name"`
		MIMEType *string    `json:"mimeType"`
		Size     *uint64    `json:"size"`
		Digest   *sepDigest `json:"digest"`
	}
	sepDescriptor struct {
		Transport string            `json:"transport"`
		Method    string            `json:"method"`
		URL       string            `json:"url"`
		Headers   map[string]string `json:"headers"`
		Multipart *struct {
			FileField string            `json:"fileField"`
			Fields    map[string]string `json:"fields"`
		} `json:"multipart"`
		ExpiresAt *string `json:"expiresAt"`
	}
	sepUploadParams struct {
		Name     string     `json:"name"`
		MIMEType string     `json:"mimeType"`
		Size     uint64     `json:"size"`
		Digest   *sepDigest `json:"digest,omitempty"`
	}
	sepUploadResult struct {
		File     sepFileValue   `json:"file"`
		Upload   sepDescriptor  `json:"upload"`
		Download *sepDescriptor `json:"download"`
	}
	sepAuthorizedFile struct {
		File     sepFileValue   `json:"file"`
		Download *sepDescriptor `json:"download"`
	}
	// sepSpec is what the reference host reads of one file argument.
	sepSpec struct {
		accept   []string
		maxSize  uint64
		inline   bool
		upload   bool
		isArray  bool
		fromMeta bool
	}
)

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("JSON-RPC %d: %s %s", e.Code, e.Message, e.Data)
}

// rawClient speaks MCP streamable HTTP by hand: initialize (2025-06-18, as
// codex does, with no files capability), then requests in the session.
type rawClient struct {
	t       *testing.T
	url     string
	session string
	id      atomic.Int64
	http    *http.Client
}

func newRawClient(t *testing.T, base string) *rawClient {
	c := &rawClient{t: t, url: base + "/mcp", http: &http.Client{Timeout: 10 * time.Minute}}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := c.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{"elicitation": map[string]any{}},
		"clientInfo":      map[string]any{"name": "codex-mcp-client", "version": "test"},
	}, &init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	c.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

// post sends one message and returns the answer's JSON-RPC message (from
// JSON or from an SSE stream), or nil for a notification.
func (c *rawClient) post(msg map[string]any) map[string]any {
	c.t.Helper()
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("POST %s: %v", msg["method"], err)
	}
	defer resp.Body.Close()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	if resp.StatusCode == http.StatusAccepted {
		return nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("POST %s: %s: %s", msg["method"], resp.Status, b)
	}
	id := msg["id"]
	decode := func(b []byte) map[string]any {
		var m map[string]any
		if json.Unmarshal(b, &m) == nil && m["id"] != nil && fmt.Sprint(m["id"]) == fmt.Sprint(id) {
			return m
		}
		return nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 256<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				if m := decode([]byte(strings.TrimSpace(data))); m != nil {
					return m
				}
			}
		}
		c.t.Fatalf("%s: the event stream ended without the answer (%v)", msg["method"], sc.Err())
	}
	b, _ := io.ReadAll(resp.Body)
	if m := decode(b); m != nil {
		return m
	}
	c.t.Fatalf("%s: no answer in %s", msg["method"], b)
	return nil
}

// call sends a request; a JSON-RPC error is returned as *rpcError.
func (c *rawClient) call(method string, params, out any) error {
	c.t.Helper()
	m := c.post(map[string]any{"jsonrpc": "2.0", "id": c.id.Add(1), "method": method, "params": params})
	if e, ok := m["error"]; ok {
		b, _ := json.Marshal(e)
		var re rpcError
		json.Unmarshal(b, &re)
		return &re
	}
	b, _ := json.Marshal(m["result"])
	return json.Unmarshal(b, out)
}

// tool is a tool as tools/list gives it.
type tool struct {
	Name        string         `json:"name"`
	InputSchema map[string]any `json:"inputSchema"`
	Meta        map[string]any `json:"_meta"`
}

func (c *rawClient) tools() map[string]tool {
	var res struct {
		Tools []tool `json:"tools"`
	}
	if err := c.call("tools/list", map[string]any{}, &res); err != nil {
		c.t.Fatalf("tools/list: %v", err)
	}
	out := map[string]tool{}
	for _, t := range res.Tools {
		out[t.Name] = t
	}
	return out
}

// fileSpecs reads a tool's file arguments as codex's file_input_specs does:
// an x-mcp-file object on a top-level property or on its items (transfer
// modes default to both), merged with _meta["openai/fileParams"].
func fileSpecs(t tool) map[string]*sepSpec {
	specs := map[string]*sepSpec{}
	props, _ := t.InputSchema["properties"].(map[string]any)
	for name, p := range props {
		prop, _ := p.(map[string]any)
		isArray := prop["type"] == "array" || prop["items"] != nil
		ext, ok := prop["x-mcp-file"].(map[string]any)
		if !ok {
			items, _ := prop["items"].(map[string]any)
			ext, ok = items["x-mcp-file"].(map[string]any)
		}
		if !ok {
			continue
		}
		s := &sepSpec{isArray: isArray}
		for _, a := range asList(ext["accept"]) {
			if a, _ := a.(string); a != "" {
				s.accept = append(s.accept, a)
			}
		}
		if f, ok := ext["maxSize"].(float64); ok && f >= 0 {
			s.maxSize = uint64(f)
		}
		modes, present := ext["transferModes"]
		if !present {
			s.inline, s.upload = true, true
		}
		for _, m := range asList(modes) {
			s.inline = s.inline || m == "inline"
			s.upload = s.upload || m == "upload"
		}
		specs[name] = s
	}
	for _, n := range asList(t.Meta["openai/fileParams"]) {
		name, _ := n.(string)
		if s, ok := specs[name]; ok {
			s.fromMeta = true
		} else if name != "" {
			specs[name] = &sepSpec{fromMeta: true}
		}
	}
	return specs
}

func asList(v any) []any { l, _ := v.([]any); return l }

// isFileTransferURI is codex's test: an absolute URI whose scheme is not
// data, file, http or https.
func isFileTransferURI(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return false
	}
	switch u.Scheme {
	case "data", "file", "http", "https":
		return false
	}
	return true
}

func sepDigestOf(b []byte) sepDigest {
	sum := sha256.Sum256(b)
	return sepDigest{Algorithm: "sha-256", Value: base64.RawURLEncoding.EncodeToString(sum[:])}
}

// noRedirects is an HTTP client that follows no redirect, as codex's
// transfer client.
var noRedirects = &http.Client{Timeout: 5 * time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error {
	return http.ErrUseLastResponse
}}

// sendUpload follows an upload descriptor as codex's put_transfer_file
// does; it returns the HTTP status and body.
func sendUpload(t *testing.T, d sepDescriptor, name, mimeType string, data []byte) (int, string) {
	t.Helper()
	if d.Transport != "https" || (d.Method != "PUT" && d.Method != "POST") {
		t.Fatalf("upload descriptor %+v: want transport https, method PUT or POST", d)
	}
	if d.ExpiresAt != nil {
		if exp, err := time.Parse(time.RFC3339, *d.ExpiresAt); err != nil || !exp.After(time.Now()) {
			t.Fatalf("upload descriptor expiresAt %q: not an RFC 3339 time in the future (%v)", *d.ExpiresAt, err)
		}
	}
	var body io.Reader = bytes.NewReader(data)
	contentType := ""
	if d.Multipart != nil {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for k, v := range d.Multipart.Fields {
			mw.WriteField(k, v)
		}
		fw, _ := mw.CreateFormFile(d.Multipart.FileField, name)
		fw.Write(data)
		mw.Close()
		body, contentType = &b, mw.FormDataContentType()
	}
	req, err := http.NewRequest(d.Method, d.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range d.Headers {
		switch strings.ToLower(k) {
		case "connection", "content-length", "host", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade":
			t.Fatalf("upload descriptor carries header %q, which codex refuses", k)
		}
		if d.Multipart != nil && strings.EqualFold(k, "content-type") {
			continue
		}
		req.Header.Set(k, v)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// upload is authorizeUpload plus the transfer, as codex adapts a local file
// for an argument whose spec allows upload.
func (c *rawClient) upload(name, mimeType string, data []byte) sepFileValue {
	c.t.Helper()
	digest := sepDigestOf(data)
	var res sepUploadResult
	if err := c.call("files/authorizeUpload", sepUploadParams{Name: name, MIMEType: mimeType, Size: uint64(len(data)), Digest: &digest}, &res); err != nil {
		c.t.Fatalf("files/authorizeUpload %s: %v", name, err)
	}
	if !isFileTransferURI(res.File.URI) {
		c.t.Fatalf("authorizeUpload file.uri %q is not a file transfer URI", res.File.URI)
	}
	if res.File.Size != nil && *res.File.Size != uint64(len(data)) || res.File.Digest != nil && *res.File.Digest != digest {
		c.t.Fatalf("authorizeUpload answered another size or digest: %+v", res.File)
	}
	if code, body := sendUpload(c.t, res.Upload, name, mimeType, data); code/100 != 2 {
		c.t.Fatalf("upload of %s: HTTP %d: %s", name, code, body)
	}
	return res.File
}

// callTool calls a tool; it returns the result or fails on a JSON-RPC error.
func (c *rawClient) callTool(name string, args map[string]any) (structured map[string]any, content []map[string]any, isError bool, text string) {
	c.t.Helper()
	var res struct {
		Content           []map[string]any `json:"content"`
		StructuredContent map[string]any   `json:"structuredContent"`
		IsError           bool             `json:"isError"`
	}
	if err := c.call("tools/call", map[string]any{"name": name, "arguments": args}, &res); err != nil {
		c.t.Fatalf("tools/call %s: %v", name, err)
	}
	for _, b := range res.Content {
		if s, ok := b["text"].(string); ok {
			text += s + "\n"
		}
	}
	return res.StructuredContent, res.Content, res.IsError, text
}

// outputFiles walks a result as codex's collect_output_files does: any
// object with a file-transfer uri, except resource links, in content and
// structuredContent.
func outputFiles(content []map[string]any, structured map[string]any) map[string]sepFileValue {
	out := map[string]sepFileValue{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			if v["type"] == "resource_link" {
				return
			}
			if uri, _ := v["uri"].(string); isFileTransferURI(uri) {
				b, _ := json.Marshal(v)
				var fv sepFileValue
				json.Unmarshal(b, &fv)
				out[uri] = fv
				return
			}
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, c := range content {
		walk(c)
	}
	walk(structured)
	return out
}

// download resolves a file URI and fetches it, checking what codex checks:
// the same URI back, a GET descriptor, no redirect, size and sha-256.
func (c *rawClient) download(uri string, listed sepFileValue) []byte {
	c.t.Helper()
	var res sepAuthorizedFile
	if err := c.call("files/authorizeDownload", map[string]any{"uri": uri}, &res); err != nil {
		c.t.Fatalf("files/authorizeDownload %s: %v", uri, err)
	}
	if res.File.URI != uri || res.Download == nil || res.Download.Transport != "https" || res.Download.Method != "GET" {
		c.t.Fatalf("authorizeDownload %s answered %+v", uri, res)
	}
	req, _ := http.NewRequest(http.MethodGet, res.Download.URL, nil)
	for k, v := range res.Download.Headers {
		req.Header.Set(k, v)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("download of %s: %s: %.300s", uri, resp.Status, b)
	}
	size, digest := res.File.Size, res.File.Digest
	if size == nil {
		size = listed.Size
	}
	if digest == nil {
		digest = listed.Digest
	}
	if size == nil || *size != uint64(len(b)) {
		c.t.Fatalf("download of %s: %d bytes, the file value says %v", uri, len(b), size)
	}
	if digest == nil || digest.Algorithm != "sha-256" || *digest != sepDigestOf(b) {
		c.t.Fatalf("download of %s: sha-256 %s, the file value says %+v", uri, sepDigestOf(b).Value, digest)
	}
	return b
}

// padPDF grows a PDF to size bytes with an incremental update holding one
// unreferenced stream of random bytes: still one valid PDF of the same pages.
func padPDF(t *testing.T, pdf []byte, size int) []byte {
	t.Helper()
	start := regexp.MustCompile(`startxref\s+(\d+)\s+%%EOF\s*$`).FindSubmatch(pdf)
	sz := regexp.MustCompile(`/Size\s+(\d+)`).FindAllSubmatch(pdf, -1)
	root := regexp.MustCompile(`/Root\s+(\d+\s+\d+\s+R)`).FindSubmatch(pdf)
	if start == nil || sz == nil || root == nil {
		t.Fatalf("the PDF has no classic trailer to extend")
	}
	n, _ := strconv.Atoi(string(sz[len(sz)-1][1]))
	var b bytes.Buffer
	b.Write(pdf)
	if !bytes.HasSuffix(pdf, []byte("\n")) {
		b.WriteByte('\n')
	}
	obj := b.Len()
	fill := size - b.Len() - 400
	if fill < 0 {
		t.Fatalf("the PDF is %d bytes already", len(pdf))
	}
	fmt.Fprintf(&b, "%d 0 obj\n<< /Length %d >>\nstream\n", n, fill)
	r := rand.New(rand.NewPCG(1, 2))
	junk := make([]byte, fill)
	for i := range junk {
		junk[i] = byte(r.Uint32())
	}
	b.Write(junk)
	b.WriteString("\nendstream\nendobj\n")
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n%d 1\n%010d 00000 n \ntrailer\n<< /Size %d /Root %s /Prev %s >>\nstartxref\n%d\n%%%%EOF\n", n, obj, n+1, root[1], start[1], xref)
	for b.Len() < size {
		b.WriteByte('\n') // whitespace after %%EOF: up to the exact size
	}
	return b.Bytes()
}

// stagedFiles counts the files in an agent's staging area.
func stagedFiles(t *testing.T, dataDir string) int {
	n := 0
	filepath.WalkDir(filepath.Join(dataDir, "staging"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

func dataDirOf(a *mcptest.Agent) string {
	for _, kv := range a.Cmd.Env {
		if v, ok := strings.CutPrefix(kv, "AGENT_DATA_DIR="); ok {
			return v
		}
	}
	return ""
}

// wantRPCError checks a refusal: a JSON-RPC -32602 whose data names reason.
func wantRPCError(t *testing.T, what string, err error, reason string) {
	t.Helper()
	var re *rpcError
	if !errors.As(err, &re) {
		t.Fatalf("%s: want a JSON-RPC error, got %v", what, err)
	}
	var data struct {
		Reason string `json:"reason"`
	}
	json.Unmarshal(re.Data, &data)
	if re.Code != -32602 || data.Reason != reason || re.Message == "" {
		t.Fatalf("%s: got %v, want -32602 with reason %q and a message", what, re, reason)
	}
	t.Logf("%s: %s", what, re.Message)
}

// TestE2EDraftFileContractOCR moves a 40 MiB PDF into ocr_document through
// files/authorizeUpload and its descriptor, and a 10 KiB one inline, and
// takes the searchable PDFs back through files/authorizeDownload; then
// every refusal the draft calls for.
func TestE2EDraftFileContractOCR(t *testing.T) {
	ocrtest.Require(t, "tesseract", "pdftoppm", "pdfinfo")
	a := mcptest.StartAgent(t, agentBin, "AGENT_URL_TTL=3s")
	c := newRawClient(t, a.URL)

	// Declarations, as codex reads them.
	tools := c.tools()
	doc := fileSpecs(tools["ocr_document"])["source"]
	if doc == nil || !doc.upload || !doc.inline || !doc.fromMeta || doc.maxSize != 50<<20 || !containsStr(doc.accept, "application/pdf") {
		t.Fatalf("ocr_document source, as codex reads it: %+v (want x-mcp-file with both modes, maxSize 50 MiB, accept with application/pdf, and openai/fileParams)", doc)
	}
	batch := fileSpecs(tools["ocr_batch"])["sources"]
	if batch == nil || !batch.isArray || !batch.upload || !batch.fromMeta {
		t.Fatalf("ocr_batch sources, as codex reads it: %+v", batch)
	}

	// 40 MiB through the upload descriptor.
	big := padPDF(t, ocrtest.PDF(t, []string{"Invoice 4711 total due"}), 40<<20)
	if uint64(len(big)) > doc.maxSize {
		t.Fatal("the test file is over maxSize")
	}
	fv := c.upload("scan.pdf", "application/pdf", big)
	start := time.Now()
	structured, content, isErr, text := c.callTool("ocr_document", map[string]any{"source": fv.URI, "outputs": []string{"searchable_pdf"}})
	if isErr || !strings.Contains(strings.ToLower(text), "invoice") {
		t.Fatalf("ocr_document with the uploaded file URI: isError %v: %s", isErr, text)
	}
	t.Logf("40 MiB PDF by file URI: recognised in %v", time.Since(start).Round(time.Millisecond))
	outs := outputFiles(content, structured)
	if len(outs) != 1 {
		t.Fatalf("%d FileValue outputs, want 1 (the searchable PDF): %v", len(outs), structured)
	}
	for uri, f := range outs {
		b := c.download(uri, f)
		if !bytes.HasPrefix(b, []byte("%PDF")) || f.Name == nil || !strings.HasSuffix(*f.Name, ".pdf") {
			t.Fatalf("the searchable PDF %v is not a PDF", f)
		}
	}
	// The seed's contract is still there beside it (one file: flat).
	if structured["download_url"] == nil || structured["filename"] == nil || structured["mime_type"] == nil || structured["size_bytes"] == nil {
		t.Fatalf("structuredContent lost the seed's fields: %v", structured)
	}

	// 10 KiB inline, a data: URI without a name, as codex sends it.
	small := padPDF(t, ocrtest.PDF(t, []string{"Receipt 42"}), 10<<10)
	_, _, isErr, text = c.callTool("ocr_document", map[string]any{"source": "data:application/pdf;base64," + base64.StdEncoding.EncodeToString(small)})
	if isErr || !strings.Contains(strings.ToLower(text), "receipt") {
		t.Fatalf("ocr_document with a 10 KiB data: URI: isError %v: %s", isErr, text)
	}

	// Refusals: each says why, and nothing is kept.
	dataDir := dataDirOf(a)
	before := stagedFiles(t, dataDir)
	var res sepUploadResult
	err := c.call("files/authorizeUpload", sepUploadParams{Name: "huge.pdf", MIMEType: "application/pdf", Size: doc.maxSize + 1}, &res)
	wantRPCError(t, "size above maxSize", err, "maxSizeExceeded")
	err = c.call("files/authorizeUpload", sepUploadParams{Name: "a.zip", MIMEType: "application/zip", Size: 100}, &res)
	wantRPCError(t, "type outside accept", err, "typeNotAccepted")

	// Digest mismatch: declared for other bytes, refused at the upload.
	other := sepDigestOf([]byte("other bytes"))
	if err := c.call("files/authorizeUpload", sepUploadParams{Name: "x.pdf", MIMEType: "application/pdf", Size: uint64(len(small)), Digest: &other}, &res); err != nil {
		t.Fatal(err)
	}
	code, body := sendUpload(t, res.Upload, "x.pdf", "application/pdf", small)
	if code/100 == 2 || !strings.Contains(body, "digestMismatch") {
		t.Fatalf("upload with a digest mismatch: HTTP %d %s", code, body)
	}
	_, _, isErr, text = c.callTool("ocr_document", map[string]any{"source": res.File.URI})
	if !isErr || !strings.Contains(text, "has not arrived") {
		t.Fatalf("the URI of a refused upload: isError %v: %s", isErr, text)
	}

	// A forged descriptor (altered token) uploads nothing.
	if err := c.call("files/authorizeUpload", sepUploadParams{Name: "y.pdf", MIMEType: "application/pdf", Size: uint64(len(small))}, &res); err != nil {
		t.Fatal(err)
	}
	forged := res.Upload
	forged.URL = forged.URL[:len(forged.URL)-4] + "AAAA"
	if code, body := sendUpload(t, forged, "y.pdf", "application/pdf", small); code != http.StatusForbidden {
		t.Fatalf("upload with a forged token: HTTP %d %s", code, body)
	}
	// An expired descriptor (AGENT_URL_TTL=3s) uploads nothing, and its URI
	// then names nothing.
	time.Sleep(4 * time.Second)
	if code, body := sendUpload2(t, res.Upload, small); code != http.StatusForbidden || !strings.Contains(body, "expired") {
		t.Fatalf("upload after the descriptor expired: HTTP %d %s", code, body)
	}
	_, _, isErr, text = c.callTool("ocr_document", map[string]any{"source": res.File.URI})
	if !isErr || !strings.Contains(text, "expired") {
		t.Fatalf("the URI of an expired upload: isError %v: %s", isErr, text)
	}

	// Foreign and forged URIs are clear tool errors.
	_, _, isErr, text = c.callTool("ocr_document", map[string]any{"source": "mcp-file://files.example.com/in/0190c9e2-0000-7000-8000-000000000000"})
	if !isErr || !strings.Contains(text, "not by this agent") {
		t.Fatalf("a foreign file URI: isError %v: %s", isErr, text)
	}
	host := strings.TrimPrefix(a.URL, "http://")
	_, _, isErr, text = c.callTool("ocr_document", map[string]any{"source": "mcp-file://" + host + "/in/0190c9e2-0000-7000-8000-000000000001"})
	if !isErr || !strings.Contains(text, "unknown to this agent") {
		t.Fatalf("a forged file URI: isError %v: %s", isErr, text)
	}
	var af sepAuthorizedFile
	err = c.call("files/authorizeDownload", map[string]any{"uri": "mcp-file://" + host + "/out/0190c9e2-0000-7000-8000-000000000002"}, &af)
	wantRPCError(t, "authorizeDownload of a forged URI", err, "unknownFile")
	if after := stagedFiles(t, dataDir); after != before {
		t.Fatalf("the refusals left %d staged files (before: %d)", after, before)
	}
}

// sendUpload2 is sendUpload without the descriptor's own expiry check, to
// show what the agent answers to a host that ignores it.
func sendUpload2(t *testing.T, d sepDescriptor, data []byte) (int, string) {
	d.ExpiresAt = nil
	return sendUpload(t, d, "f.pdf", "application/pdf", data)
}

func containsStr(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestE2EDraftFileContractComposer merges an uploaded PDF and a 10 KiB
// inline one with merge_pdfs, whose sources is an array of files, and
// takes the merged PDF back by its file URI.
func TestE2EDraftFileContractComposer(t *testing.T) {
	bin := mcptest.BuildBinary(t, "../../cmd/composer-agent", mcptest.RaceEnabled())
	a := mcptest.StartAgent(t, bin)
	c := newRawClient(t, a.URL)
	spec := fileSpecs(c.tools()["merge_pdfs"])["sources"]
	if spec == nil || !spec.isArray || !spec.upload || !spec.inline || !spec.fromMeta || !containsStr(spec.accept, "application/pdf") {
		t.Fatalf("merge_pdfs sources, as codex reads it: %+v", spec)
	}
	first := padPDF(t, ocrtest.PDF(t, []string{"first"}), 2<<20)
	second := padPDF(t, ocrtest.PDF(t, []string{"second"}), 10<<10)
	fv := c.upload("first.pdf", "application/pdf", first)
	structured, content, isErr, text := c.callTool("merge_pdfs", map[string]any{
		"sources": []any{fv.URI, "data:application/pdf;base64," + base64.StdEncoding.EncodeToString(second)},
	})
	if isErr {
		t.Fatalf("merge_pdfs: %s", text)
	}
	outs := outputFiles(content, structured)
	if len(outs) != 1 {
		t.Fatalf("%d FileValue outputs, want 1: %v", len(outs), structured)
	}
	for uri, f := range outs {
		if b := c.download(uri, f); !bytes.HasPrefix(b, []byte("%PDF")) {
			t.Fatal("the merged file is not a PDF")
		}
	}
	if structured["download_url"] == nil || structured["file"] == nil {
		t.Fatalf("a single file's structuredContent has download_url and file: %v", structured)
	}
	// A file URI is good as an input of the agent that made it, too.
	if _, _, isErr, text := c.callTool("merge_pdfs", map[string]any{"sources": []any{structured["file"].(map[string]any)["uri"]}}); isErr {
		t.Fatalf("merge_pdfs of a produced file's URI: %s", text)
	}
}
