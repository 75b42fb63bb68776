package quickget

import (
	"bufio"
	"bytes"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestParseHead(t *testing.T) {
	const ok = "GET /files/01/a.bin?token=x HTTP/1.1\r\nHost: a:1\r\nUser-Agent: t\r\nrange: bytes=0-1\r\nX-Odd-NAME:  v1 \r\nX-Odd-Name: v2\r\n\r\n"
	h, good := parseHead([]byte(ok), "/files/")
	if !good {
		t.Fatal("a plain GET was refused")
	}
	want := http.Header{"User-Agent": {"t"}, "Range": {"bytes=0-1"}, "X-Odd-Name": {"v1", "v2"}}
	if h.method != "GET" || h.host != "a:1" || h.url.Path != "/files/01/a.bin" || h.url.RawQuery != "token=x" ||
		!reflect.DeepEqual(h.header, want) || h.close {
		t.Errorf("parsed %+v (url %+v)", h, h.url)
	}
	if h, good := parseHead([]byte("HEAD /files/x HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Close\r\n\r\n"), "/files/"); !good || h.method != "HEAD" || !h.close {
		t.Errorf("HEAD with Connection: close: %v %+v", good, h)
	}

	// Everything else is net/http's.
	for name, head := range map[string]string{
		"POST":               "POST /files/x HTTP/1.1\r\nHost: a\r\n\r\n",
		"lower-case get":     "get /files/x HTTP/1.1\r\nHost: a\r\n\r\n",
		"other path":         "GET /mcp HTTP/1.1\r\nHost: a\r\n\r\n",
		"the prefix alone":   "GET /files/ HTTP/1.1\r\nHost: a\r\n\r\n",
		"HTTP/1.0":           "GET /files/x HTTP/1.0\r\nHost: a\r\n\r\n",
		"HTTP/2 preface":     "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"absolute form":      "GET http://a/files/x HTTP/1.1\r\nHost: a\r\n\r\n",
		"no Host":            "GET /files/x HTTP/1.1\r\n\r\n",
		"two Hosts":          "GET /files/x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"bad Host":           "GET /files/x HTTP/1.1\r\nHost: a b\r\n\r\n",
		"body length":        "GET /files/x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
		"zero length":        "GET /files/x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
		"chunked":            "GET /files/x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"expect":             "GET /files/x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n",
		"upgrade":            "GET /files/x HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
		"folded header":      "GET /files/x HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n",
		"space before colon": "GET /files/x HTTP/1.1\r\nHost: a\r\nX-A : 1\r\n\r\n",
		"no colon":           "GET /files/x HTTP/1.1\r\nHost: a\r\nX-A\r\n\r\n",
		"control in value":   "GET /files/x HTTP/1.1\r\nHost: a\r\nX-A: 1\x002\r\n\r\n",
		"bare LF":            "GET /files/x HTTP/1.1\nHost: a\n\n",
		"bare CR":            "GET /files/x HTTP/1.1\r\nHost: a\rX: b\r\n\r\n",
		"two spaces":         "GET  /files/x HTTP/1.1\r\nHost: a\r\n\r\n",
		"space in target":    "GET /files/x y HTTP/1.1\r\nHost: a\r\n\r\n",
		"non-ASCII target":   "GET /files/\xff HTTP/1.1\r\nHost: a\r\n\r\n",
		"bad escape":         "GET /files/%zz HTTP/1.1\r\nHost: a\r\n\r\n",
		"empty line first":   "\r\nGET /files/x HTTP/1.1\r\nHost: a\r\n\r\n",
		"unfinished":         "GET /files/x HTTP/1.1\r\nHost: a\r\n",
	} {
		if _, good := parseHead([]byte(head), "/files/"); good {
			t.Errorf("%s: taken by the quick path, want net/http's", name)
		}
	}
}

func TestHeadEnd(t *testing.T) {
	for in, want := range map[string]int{
		"GET / HTTP/1.1\r\nHost: a\r\n\r\nnext": 27,
		"GET / HTTP/1.1\nHost: a\n\nnext":       24,
		"GET / HTTP/1.1\r\nHost: a\r\n":         0,
		"\r\n":                                  2,
		"":                                      0,
	} {
		if got := headEnd([]byte(in)); got != want {
			t.Errorf("headEnd(%q) = %d, want %d", in, got, want)
		}
	}
}

// FuzzParseHead checks the quick path against net/http's own parser: what
// it accepts, http.ReadRequest accepts too, with the same method, target,
// host and headers.
func FuzzParseHead(f *testing.F) {
	for _, s := range []string{
		"GET /files/a?token=b HTTP/1.1\r\nHost: h\r\n\r\n",
		"HEAD /files/%41 HTTP/1.1\r\nHost: h:80\r\nRange: bytes=1-\r\nIf-None-Match: \"x\"\r\n\r\n",
		"GET /files/a HTTP/1.1\r\nHost: h\r\nx-y:\t z \r\nConnection: close\r\n\r\n",
		"GET /files/a HTTP/1.1\r\nHost: [::1]:8\r\nA: 1\r\na: 2\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n := headEnd(b)
		if n == 0 {
			return
		}
		h, ok := parseHead(b[:n], "/files/")
		if !ok {
			return
		}
		r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b[:n])))
		if err != nil {
			t.Fatalf("quick path took %q, net/http refuses it: %v", b[:n], err)
		}
		if r.Method != h.method || r.RequestURI != h.target || r.Host != h.host || r.URL.String() != h.url.String() ||
			r.Close != h.close || r.ContentLength != 0 || len(r.TransferEncoding) != 0 {
			t.Fatalf("%q: quick path %s %s host %q close %v; net/http %s %s host %q close %v length %d",
				b[:n], h.method, h.url, h.host, h.close, r.Method, r.URL, r.Host, r.Close, r.ContentLength)
		}
		if !strings.HasPrefix(r.URL.Path, "/files/") {
			t.Fatalf("%q: path %q is not under the prefix", b[:n], r.URL.Path)
		}
		// net/http keeps Host apart, as the quick path does.
		delete(r.Header, "Host")
		if !reflect.DeepEqual(map[string][]string(r.Header), map[string][]string(h.header)) {
			t.Fatalf("%q: headers: quick path %v, net/http %v", b[:n], h.header, r.Header)
		}
	})
}
