//go:build unix

package transport

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/filetype"
	"github.com/agentura/agentura/internal/lib/mcptrace"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
)

// Input is a resolved file input: a local file the tool may read until its
// call ends, when the per-call folder holding it is removed.
type Input struct {
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

// Resolver turns file parameters into local files through the transports
// of its registry. There is exactly one per agent.
type Resolver struct {
	*Registry
	maxBytes int64 // AGENT_MAX_UPLOAD_BYTES
}

// NewResolver resolves through reg, no input larger than maxBytes.
func NewResolver(reg *Registry, maxBytes int64) *Resolver {
	return &Resolver{Registry: reg, maxBytes: maxBytes}
}

// Resolve writes the file given by (name, content) into a new folder under
// dir and describes it. owner is the caller; it may open its own signed
// URLs and file URIs. An error is a *ResolveError.
func (r *Resolver) Resolve(ctx context.Context, owner, dir, name, content string) (*Input, error) {
	ctx, span := otel.Tracer(tracerName).Start(ctx, "resolve file input")
	defer span.End()
	content = strings.TrimSpace(content)
	given := cmp.Or(name, NameFromContent(content))
	fail := func(err error) (*Input, error) {
		if span.IsRecording() {
			// The reason the caller reads, without the file's name unless
			// names are allowed (mcptrace.Scrub), and its kind.
			span.SetAttributes(attrErrorType.String(failureKind(err)))
			span.SetStatus(codes.Error, mcptrace.Scrub(err.Error()))
			if kv, ok := mcptrace.FileName(given); ok {
				span.SetAttributes(kv)
			}
		}
		return nil, &ResolveError{Name: given, Err: err}
	}

	if content == "" {
		if name != "" {
			return fail(fmt.Errorf("%w: content is empty; the client must send the file itself (data URI, base64 or URL), not only its name", ErrUnresolvedReference))
		}
		return fail(errors.New(`no file given: send {"name": "report.pdf", "content": "<data URI, URL or base64>"}`))
	}
	t, err := r.transportOf(name, content)
	if err != nil {
		return fail(err)
	}
	span.SetAttributes(attrTransport.String(transportName(t)))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(fmt.Errorf("prepare call folder: %w", err))
	}
	slot, err := os.MkdirTemp(dir, "in-")
	if err != nil {
		return fail(fmt.Errorf("prepare call folder: %w", err))
	}
	var probe *readProbe
	if span.IsRecording() {
		probe = &readProbe{start: time.Now(), digest: sha256.New()}
	}
	in, err := r.read(ctx, t, owner, slot, name, content, probe)
	if err != nil {
		os.RemoveAll(slot) // a refused input leaves nothing behind
		return fail(err)
	}
	if probe != nil {
		span.SetAttributes(attrSize.Int64(in.Size), attrMIME.String(in.MIMEType),
			attrDigest.String(hex.EncodeToString(probe.digest.Sum(nil))))
		if !probe.first.IsZero() {
			span.SetAttributes(attrFirstByte.Float64(probe.first.Sub(probe.start).Seconds()))
		}
		if kv, ok := mcptrace.FileName(in.Name); ok {
			span.SetAttributes(kv)
		}
	}
	return in, nil
}

// The span of a file input records how it travelled, its size, type and
// SHA-256, and how long its first byte took (from the start of the
// resolution: the transport's choice, the connection and the answer of a
// fetch, a store's open); never its content, URL or token, and its name
// only when file names are allowed in spans (mcptrace.FileName). A
// failure records the reason its caller read (mcptrace.Scrub) and its
// kind (error.type).
const tracerName = "github.com/agentura/agentura/agentcore"

var (
	attrTransport = attribute.Key("agentura.file.transport")
	attrSize      = attribute.Key("agentura.file.size")
	attrMIME      = attribute.Key("agentura.file.mime_type")
	attrDigest    = attribute.Key("agentura.file.sha256")
	attrFirstByte = attribute.Key("agentura.file.time_to_first_byte")
	attrErrorType = attribute.Key("error.type")
)

// readProbe sees an input's bytes go by for its span: their SHA-256 and
// when the first came.
type readProbe struct {
	start, first time.Time
	digest       hash.Hash
}

