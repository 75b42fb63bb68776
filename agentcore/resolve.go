//go:build unix

package agentcore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/agentura/agentura/agentcore/internal/urlfetch"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/filetype"
	"github.com/agentura/agentura/internal/lib/filehttp"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
)

// InputFile is a resolved file input: a local file the tool may read until
// its call ends, when the per-call folder holding it is removed.
type InputFile struct {
	// Path is the local file. Its base name is Name.
	Path string
	// Name is the sanitised original name ("invoice.pdf").
	Name string
	// MIMEType is detected from the content and the name.
	MIMEType string
	// Size is the length in bytes.
	Size int64
}

// ResolveError is the error of a file input that could not be resolved. Its
// message says which input, what was wrong and what to do about it.
type ResolveError struct {
	Name string // the file's name as given, or derived
	Err  error
}

// Error names the file and says what went wrong.
func (e *ResolveError) Error() string {
	if e.Name == "" {
		return "file input: " + e.Err.Error()
	}
	return fmt.Sprintf("file %q: %v", e.Name, e.Err)
}

// Unwrap returns the underlying error.
func (e *ResolveError) Unwrap() error { return e.Err }

// Errors a resolution may wrap; test with errors.Is.
var (
	// ErrUnresolvedReference: the content is a bare file name — the client did
	// not replace its file reference with the file.
	ErrUnresolvedReference = errors.New("unresolved file reference")
	// ErrInputTooLarge: the input exceeds AGENT_MAX_UPLOAD_BYTES.
	ErrInputTooLarge = errors.New("file exceeds the input size limit")
	// ErrPathInputsDisabled: a path was given but AGENT_INPUT_ROOTS is empty.
	ErrPathInputsDisabled = errors.New("path inputs are disabled")
	// ErrOutsideRoots: a path lies outside every input root.
	ErrOutsideRoots = errors.New("path is outside the input roots")
)

// resolver turns file parameters into local files. There is exactly one.
type resolver struct {
	maxBytes int64
	roots    []string // absolute, symlink-free input roots
	private  *privateFiles
	files    *filehttp.Server
	fetch    *urlfetch.Fetcher
	// fileURI opens the file a file URI of the draft MCP file contract
	// names, for owner (mcpfiles.go); nil: no file URIs.
	fileURI func(ctx context.Context, owner, uri string) (io.ReadCloser, fileserve.Meta, error)
}

// resolve writes the file given by (name, content) into a new folder under
// dir and describes it. owner is the caller; it may open its own signed URLs.
func (r *resolver) resolve(ctx context.Context, owner, dir, name, content string) (*InputFile, error) {
	given := name
	content = strings.TrimSpace(content)
	if given == "" {
		given = nameFromContent(content)
	}
	fail := func(err error) (*InputFile, error) { return nil, &ResolveError{Name: given, Err: err} }

	if content == "" {
		if name != "" {
			return fail(fmt.Errorf("%w: content is empty; the client must send the file itself (data URI, base64 or URL), not only its name", ErrUnresolvedReference))
		}
		return fail(errors.New(`no file given: send {"name": "report.pdf", "content": "<data URI, URL or base64>"}`))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(fmt.Errorf("prepare call folder: %w", err))
	}
	slot, err := os.MkdirTemp(dir, "in-")
	if err != nil {
		return fail(fmt.Errorf("prepare call folder: %w", err))
	}
	in, err := r.resolveInto(ctx, owner, slot, name, content)
	if err != nil {
		os.RemoveAll(slot) // a refused input leaves nothing behind
		return fail(err)
	}
	return in, nil
}

func (r *resolver) resolveInto(ctx context.Context, owner, slot, name, content string) (*InputFile, error) {
	switch {
	case hasPrefixFold(content, "data:"):
		return r.fromDataURI(slot, name, content)
	case hasPrefixFold(content, "http://"), hasPrefixFold(content, "https://"):
		return r.fromURL(ctx, owner, slot, name, content)
	case hasPrefixFold(content, mcpfile.Scheme+":") && r.fileURI != nil:
		return r.fromFileURI(ctx, owner, slot, name, content)
	}
	if i := strings.Index(content, "://"); i > 0 && i < 10 && !strings.ContainsAny(content[:i], "/+=") {
		return nil, fmt.Errorf("unsupported URL scheme %q: send an http(s) URL, a data URI, a file URI from files/authorizeUpload or base64", content[:i])
	}
	if content == name || isBareReference(content) {
		return nil, fmt.Errorf("%w: the content %q is a file name, not the file. The client must replace file names with the file's content (a data URI, base64, or a signed URL from /uploads); hosts using the agentura client middleware do this for files in their registry. (A tiny file in plain base64 reads like a name: send it as a data URI.)",
			ErrUnresolvedReference, truncate(content, 80))
	}
	if looksLikePath(content) {
		return r.fromPath(slot, name, content)
	}
	if ambiguousPath(content) {
		return nil, fmt.Errorf("the content %q reads both as a path and as base64, so it is refused: name a path without \"//\" (and only under AGENT_INPUT_ROOTS), or send the bytes as a data URI (data:;base64,<data>)", truncate(content, 80))
	}
	return r.fromBase64(slot, name, content)
}

