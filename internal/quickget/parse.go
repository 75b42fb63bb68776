package quickget

import (
	"bytes"
	"net/http"
	"net/url"

	"golang.org/x/net/http/httpguts"
)

// head is a request head the quick path serves: GET or HEAD of an
// origin-form target under the prefix, HTTP/1.1, one valid Host, no body,
// every line well formed.
type head struct {
	method string
	target string
	url    *url.URL
	host   string
	header http.Header
	close  bool // the client asked to close after this response
}

// headEnd returns the length of the request head at the start of b, up to
// and including the empty line that ends it, or 0 when b holds no whole
// head yet. Lines may end in LF alone here; parseHead refuses those.
func headEnd(b []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return 0
		}
		line := b[i : i+j]
		i += j + 1
		if len(line) == 0 || (len(line) == 1 && line[0] == '\r') {
			return i
		}
	}
}

// parseHead parses the whole request head b (as headEnd delimits it) and
// reports whether the quick path may serve it: anything it does not fully
// understand is left to net/http, which answers it or refuses it with its
// own rules. prefix is the path the quick path serves.
func parseHead(b []byte, prefix string) (head, bool) {
	var h head
	line, rest, ok := cutLine(b)
	if !ok {
		return h, false
	}
	method, target, version, ok := requestLine(line)
	if !ok || string(version) != "HTTP/1.1" || len(target) <= len(prefix) || string(target[:len(prefix)]) != prefix {
		return h, false
	}
	switch string(method) {
	case http.MethodGet:
		h.method = http.MethodGet
	case http.MethodHead:
		h.method = http.MethodHead
	default:
		return h, false
	}
	h.target = string(target)
	u, err := url.ParseRequestURI(h.target)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" {
		return h, false
	}
	h.url = u
	h.header = make(http.Header, 8)
	hosts := 0
	for {
		line, rest, ok = cutLine(rest)
		if !ok {
			return h, false
		}
		if len(line) == 0 {
			break // the empty line: the head ends
		}
		name, value, ok := headerLine(line)
		if !ok {
			return h, false
		}
		key := canonicalKey(name)
		switch key {
		case "Host":
			hosts++
			h.host = string(value)
			if hosts > 1 || !httpguts.ValidHostHeader(h.host) {
				return h, false
			}
			continue // net/http keeps Host in Request.Host, not in Header
		case "Content-Length", "Transfer-Encoding", "Expect", "Upgrade", "Trailer":
			return h, false // a body, or a protocol change: net/http's business
		case "Connection":
			if httpguts.HeaderValuesContainsToken([]string{string(value)}, "close") {
				h.close = true
			}
			if httpguts.HeaderValuesContainsToken([]string{string(value)}, "upgrade") {
				return h, false
			}
		}
		h.header[key] = append(h.header[key], string(value))
	}
	if hosts != 1 || len(rest) != 0 {
		return h, false
	}
	return h, true
}

// cutLine cuts the CRLF-terminated line at the start of b. A line ending in
// LF alone, or holding a CR or LF elsewhere, is not cut (ok false).
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 1 || b[i-1] != '\r' {
		return nil, nil, false
	}
	line = b[:i-1]
	if bytes.IndexByte(line, '\r') >= 0 {
		return nil, nil, false
	}
	return line, b[i+1:], true
}

// requestLine splits "METHOD SP TARGET SP VERSION", each part non-empty and
// separated by exactly one space.
func requestLine(line []byte) (method, target, version []byte, ok bool) {
	method, rest, ok1 := bytes.Cut(line, []byte{' '})
	target, version, ok2 := bytes.Cut(rest, []byte{' '})
	if !ok1 || !ok2 || len(method) == 0 || len(target) == 0 || len(version) == 0 || bytes.IndexByte(version, ' ') >= 0 {
		return nil, nil, nil, false
	}
	for _, c := range target {
		if c <= ' ' || c >= 0x7f {
			return nil, nil, nil, false
		}
	}
	return method, target, version, true
}

// headerLine splits "name: value" with the value's surrounding blanks
// trimmed. A folded line (starting with a blank), a name that is not a
// token, or a value with control characters is refused.
func headerLine(line []byte) (name, value []byte, ok bool) {
	name, value, ok = bytes.Cut(line, []byte{':'})
	if !ok || len(name) == 0 || !validName(name) {
		return nil, nil, false
	}
	value = bytes.Trim(value, " \t")
	for _, c := range value {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return nil, nil, false
		}
	}
	return name, value, true
}

// validName reports whether name is an HTTP token.
func validName(name []byte) bool {
	for _, c := range name {
		if !httpguts.IsTokenRune(rune(c)) {
			return false
		}
	}
	return true
}

// commonKeys are the canonical forms of the headers clients send most,
// looked up without allocating.
var commonKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"Host", "User-Agent", "Accept", "Accept-Encoding", "Accept-Language", "Connection",
		"Range", "If-Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "Cache-Control",
		"Pragma", "Referer", "Origin", "Authorization", "Cookie", "X-Request-Id", "X-Forwarded-For", "X-Forwarded-Proto",
		"X-Forwarded-Host", "X-Real-Ip", "Forwarded", "Content-Length", "Transfer-Encoding", "Expect", "Upgrade", "Trailer",
		"Te", "Via", "Sec-Fetch-Mode", "Sec-Fetch-Site", "Sec-Fetch-Dest", "Upgrade-Insecure-Requests", "Dnt"} {
		m[k] = k
	}
	return m
}()

// canonicalKey is http.CanonicalHeaderKey of name, without an allocation
// for the common headers in their usual spelling.
func canonicalKey(name []byte) string {
	if k, ok := commonKeys[string(name)]; ok {
		return k
	}
	return http.CanonicalHeaderKey(string(name))
}
