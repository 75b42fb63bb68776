package filehttp

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/fileserve"
)

// With AccelRedirect, a download whose token checks out is answered with
// its headers and X-Accel-Redirect naming its content under the store's
// folder; a bad token is refused as ever, with no redirect; a conditional
// request is the agent's to answer.
func TestAccelRedirect(t *testing.T) {
	env := newTestEnv(t, "gin", func(c *Config) { c.AccelRedirect = "/internal-files/" })
	m := env.put(t, fileserve.Outputs, "o", "report.html", []byte("<html>hi</html>"))
	u := env.signedURL(t, m)
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		resp, body := do(t, method, u, http.Header{"Range": {"bytes=0-3"}}, nil)
		xa := resp.Header.Get("X-Accel-Redirect")
		if resp.StatusCode != http.StatusOK || len(body) != 0 || !strings.HasPrefix(xa, "/internal-files/") {
			t.Fatalf("%s: %d, %d bytes, X-Accel-Redirect %q; want 200, no body, a redirect", method, resp.StatusCode, len(body), xa)
		}
		content, err := os.ReadFile(filepath.Join(env.st.Root(), filepath.FromSlash(strings.TrimPrefix(xa, "/internal-files/"))))
		if err != nil || string(content) != "<html>hi</html>" {
			t.Errorf("X-Accel-Redirect %q does not name the file's content under the store: %v", xa, err)
		}
		for k, want := range map[string]string{"Content-Disposition": "attachment", "X-Content-Type-Options": "nosniff",
			"Content-Security-Policy": "sandbox", "Etag": m.ETag(), "Content-Type": "text/html", "Cache-Control": "private"} {
			if !strings.Contains(resp.Header.Get(k), want) {
				t.Errorf("%s: %s %q, want it to hold %q", method, k, resp.Header.Get(k), want)
			}
		}
	}
	base, token, _ := strings.Cut(u, "token=")
	resp, body := do(t, http.MethodGet, base+"token="+flip(token, 2), nil, nil)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Accel-Redirect") != "" {
		t.Errorf("tampered token: %d %q, X-Accel-Redirect %q; want 403 and no redirect", resp.StatusCode, body, resp.Header.Get("X-Accel-Redirect"))
	}
	resp, _ = do(t, http.MethodGet, u, http.Header{"If-None-Match": {m.ETag()}}, nil)
	if resp.StatusCode != http.StatusNotModified || resp.Header.Get("X-Accel-Redirect") != "" {
		t.Errorf("If-None-Match of the ETag: %d, X-Accel-Redirect %q; want 304 from the agent", resp.StatusCode, resp.Header.Get("X-Accel-Redirect"))
	}
	if _, err := NewServer(Config{Store: env.st, Signer: env.signer, PublicURL: "http://x", AccelRedirect: "internal"}); err == nil {
		t.Error("a prefix without slashes was accepted")
	}
}
