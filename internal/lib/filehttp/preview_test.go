package filehttp

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/pdfpreview"
	"github.com/agentura/agentura/internal/lib/pdfpreview/pdftest"
	"github.com/agentura/agentura/internal/testkit/requiretool"
	"github.com/agentura/agentura/signing"
)

// TestPreview asks download URLs for the picture of a PDF's first page
// (&preview=1): the access rule is the download's own, a file that is not
// a PDF or a PDF that cannot be rendered answers a clear 4xx, at once.
func TestPreview(t *testing.T) {
	cmd := requiretool.Command(t, "pdftoppm", "apt-get install poppler-utils")
	for _, mount := range mounts {
		t.Run(mount, func(t *testing.T) {
			env := newTestEnv(t, mount, func(c *Config) {
				c.Previews = pdfpreview.New(pdfpreview.Config{Command: cmd, Timeout: 3 * time.Second, MaxInputBytes: 1 << 20})
			})
			pdf := env.put(t, fileserve.Outputs, "alice", "report.pdf", pdftest.Box(300, 200))
			good := env.signedURL(t, pdf) + "&preview=1"
			resp, body := do(t, "GET", good, nil, nil)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
				t.Fatalf("preview: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			img, err := png.Decode(bytes.NewReader(body))
			if err != nil || img.Bounds().Dx() != pdfpreview.DefaultSide {
				t.Fatalf("the preview does not decode as a PNG %d pixels wide: %v", pdfpreview.DefaultSide, err)
			}
			for k, want := range map[string]string{"Access-Control-Allow-Origin": "*", "X-Content-Type-Options": "nosniff", "Content-Security-Policy": downloadCSP} {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if cc := resp.Header.Get("Cache-Control"); !strings.HasPrefix(cc, "private, max-age=") {
				t.Errorf("Cache-Control = %q, want private for the token's life", cc)
			}
			if resp, _ := do(t, "HEAD", good, nil, nil); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
				t.Errorf("HEAD of the preview: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			}

			base, token, _ := strings.Cut(env.signedURL(t, pdf), "?token=")
			past := newTestSigner(t, env.ts.URL, testSecret, signing.WithClock(func() time.Time { return time.Now().Add(-2 * time.Hour) }))
			expired, err := past.Sign(signing.Claims{Owner: "alice", FileID: pdf.ID, Area: "outputs", ExpiresAt: time.Now().Add(-time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			other := env.put(t, fileserve.Outputs, "alice", "other.pdf", pdftest.Box(100, 100))
			_, otherToken, _ := strings.Cut(env.signedURL(t, other), "?token=")
			text := env.put(t, fileserve.Outputs, "alice", "notes.txt", []byte("plain text\n"))
			broken := env.put(t, fileserve.Outputs, "alice", "broken.pdf", append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("garbage "), 4000)...))
			big := env.put(t, fileserve.Outputs, "alice", "big.pdf", append(pdftest.Box(100, 100), make([]byte, 2<<20)...))
			for _, tc := range []struct {
				name, url string
				status    int
				reason    string
			}{
				{"no token", base + "?preview=1", 403, "token is required"},
				{"tampered", base + "?token=" + flip(token, 2) + "&preview=1", 403, "signature is invalid"},
				{"expired", base + "?token=" + expired + "&preview=1", 403, "expired"},
				{"another file's token", base + "?token=" + otherToken + "&preview=1", 403, "another file"},
				{"not a PDF", env.signedURL(t, text) + "&preview=1", 415, "PDFs only"},
				{"broken PDF", env.signedURL(t, broken) + "&preview=1", 422, "could not be rendered"},
				{"too large", env.signedURL(t, big) + "&preview=1", 413, "too large"},
			} {
				start := time.Now()
				resp, body := do(t, "GET", tc.url, nil, nil)
				if resp.StatusCode != tc.status || !strings.Contains(jsonError(t, resp, body), tc.reason) {
					t.Errorf("%s: %d %s, want %d saying %q", tc.name, resp.StatusCode, body, tc.status, tc.reason)
				}
				if took := time.Since(start); took > 5*time.Second {
					t.Errorf("%s took %v", tc.name, took)
				}
			}
		})
	}
	t.Run("no renderer", func(t *testing.T) {
		env := newTestEnv(t, "mux", nil)
		pdf := env.put(t, fileserve.Outputs, "alice", "report.pdf", pdftest.Box(300, 200))
		resp, body := do(t, "GET", env.signedURL(t, pdf)+"&preview=1", nil, nil)
		if resp.StatusCode != 501 {
			t.Errorf("a server without previews: %d %s, want 501", resp.StatusCode, body)
		}
		if resp, _ := do(t, "GET", env.signedURL(t, pdf), nil, nil); resp.StatusCode != 200 {
			t.Errorf("its download: %d, want 200", resp.StatusCode)
		}
	})
}
