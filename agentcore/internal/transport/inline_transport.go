package transport

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/transfer/mcpfile"
)

// Inline is the transport of files sent in the request itself: a data URI
// (RFC 2397, "data:<mime>[;name=<file>];base64,<data>"), or bare base64,
// the last form the resolver tries.
type Inline struct {
	// Bare takes scheme-less base64 instead of data URIs.
	Bare bool
}

// Schemes are "data" for data URIs, none for bare base64.
func (t Inline) Schemes() []string {
	if t.Bare {
		return nil
	}
	return []string{"data"}
}

// Describe names the form; data URIs stand for the draft's inline mode.
func (t Inline) Describe() Description {
	if t.Bare {
		return Description{Content: "base64"}
	}
	return Description{Content: "data URI", Mode: mcpfile.ModeInline}
}

// Resolves takes whatever is left, as base64.
func (t Inline) Resolves(string) bool { return t.Bare }

// Offer hands nothing out: small outputs are embedded by the bindings.
func (Inline) Offer(fileserve.Meta, *Offer) error { return nil }

// Open decodes the content as it is read.
func (t Inline) Open(_ context.Context, _, content string) (*Source, error) {
	if t.Bare {
		if ambiguousPath(content) {
			return nil, fmt.Errorf("the content %q reads both as a path and as base64, so it is refused: name a path without \"//\" (and only under AGENT_INPUT_ROOTS), or send the bytes as a data URI (data:;base64,<data>)", calls.Truncate(content, 80))
		}
		return &Source{ReadCloser: io.NopCloser(base64Reader(content)), Size: -1, Where: "the content", ReadError: func(err error) error {
			if isDecodeError(err) {
				return fmt.Errorf("content is not a data URI, an http(s) URL, a path or valid base64 (%s); send the file as data:<mime>;base64,<data> or plain base64", base64Problem(content))
			}
			return err
		}}, nil
	}
	header, payload, ok := strings.Cut(content[len("data:"):], ",")
	if !ok {
		return nil, errors.New(`malformed data URI: no "," before the data; the form is data:<mime>[;name=<file>];base64,<data>`)
	}
	mimeHint := strings.TrimSpace(strings.Split(header, ";")[0])
	name := cmp.Or(dataURIName(header), nameForType("file", mimeHint)) // the draft's data: URIs carry no name
	src := &Source{Name: name, MIMEType: mimeHint, Size: -1, Where: "the data URI"}
	if strings.HasSuffix(strings.ToLower(header), ";base64") {
		src.ReadCloser = io.NopCloser(base64Reader(payload))
		src.ReadError = func(err error) error {
			if isDecodeError(err) {
				return fmt.Errorf("data URI payload is not valid base64: %s", base64Problem(payload))
			}
			return err
		}
		return src, nil
	}
	decoded, err := url.PathUnescape(payload)
	if err != nil {
		return nil, fmt.Errorf("data URI payload is not valid percent-encoding: %v", err)
	}
	src.ReadCloser = io.NopCloser(strings.NewReader(decoded))
	return src, nil
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
		if k := strings.IndexAny(chunk, " \t"); k >= 0 {
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
		if base64Alphabet[s[i]] == 1 {
			return false
		}
	}
	return true
}