// reader is src, seen by p; src itself when p is nil.
func (p *readProbe) reader(src io.Reader) io.Reader {
	if p == nil {
		return src
	}
	return probedReader{r: src, p: p}
}

type probedReader struct {
	r io.Reader
	p *readProbe
}

func (pr probedReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	if n > 0 {
		if pr.p.first.IsZero() {
			pr.p.first = time.Now()
		}
		pr.p.digest.Write(b[:n])
	}
	return n, err
}

// transportName names t in a span: its first scheme ("data", "http",
// "mcp-file"), else its kind ("path", "base64").
func transportName(t Transport) string {
	if s := t.Schemes(); len(s) > 0 {
		return s[0]
	}
	name := fmt.Sprintf("%T", t)
	return strings.ToLower(name[strings.LastIndexAny(name, ".*")+1:])
}

// failureKind is the kind of what went wrong with an input, in words that
// name no file and quote no content: a span's error.type.
func failureKind(err error) string {
	for _, kind := range []error{ErrUnresolvedReference, ErrInputTooLarge, ErrPathInputsDisabled, ErrOutsideRoots} {
		if errors.Is(err, kind) {
			return kind.Error()
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "cancelled"
	}
	return "the input could not be read"
}

// transportOf picks the transport of content: the one of its scheme, else
// the first scheme-less one that takes it, once content is neither an
// unknown scheme nor a bare file name.
func (r *Resolver) transportOf(name, content string) (Transport, error) {
	if t := r.schemed(content); t != nil {
		return t, nil
	}
	if i := strings.Index(content, "://"); i > 0 && i < 10 && !strings.ContainsAny(content[:i], "/+=") {
		return nil, fmt.Errorf("unsupported URL scheme %q: send %s", content[:i], r.forms())
	}
	if content == name || isBareReference(content) {
		return nil, fmt.Errorf("%w: the content %q is a file name, not the file. The client must replace file names with the file's content (a data URI, base64, or a signed URL from /uploads); hosts using the agentura client middleware do this for files in their registry. (A tiny file in plain base64 reads like a name: send it as a data URI.)",
			ErrUnresolvedReference, calls.Truncate(content, 80))
	}
	for _, t := range r.list {
		if len(t.Schemes()) == 0 && t.Resolves(content) {
			return t, nil
		}
	}
	return nil, fmt.Errorf("the content is none of the forms this agent takes: %s", r.forms())
}

// forms names what a file's content may be.
func (r *Resolver) forms() string {
	var names []string
	for _, t := range r.list {
		if d := t.Describe(); d.Content != "" {
			names = append(names, "a "+d.Content)
		}
	}
	return joinOr(names)
}

// read opens content through t and writes it into slot, its bytes seen by
// probe (nil: none).
func (r *Resolver) read(ctx context.Context, t Transport, owner, slot, name, content string, probe *readProbe) (*Input, error) {
	src, err := t.Open(ctx, owner, content)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if src.Size > r.maxBytes {
		return nil, r.tooLarge(fmt.Sprintf("%s is %d bytes", src.Where, src.Size))
	}
	in, err := r.write(slot, name, src.Name, src.MIMEType, probe.reader(src))
	if err != nil && !errors.Is(err, ErrInputTooLarge) && src.ReadError != nil {
		err = src.ReadError(err)
	}
	return in, err
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

// tooLarge is the error of an input over the cap; detail may say by how much.
func (r *Resolver) tooLarge(detail string) error {
	if detail != "" {
		detail = " (" + detail + ")"
	}
	return fmt.Errorf("%w of %d bytes (AGENT_MAX_UPLOAD_BYTES)%s; send a smaller file, or ask the operator to raise the limit", ErrInputTooLarge, r.maxBytes, detail)
}

// fileIn creates the file for the input in slot, named after name or fallback.
func fileIn(slot, name, fallback string) (*os.File, string, error) {
	clean := cmp.Or(SanitizeName(name), SanitizeName(fallback), "file")
	f, err := os.OpenFile(filepath.Join(slot, clean), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	return f, clean, err
}

// write streams src into a new file of slot, enforcing the size cap while
// streaming, and describes the result.
func (r *Resolver) write(slot, name, fallback, mimeHint string, src io.Reader) (*Input, error) {
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
	return &Input{Path: f.Name(), Name: clean, MIMEType: mimeType, Size: n}, nil
}