// isBareReference reports whether content reads as a file's name rather
// than the file: a name with an extension and no folder ("invoice.pdf"), or
// up to 32 bytes of words ("README", "quarterly report", "Rechnung_März"),
// which would otherwise decode as a few bytes of base64 garbage. A file of
// 24 bytes or less therefore goes as a data URI, which is never ambiguous.
func isBareReference(content string) bool {
	if looksLikeFileName(content) && !strings.ContainsAny(content, `/\`) {
		return true
	}
	if len(content) > 32 {
		return false
	}
	for _, r := range content {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == ' ') {
			return false
		}
	}
	return true
}

// looksLikePath reports whether s reads as a file path rather than base64:
// it has a folder separator and a character base64 never uses ('.', '\',
// '~'), or it is a short absolute path without '+' or '='. Plain base64 that
// happens to look like a path can always be sent unambiguously as a data URI.
func looksLikePath(s string) bool {
	if len(s) > 4096 || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	if !strings.ContainsAny(s, `/\`) {
		return false
	}
	if !isBase64Text(s) {
		return true
	}
	return strings.HasPrefix(s, "/") && len(s) <= 1024 && !strings.ContainsAny(s, "+=") && !strings.Contains(s, "//")
}

// tooLarge is the error of an input over the cap; detail may say by how much.
func (r *resolver) tooLarge(detail string) error {
	if detail != "" {
		detail = " (" + detail + ")"
	}
	return fmt.Errorf("%w of %d bytes (AGENT_MAX_UPLOAD_BYTES)%s; send a smaller file, or ask the operator to raise the limit", ErrInputTooLarge, r.maxBytes, detail)
}

// fileIn creates the file for the input in slot, named after name or fallback.
func fileIn(slot, name, fallback string) (*os.File, string, error) {
	clean := SanitizeName(name)
	if clean == "" {
		clean = SanitizeName(fallback)
	}
	if clean == "" {
		clean = "file"
	}
	f, err := os.OpenFile(filepath.Join(slot, clean), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	return f, clean, err
}

// write streams src into a new file of slot, enforcing the size cap while
// streaming, and describes the result.
func (r *resolver) write(slot, name, fallback, mimeHint string, src io.Reader) (*InputFile, error) {
	f, clean, err := fileIn(slot, name, fallback)
	if err != nil {
		return nil, fmt.Errorf("create input file: %w", err)
	}
	n, err := io.Copy(f, io.LimitReader(src, r.maxBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if n > r.maxBytes {
		return nil, r.tooLarge("")
	}
	mimeType, err := filetype.DetectFile(f.Name(), clean)
	if err != nil {
		return nil, fmt.Errorf("read input file: %w", err)
	}
	if mimeType == filetype.Generic && mimeHint != "" {
		mimeType = mimeHint
	}
	return &InputFile{Path: f.Name(), Name: clean, MIMEType: mimeType, Size: n}, nil
}

func (r *resolver) fromDataURI(slot, name, content string) (*InputFile, error) {
	header, payload, ok := strings.Cut(content[len("data:"):], ",")
	if !ok {
		return nil, errors.New(`malformed data URI: no "," before the data; the form is data:<mime>[;name=<file>];base64,<data>`)
	}
	isBase64 := strings.HasSuffix(strings.ToLower(header), ";base64")
	mimeHint := strings.TrimSpace(strings.Split(header, ";")[0])
	fallback := dataURIName(header)
	if fallback == "" {
		fallback = nameForType("file", mimeHint) // the draft's data: URIs carry no name
	}
	if isBase64 {
		in, err := r.write(slot, name, fallback, mimeHint, base64Reader(payload))
		if err != nil && !errors.Is(err, ErrInputTooLarge) && isDecodeError(err) {
			return nil, fmt.Errorf("data URI payload is not valid base64: %s", base64Problem(payload))
		}
		return in, err
	}
	decoded, err := url.PathUnescape(payload)
	if err != nil {
		return nil, fmt.Errorf("data URI payload is not valid percent-encoding: %v", err)
	}
	return r.write(slot, name, fallback, mimeHint, strings.NewReader(decoded))
}

func (r *resolver) fromBase64(slot, name, content string) (*InputFile, error) {
	in, err := r.write(slot, name, "", "", base64Reader(content))
	if err != nil && isDecodeError(err) {
		return nil, fmt.Errorf("content is not a data URI, an http(s) URL, a path or valid base64 (%s); send the file as data:<mime>;base64,<data> or plain base64", base64Problem(content))
	}
	return in, err
}

func (r *resolver) fromURL(ctx context.Context, owner, slot, name, rawURL string) (*InputFile, error) {
	if r.files != nil {
		obj, meta, own, err := r.files.OpenURL(ctx, rawURL, owner)
		if own {
			if err != nil {
				return nil, err
			}
			defer obj.Close()
			if meta.Size > r.maxBytes {
				return nil, r.tooLarge(fmt.Sprintf("the staged file is %d bytes", meta.Size))
			}
			return r.write(slot, name, meta.Name, meta.MIMEType, obj)
		}
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("malformed URL %q", transfer.Redact(rawURL))
	}
	resp, err := r.fetch.Get(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.ContentLength > r.maxBytes {
		return nil, r.tooLarge(fmt.Sprintf("%s is %d bytes", transfer.Redact(rawURL), resp.ContentLength))
	}
	fallback := nameFromContent(resp.Request.URL.String())
	if _, params, err := mimeParse(resp.Header.Get("Content-Disposition")); err == nil && params["filename"] != "" {
		fallback = params["filename"]
	}
	body := reportFetch(ctx, resp.Body, transfer.Redact(rawURL), resp.ContentLength)
	in, err := r.write(slot, name, fallback, resp.Header.Get("Content-Type"), body)
	if err != nil && !errors.Is(err, ErrInputTooLarge) {
		return nil, fmt.Errorf("fetch %s: %w", transfer.Redact(rawURL), err)
	}
	return in, err
}

// fromFileURI reads the file a file URI names: one the caller uploaded
// through files/authorizeUpload, or one a tool produced for it.
func (r *resolver) fromFileURI(ctx context.Context, owner, slot, name, uri string) (*InputFile, error) {
	obj, m, err := r.fileURI(ctx, owner, uri)
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	if m.Size > r.maxBytes {
		return nil, r.tooLarge(fmt.Sprintf("the file is %d bytes", m.Size))
	}
	return r.write(slot, name, m.Name, m.MIMEType, obj)
}

func (r *resolver) splitRoot(p string) (root, rel string, ok bool) {
	clean := filepath.Clean(p)
	for _, root := range r.roots {
		if rel, err := filepath.Rel(root, clean); err == nil && rel != "." && filepath.IsLocal(rel) {
			return root, rel, true
		}
	}
	return "", "", false
}

func (r *resolver) fromPath(slot, name, p string) (*InputFile, error) {
	if len(r.roots) == 0 {
		return nil, fmt.Errorf("%w on this agent (AGENT_INPUT_ROOTS is empty), so %q cannot be read; send the file as a data URI, base64 or URL instead", ErrPathInputsDisabled, truncate(p, 120))
	}
	p = strings.ReplaceAll(p, `\`, "/")
	var f *os.File
	var err error
	if filepath.IsAbs(p) {
		root, rel, ok := r.splitRoot(p)
		if !ok {
			return nil, fmt.Errorf("%w: %q is not inside %s (AGENT_INPUT_ROOTS)", ErrOutsideRoots, p, strings.Join(r.roots, ":"))
		}
		f, err = openInRoot(root, rel)
	} else {
		if !filepath.IsLocal(p) {
			return nil, fmt.Errorf("%w: %q climbs out of the input roots", ErrOutsideRoots, p)
		}
		for _, root := range r.roots {
			if f, err = openInRoot(root, p); err == nil || !errors.Is(err, os.ErrNotExist) {
				break
			}
		}
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no file at %q under the input roots", p)
		}
		if strings.Contains(err.Error(), "escapes") {
			return nil, fmt.Errorf("%w: %q leads outside its input root (through a symbolic link or ..)", ErrOutsideRoots, p)
		}
		return nil, fmt.Errorf("open %q: %w", p, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%q is not a regular file", p)
	}
	if err := r.private.check(p, st); err != nil {
		return nil, err
	}
	if st.Size() > r.maxBytes {
		return nil, r.tooLarge(fmt.Sprintf("%q is %d bytes", p, st.Size()))
	}
	return r.write(slot, name, filepath.Base(p), "", f)
}

// openInRoot opens name for reading without leaving root (os.Root: no "..",
// no symbolic link out). O_NONBLOCK keeps a FIFO from blocking the call
// forever; it changes nothing for the regular files that are accepted.
func openInRoot(root, name string) (*os.File, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// base64Reader decodes s, standard or URL alphabet, padded or not, ignoring
// whitespace, as a stream.
func base64Reader(s string) io.Reader {
	enc := base64.StdEncoding
	if strings.IndexByte(s, '-') >= 0 || strings.IndexByte(s, '_') >= 0 {
		enc = base64.URLEncoding
	}
	if strings.IndexByte(s, '=') < 0 {
		enc = enc.WithPadding(base64.NoPadding)
	}
	var src io.Reader = strings.NewReader(s)
	if strings.IndexByte(s, ' ') >= 0 || strings.IndexByte(s, '\t') >= 0 {
		src = &spaceSkipper{s: s}
	}
	return base64.NewDecoder(enc, src)
}

// spaceSkipper reads a string leaving out spaces and tabs (base64's decoder
// itself skips only line breaks).
type spaceSkipper struct {
	s string
	i int
}

func (r *spaceSkipper) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.i < len(r.s) {
		chunk := r.s[r.i:min(len(r.s), r.i+len(p)-n)]
		cut := len(chunk)
		if k := strings.IndexByte(chunk, ' '); k >= 0 {
			cut = k
		}
		if k := strings.IndexByte(chunk[:cut], '\t'); k >= 0 {
			cut = k
		}
		n += copy(p[n:], chunk[:cut])
		r.i += cut
		if cut < len(chunk) {
			r.i++ // skip the space or tab
		}
	}
	if n == 0 && r.i >= len(r.s) {
		return 0, io.EOF
	}
	return n, nil
}

// ambiguousPath reports whether s, which looksLikePath did not take, still
// reads as an absolute path ("//etc/passwd"): short, starting with "/",
// without '+' or '=', and with a letter segment. Decoded as base64 it would be
// a few bytes of garbage, so it is refused rather than guessed.
func ambiguousPath(s string) bool {
	if !strings.HasPrefix(s, "/") || !strings.Contains(s, "//") || len(s) > 256 || strings.ContainsAny(s, "+= \t\r\n") {
		return false
	}
	for _, seg := range strings.Split(s, "/") {
		if seg != "" && strings.Trim(seg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-0123456789") == "" {
			return true
		}
	}
	return false
}

// base64Problem says where base64 text s goes wrong: the offset of the
// first character that is not base64 (in s itself, whatever the decoder
// buffered), or that the text ends early or is badly padded.
func base64Problem(s string) string {
	url := strings.ContainsAny(s, "-_")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '=',
			c == ' ', c == '\t', c == '\n', c == '\r':
		case url && (c == '-' || c == '_'), !url && (c == '+' || c == '/'):
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return fmt.Sprintf("character %q at byte %d is not base64", r, i)
		}
	}
	if i := strings.IndexByte(s, '='); i >= 0 && strings.TrimRight(strings.TrimSpace(s[i:]), "=") != "" {
		return fmt.Sprintf("padding '=' at byte %d is followed by more data", i)
	}
	return fmt.Sprintf("the text ends early or is badly padded (%d base64 characters; whole groups of 4 are expected)", len(strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '=' {
			return -1
		}
		return r
	}, s)))
}

func isDecodeError(err error) bool {
	var ce base64.CorruptInputError
	return errors.As(err, &ce) || errors.Is(err, io.ErrUnexpectedEOF)
}

// isBase64Text reports whether s uses only base64 characters (either
// alphabet), padding and whitespace.
func isBase64Text(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9',
			c == '+', c == '/', c == '-', c == '_', c == '=',
			c == ' ', c == '\t', c == '\n', c == '\r':
		default:
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
