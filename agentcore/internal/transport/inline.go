package transport

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/filehttp"
	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/internal/lib/quota"
	"github.com/go-json-experiment/json/jsontext"
)

// Inline files are decoded as they arrive. A JSON-RPC request to /mcp or
// /a2a is read as a token stream (jsontext); a long string in a file
// position — any file parameter of the MCP tool being called (FileParams:
// top level, nested, in arrays, the object form's "content"), or the
// "bytes" of an A2A file part — is not handed to the tokenizer whole:
// its base64 (plain or in a data URI) is decoded while it is read, straight
// into a staged file of the caller, and the JSON the SDK then parses
// carries the staged file's signed URL in its place (an A2A part's
// "bytes" becomes "uri"), which the one resolver reads from the store. The
// SDKs never see the bytes. Caps apply while streaming:
// AGENT_MAX_UPLOAD_BYTES per file, the body limit as a whole, and the
// owner's quota; a refused or broken request leaves nothing staged.

// inlineMinBody is the smallest body worth the pre-pass: one that cannot
// hold a long inline file goes to the SDK as it is.
const inlineMinBody = 64 << 10

// inlineLookahead is how much of a string is looked at to tell a long
// inline file (staged) from a short value (left to the tokenizer).
const inlineLookahead = 1 << 10

// inlineChunk bounds each read of the body: the tokenizer's buffer holds
// at most about this much of a string before the pre-pass takes it over.
const inlineChunk = 32 << 10

// sinkChunk is the size of the reads and writes of a string taken over:
// large enough that decoding and storing run with few system calls.
const sinkChunk = 256 << 10

// Dialect tells which JSON-RPC dialect a body speaks.
type Dialect int

// The dialects of the inline pass.
const (
	MCP Dialect = iota
	A2A
)

// InlinePass stages the long inline files of JSON-RPC request bodies as
// they arrive (see above).
type InlinePass struct {
	Store          fileserve.Store
	Files          *filehttp.Server // the staged files' signed URLs
	MaxUploadBytes int64
	// Owner is the owner a request acts for (callers.Guard.Owner).
	Owner func(*http.Request) (string, error)
	// Tool finds a tool, for its file parameters.
	Tool func(name string) (calls.Tool, bool)

	claims inlineClaims
}

// Wrap runs the pre-pass over the POST bodies h gets. The staged
// files are removed once the request is answered: a tools/call, a blocking
// message/send and a message/stream are answered when the tool is done. A
// non-blocking message/send ("configuration": {"blocking": false}) runs on
// after its answer, so its files stay until AGENT_STAGING_TTL.
func (ip *InlinePass) Wrap(proto Dialect, limit int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(headerInlineStaged)
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody ||
			(r.ContentLength >= 0 && r.ContentLength < inlineMinBody) || r.ContentLength > limit {
			h.ServeHTTP(w, r)
			return
		}
		owner, err := ip.Owner(r)
		if err != nil {
			h.ServeHTTP(w, r) // the handler answers 401
			return
		}
		p := &inlinePass{ip: ip, ctx: r.Context(), owner: owner, proto: proto}
		body := http.MaxBytesReader(w, r.Body, limit)
		out, err := p.run(body)
		if err != nil {
			p.discard()
			code := http.StatusBadRequest
			msg := "the request could not be read: " + err.Error()
			var qe *quota.Error
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &qe):
				code, msg = http.StatusInsufficientStorage, qe.Error()
			case errors.As(err, &mbe):
				code, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("request exceeds the limit of %d bytes (AGENT_MAX_UPLOAD_BYTES as base64 plus 1 MiB); upload large files to /uploads and send their URL", limit)
			case errors.Is(err, fileserve.ErrTooLarge):
				code, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("an inline file exceeds the limit of %d bytes (AGENT_MAX_UPLOAD_BYTES)", ip.MaxUploadBytes)
			}
			httpjson.WriteError(w, code, msg)
			return
		}
		if !p.keep {
			// A tools/call answered with a task takes the files over
			// (Claim); the rest go with the request.
			defer ip.claims.offer(r, p)()
		}
		r = r.WithContext(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(out))
		r.ContentLength = int64(len(out))
		r.Header.Set("Content-Length", strconv.Itoa(len(out)))
		h.ServeHTTP(w, r)
	})
}

