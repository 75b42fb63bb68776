package httpguard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentura/agentura/internal/lib/mcptrace"
	"github.com/go-json-experiment/json/jsontext"
)

// ErrAmbiguous marks a JSON-RPC body that parses, but not the same way in
// every JSON parser on its path: a member name repeated in one object
// (compared ignoring case, as encoding/json matches struct fields), bytes
// that are not UTF-8, or a second value after the message. The guard that
// checks a body and the library that dispatches it would read different
// members of it (the OAuth scope check the first "method", the go-sdk and
// a2a-go the last; a2a-go any case of "Method"), so such a body is refused
// whole rather than guessed at.
var ErrAmbiguous = errors.New("ambiguous JSON-RPC body")

// JSONRPCMethods reads a JSON-RPC message or batch strictly and returns the
// method of each message ("" for a response; nil for a body that is no
// object or array). The method is the member whose name is "method" in any
// case, so that a guard deciding from it sees what any parser after it
// dispatches on. A body that is not JSON is an error; one that the parsers
// behind the guard could read differently wraps ErrAmbiguous and says what
// to change.
func JSONRPCMethods(body []byte) ([]string, error) {
	if !utf8.Valid(body) {
		return nil, fmt.Errorf("%w: the body is not valid UTF-8; JSON-RPC messages are UTF-8 text", ErrAmbiguous)
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true))
	r := methodReader{dec: dec}
	methods, err := r.message()
	if err != nil {
		return methods, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return methods, fmt.Errorf("%w: the body holds more than one JSON value; send one message (or one batch array) per request", ErrAmbiguous)
	}
	return methods, nil
}

// methodReader walks one JSON-RPC body's tokens.
type methodReader struct {
	dec   *jsontext.Decoder
	depth int
}

// message reads the top-level value: a message, a batch, or anything else.
func (r *methodReader) message() ([]string, error) {
	switch r.dec.PeekKind() {
	case '[':
		out := []string{}
		err := r.array(func() error {
			if r.dec.PeekKind() != '{' {
				return r.value()
			}
			m, err := r.object(true)
			if err == nil {
				out = append(out, m)
			}
			return err
		})
		return out, err
	case '{':
		m, err := r.object(true)
		return []string{m}, err
	}
	return nil, r.value()
}

// value reads one value, checking the names of every object in it.
func (r *methodReader) value() error {
	switch r.dec.PeekKind() {
	case '{':
		_, err := r.object(false)
		return err
	case '[':
		return r.array(r.value)
	}
	_, err := r.dec.ReadToken()
	return err
}

// array reads an array, each element with elem.
func (r *methodReader) array(elem func() error) error {
	if r.depth++; r.depth > maxDepth {
		return fmt.Errorf("%w: the body nests deeper than %d levels", ErrAmbiguous, maxDepth)
	}
	defer func() { r.depth-- }()
	if _, err := r.dec.ReadToken(); err != nil {
		return err
	}
	for r.dec.PeekKind() != ']' {
		if err := elem(); err != nil {
			return err
		}
	}
	_, err := r.dec.ReadToken()
	return err
}

// methodKey is "method" as foldName spells it.
var methodKey = foldName("method")

// maxDepth is the deepest nesting read: the go-sdk refuses more than 1000.
const maxDepth = 1000

// object reads an object and refuses a name repeated in it; for a message
// (top) it returns the value of its "method" member.
func (r *methodReader) object(top bool) (string, error) {
	if r.depth++; r.depth > maxDepth {
		return "", fmt.Errorf("%w: the body nests deeper than %d levels", ErrAmbiguous, maxDepth)
	}
	defer func() { r.depth-- }()
	if _, err := r.dec.ReadToken(); err != nil {
		return "", err
	}
	method := ""
	seen := map[string]string{}
	for r.dec.PeekKind() != '}' {
		tok, err := r.dec.ReadToken()
		if err != nil {
			return method, err
		}
		name := tok.String()
		key := foldName(name)
		if first, dup := seen[key]; dup {
			return method, fmt.Errorf("%w: one object names the member %q twice (%q and %q; names are compared ignoring case, as some parsers match them); send each member once",
				ErrAmbiguous, mcptrace.Truncate(name, 40), mcptrace.Truncate(first, 40), mcptrace.Truncate(name, 40))
		}
		seen[key] = name
		if top && key == methodKey && r.dec.PeekKind() == '"' {
			v, err := r.dec.ReadToken()
			if err != nil {
				return method, err
			}
			method = v.String()
			continue
		}
		if err := r.value(); err != nil {
			return method, err
		}
	}
	_, err := r.dec.ReadToken()
	return method, err
}

// foldName maps name to one spelling for all its case variants: each rune
// to the smallest of its simple case-folding orbit (so "METHOD", "Method"
// and "method" meet, as do the Kelvin sign and "k", as encoding/json
// matches them).
func foldName(name string) string {
	return strings.Map(func(c rune) rune {
		least := c
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, name)
}
