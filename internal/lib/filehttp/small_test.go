package filehttp

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/fileserve/storetest"
)

// A small file served from one read answers as http.ServeContent does:
// the same headers as a HEAD (which ServeContent answers), the same bytes.
func TestSmallFileAnswersAsServeContent(t *testing.T) {
	env := newTestEnv(t, "mux", nil)
	for _, size := range []int{0, 1, 4096, smallFileBytes, smallFileBytes + 1} {
		content := storetest.Pattern(size)
		m := env.put(t, fileserve.Outputs, "alice", "s.bin", content)
		u := env.signedURL(t, m)
		get, body := do(t, "GET", u, nil, nil)
		head, _ := do(t, "HEAD", u, nil, nil)
		if get.StatusCode != 200 || !bytes.Equal(body, content) {
			t.Fatalf("%d bytes: GET %d, %d bytes", size, get.StatusCode, len(body))
		}
		for _, k := range []string{"Content-Length", "Content-Type", "Last-Modified", "Accept-Ranges", "Etag",
			"Cache-Control", "Content-Disposition", "X-Content-Type-Options", "Content-Security-Policy", "Referrer-Policy"} {
			if g, h := get.Header.Get(k), head.Header.Get(k); g != h || g == "" {
				t.Errorf("%d bytes: %s = %q on GET, %q on HEAD", size, k, g, h)
			}
		}
		if len(get.Header) != len(head.Header) {
			t.Errorf("%d bytes: GET has headers %v, HEAD %v", size, get.Header, head.Header)
		}
		r, _ := do(t, "GET", u, http.Header{"Range": {"bytes=0-0"}}, nil)
		if size > 0 && r.StatusCode != http.StatusPartialContent {
			t.Errorf("%d bytes: Range answered %d", size, r.StatusCode)
		}
	}
}