// Run is the pre-pass over one body of owner: the JSON to hand on, and the
// files it staged (none when it fails), which Discard removes.
func (ip *InlinePass) Run(ctx context.Context, owner string, proto Dialect, body io.Reader) (out []byte, staged []fileserve.Meta, err error) {
	p := &inlinePass{ip: ip, ctx: ctx, owner: owner, proto: proto}
	if out, err = p.run(body); err != nil {
		p.discard()
		return nil, nil, err
	}
	return out, p.staged, nil
}

// Discard removes staged files nobody will take.
func (ip *InlinePass) Discard(ctx context.Context, staged []fileserve.Meta) {
	for _, m := range staged {
		ip.Store.Delete(context.WithoutCancel(ctx), m.Area, m.Owner, m.ID)
	}
}

// inlinePass is the pre-pass over one request body.
type inlinePass struct {
	ip     *InlinePass
	ctx    context.Context
	owner  string
	proto  Dialect
	staged []fileserve.Meta
	keep   bool // the staged files outlive the request (a non-blocking A2A send)

	method, tool string
	fileParams   []string
}

// discard removes the files the pass staged.
func (p *inlinePass) discard() { p.ip.Discard(p.ctx, p.staged) }

// frame is one open object or array of the token stream.
type frame struct {
	array bool
	key   string // the current member's name
	name  bool   // an object expecting a member name next
}

// inlineTap is the reader the tokenizer reads: queued bytes first (given
// back by the pre-pass), then the body, in chunks of at most inlineChunk.
// The pre-pass reads a string it takes over through it too, so that bytes
// queued but not yet read by the tokenizer come first.
type inlineTap struct {
	src  io.Reader
	feed []byte
	max  int // the most read from src at once
}

func (t *inlineTap) Read(b []byte) (int, error) {
	return t.readAny(b[:min(len(b), t.max)])
}

// readAny is Read without the bound, for the pre-pass itself.
func (t *inlineTap) readAny(b []byte) (int, error) {
	if len(t.feed) > 0 {
		n := copy(b, t.feed)
		t.feed = t.feed[n:]
		return n, nil
	}
	return t.src.Read(b)
}

// run reads body and returns the JSON to hand on.
func (p *inlinePass) run(body io.Reader) ([]byte, error) {
	tap := &inlineTap{src: body, max: inlineChunk}
	dec := jsontext.NewDecoder(tap, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var stack []frame
	var pendingName string
	hasPending := false
	// writeName writes the member name held back for the value that comes.
	writeName := func() error {
		if !hasPending {
			return nil
		}
		hasPending = false
		return enc.WriteToken(jsontext.String(pendingName))
	}
	for {
		kind := dec.PeekKind()
		top := len(stack) - 1
		isName := top >= 0 && stack[top].name
		if kind == '"' && !isName {
			path := valuePath(stack)
			if rename, ok := p.filePosition(path); ok {
				ref, err := p.divert(dec, tap)
				if err != nil {
					return nil, err
				}
				if ref != "" {
					if rename != "" {
						pendingName = rename
					}
					if err := writeName(); err != nil {
						return nil, err
					}
					if err := enc.WriteToken(jsontext.String(ref)); err != nil {
						return nil, err
					}
					if !stack[top].array {
						stack[top].name = true
					}
					continue
				}
			}
		}
		tok, err := dec.ReadToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if isName && tok.Kind() == '"' {
			pendingName, hasPending = tok.String(), true
			stack[top].key = pendingName
			stack[top].name = false
			continue
		}
		if err := writeName(); err != nil {
			return nil, err
		}
		if err := enc.WriteToken(tok); err != nil {
			return nil, err
		}
		switch tok.Kind() {
		case '{':
			stack = append(stack, frame{name: true})
			continue
		case '[':
			stack = append(stack, frame{array: true})
			continue
		case '}', ']':
			stack = stack[:len(stack)-1]
		case '"':
			p.note(valuePath(stack), tok.String())
		case 'f':
			if p.proto == A2A && valuePath(stack) == "params.configuration.blocking" {
				p.keep = true
			}
		}
		if top = len(stack) - 1; top >= 0 && !stack[top].array {
			stack[top].name = true
		}
	}
	return out.Bytes(), nil
}

// valuePath writes where the next value is: member names joined by dots,
// "[]" for an array item ("params.arguments.embeds[].content").
func valuePath(stack []frame) string {
	var b strings.Builder
	for i, f := range stack {
		if f.array {
			b.WriteString("[]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(f.key)
	}
	return b.String()
}

// note remembers the JSON-RPC method and the MCP tool's name as they pass.
func (p *inlinePass) note(path, value string) {
	switch path {
	case "method":
		p.method = value
	case "params.name":
		if p.proto == MCP && p.method == "tools/call" && p.tool == "" {
			p.tool = value
			if t, ok := p.ip.Tool(value); ok {
				p.fileParams = t.FileParams
			}
		}
	}
}

// filePosition reports whether a string at path holds a file, and the
// member name to write for it instead of its own ("" to keep it).
func (p *inlinePass) filePosition(path string) (rename string, ok bool) {
	switch p.proto {
	case A2A:
		if (p.method == "message/send" || p.method == "message/stream") && path == "params.message.parts[].file.bytes" {
			return "uri", true
		}
	case MCP:
		arg, found := strings.CutPrefix(path, "params.arguments.")
		if !found || p.tool == "" {
			return "", false
		}
		for _, fp := range p.fileParams {
			switch arg {
			case fp, fp + "[]", fp + ".content", fp + "[].content":
				return "", true
			}
		}
	}
	return "", false
}

// divert takes over the string the tokenizer is about to read when it is a
// long inline file: it decodes it into a staged file while reading it, lets
// the tokenizer read a short stand-in (dropped), and returns the staged
// file's signed URL. A short or non-file string is left to the tokenizer
// ("" and no error).
func (p *inlinePass) divert(dec *jsontext.Decoder, tap *inlineTap) (string, error) {
	unread := dec.UnreadBuffer()
	q := bytes.IndexByte(unread, '"')
	if q < 0 {
		return "", nil
	}
	held := unread[q+1:] // the start of the string, in the tokenizer's buffer
	look := append([]byte(nil), held...)
	var extra []byte
	for len(look) < inlineLookahead && closingQuote(look) < 0 {
		buf := make([]byte, inlineLookahead)
		n, err := tap.Read(buf)
		look = append(look, buf[:n]...)
		extra = append(extra, buf[:n]...)
		if err != nil {
			break
		}
	}
	if closingQuote(look) >= 0 || !looksInline(look) {
		tap.feed = append(extra, tap.feed...) // give the tokenizer what was looked at
		return "", nil
	}

	sink, err := p.newSink(look)
	if err != nil {
		return "", err
	}
	// The tokenizer holds `held`; it gets a closing quote after them once
	// the rest of the string has gone to the sink.
	closer := closeString(held)
	if err := sink.feed(look[sink.skip:]); err != nil {
		return "", sink.abort(err)
	}
	buf := make([]byte, sinkChunk)
	for {
		n, rerr := tap.readAny(buf)
		if n > 0 {
			chunk := buf[:n]
			if end := sink.end(chunk); end >= 0 {
				if err := sink.feed(chunk[:end]); err != nil {
					return "", sink.abort(err)
				}
				tap.feed = append(closer, chunk[end+1:]...)
				break
			}
			if err := sink.feed(chunk); err != nil {
				return "", sink.abort(err)
			}
		}
		if rerr != nil {
			if rerr == io.EOF {
				rerr = io.ErrUnexpectedEOF
			}
			return "", sink.abort(fmt.Errorf("the body ended inside an inline file: %w", rerr))
		}
	}
	m, err := sink.finish()
	if err != nil {
		return "", err
	}
	p.staged = append(p.staged, m)
	if _, err := dec.ReadToken(); err != nil { // the stand-in
		return "", err
	}
	return p.ip.Files.URL(m)
}

// closingQuote returns the index of the quote that ends a string whose
// content starts at b[0], or -1 when b holds no end.
func closingQuote(b []byte) int {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// closeString returns what ends a string whose content so far is held
// (which may stop inside an escape) as valid JSON.
func closeString(held []byte) []byte {
	// Find an escape left open at the end.
	for i := 0; i < len(held); i++ {
		if held[i] != '\\' {
			continue
		}
		if i+1 >= len(held) {
			return []byte(`\"`) // a lone backslash: make it "\\" and close
		}
		if held[i+1] == 'u' {
			if digits := len(held) - (i + 2); digits < 4 {
				return append(bytes.Repeat([]byte("0"), 4-digits), '"')
			}
		}
		i++
	}
	return []byte(`"`)
}

// looksInline reports whether the start of a string reads as an inline
// file: a data URI, or base64.
func looksInline(b []byte) bool {
	if bytes.HasPrefix(b, []byte("data:")) {
		return true
	}
	for _, c := range b[:min(len(b), 256)] {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("+/=-_\\\r\n", c) >= 0) {
			return false
		}
	}
	return true
}

// inlineSink decodes the content of a JSON string (escapes, then base64)
// into a staged file as it comes.
type inlineSink struct {
	skip int // bytes of the look-ahead before the base64 (a data URI's header)
	pass *inlinePass
	pw   *io.PipeWriter
	done chan putResult
	esc  int    // pending escape: 0 none, 1 after '\', 2..5 in \u with digits
	uhex []byte // the digits of a \u escape
	out  []byte
	dec  []byte
}

type putResult struct {
	m   fileserve.Meta
	err error
}

// b64 maps the characters of both base64 alphabets to the standard one;
// 0 drops whitespace, 1 marks a character that is not base64.
var base64Alphabet = func() (t [256]byte) {
	for i := range t {
		t[i] = 1
	}
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") {
		t[c] = c
	}
	t['-'], t['_'] = '+', '/'
	t[' '], t['\t'], t['\r'], t['\n'] = 0, 0, 0, 0
	return t
}()

// newSink starts the staged file for a string whose start is look.
func (p *inlinePass) newSink(look []byte) (*inlineSink, error) {
	name, mimeType, skip := "inline.bin", "", 0
	if bytes.HasPrefix(look, []byte("data:")) {
		comma := bytes.IndexByte(look, ',')
		if comma < 0 {
			return nil, errors.New(`an inline file's data URI has no "," within its first 1 KiB; the form is data:<mime>[;name=<file>];base64,<data>`)
		}
		header := strings.ReplaceAll(string(look[len("data:"):comma]), `\/`, "/")
		if !strings.HasSuffix(strings.ToLower(header), ";base64") {
			return nil, errors.New("a long inline file must be a base64 data URI (data:<mime>;base64,<data>); percent-encoded data URIs are only taken for small files")
		}
		mimeType = strings.TrimSpace(strings.Split(header, ";")[0])
		if n := dataURIName(header); n != "" {
			name = n
		}
		skip = comma + 1
	}
	pr, pw := io.Pipe()
	s := &inlineSink{pass: p, skip: skip, pw: pw, done: make(chan putResult, 1), out: make([]byte, 0, sinkChunk), dec: make([]byte, sinkChunk)}
	nf := fileserve.NewFile{Area: fileserve.Staging, Owner: p.owner, Name: name, MIMEType: mimeType, MaxBytes: p.ip.MaxUploadBytes}
	go func() {
		m, err := p.ip.Store.Put(p.ctx, nf, pr)
		pr.CloseWithError(errSinkClosed) // a writer still writing stops
		s.done <- putResult{m, err}
	}()
	return s, nil
}

// errSinkClosed ends the writes of a sink whose store gave up.
var errSinkClosed = errors.New("the staged file was refused")

// end returns the index of the closing quote in chunk, given the escape
// state the sink is in, or -1.
func (s *inlineSink) end(chunk []byte) int {
	esc := s.esc
	for i := 0; i < len(chunk); i++ {
		if esc == 0 {
			// The common case: plain base64 up to the closing quote.
			rest := chunk[i:]
			q := bytes.IndexByte(rest, '"')
			bs := bytes.IndexByte(rest, '\\')
			if bs < 0 || (q >= 0 && q < bs) {
				if q < 0 {
					return -1
				}
				return i + q
			}
			i += bs
			esc = 1
			continue
		}
		c := chunk[i]
		switch {
		case esc == 1:
			if c == 'u' {
				esc = 2
			} else {
				esc = 0
			}
		default: // in \u
			if esc++; esc == 6 {
				esc = 0
			}
		}
	}
	return -1
}

// feed decodes string content into the staged file.
func (s *inlineSink) feed(chunk []byte) error {
	for len(chunk) > 0 {
		if s.esc == 0 {
			k := bytes.IndexByte(chunk, '\\')
			plain := chunk
			if k >= 0 {
				plain = chunk[:k]
			}
			if err := s.base64(plain); err != nil {
				return err
			}
			if k < 0 {
				return nil
			}
			chunk = chunk[k+1:]
			s.esc = 1
			continue
		}
		c := chunk[0]
		chunk = chunk[1:]
		switch {
		case s.esc == 1 && c == 'u':
			s.esc, s.uhex = 2, s.uhex[:0]
		case s.esc == 1:
			s.esc = 0
			switch c {
			case '/':
				if err := s.base64([]byte{'/'}); err != nil {
					return err
				}
			case 'n', 'r', 't':
			default:
				return fmt.Errorf("an inline file holds the escape \\%c, which base64 never needs", c)
			}
		default: // in \u
			s.uhex = append(s.uhex, c)
			if s.esc++; s.esc == 6 {
				s.esc = 0
				v, err := strconv.ParseUint(string(s.uhex), 16, 16)
				if err != nil || v >= 0x80 {
					return fmt.Errorf("an inline file holds the escape \\u%s, which is not base64", s.uhex)
				}
				if err := s.base64([]byte{byte(v)}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// base64 decodes base64 characters (either alphabet, whitespace ignored)
// and writes the bytes to the staged file.
func (s *inlineSink) base64(b []byte) error {
	for len(b) > 0 {
		n := min(len(b), sinkChunk-len(s.out)-4)
		s.out = append(s.out, b[:n]...)
		b = b[n:]
		if err := s.flush(false); err != nil {
			return err
		}
	}
	return nil
}

// normalize rewrites the gathered characters to the standard alphabet
// without whitespace, or says which character is not base64.
func (s *inlineSink) normalize() error {
	j := 0
	for _, c := range s.out {
		switch m := base64Alphabet[c]; m {
		case 0:
		case 1:
			return fmt.Errorf("an inline file is not valid base64: it holds %q", c)
		default:
			s.out[j] = m
			j++
		}
	}
	s.out = s.out[:j]
	return nil
}

// flush decodes the whole quads gathered (all, padded, when last). Plain
// standard base64 is decoded as it is; anything else (the URL alphabet,
// spaces, line breaks) is normalized first.
func (s *inlineSink) flush(last bool) error {
	whole := len(s.out) / 4 * 4
	n, err := base64.StdEncoding.Decode(s.dec, s.out[:whole])
	if err != nil || (last && whole < len(s.out)) {
		if err := s.normalize(); err != nil {
			return err
		}
		if last {
			for len(s.out)%4 != 0 {
				s.out = append(s.out, '=')
			}
		}
		whole = len(s.out) / 4 * 4
		if n, err = base64.StdEncoding.Decode(s.dec, s.out[:whole]); err != nil {
			return fmt.Errorf("an inline file is not valid base64: %v", err)
		}
	}
	if n > 0 {
		if _, err := s.pw.Write(s.dec[:n]); err != nil {
			return err
		}
	}
	s.out = append(s.out[:0], s.out[whole:]...)
	return nil
}

// finish ends the file and returns what the store made of it.
func (s *inlineSink) finish() (fileserve.Meta, error) {
	if err := s.flush(true); err != nil {
		return fileserve.Meta{}, s.abort(err)
	}
	s.pw.Close()
	r := <-s.done
	return r.m, r.err
}

// abort ends the file with err; the store keeps nothing. A failure of the
// store itself wins over the write error it caused.
func (s *inlineSink) abort(err error) error {
	s.pw.CloseWithError(err)
	r := <-s.done
	if r.err == nil { // stored before the error: take it back
		s.pass.ip.Store.Delete(context.WithoutCancel(s.pass.ctx), r.m.Area, r.m.Owner, r.m.ID)
		return err
	}
	if errors.Is(err, errSinkClosed) {
		return r.err
	}
	return err
}
