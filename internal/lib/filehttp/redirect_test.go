package filehttp

import (
	"net/http"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/fileserve/s3store"
	"github.com/agentura/agentura/signing"
)

// TestRedirectNearExpiry: a token with less than the one second an S3
// presigned URL can last still downloads: the file is streamed by the server
// instead of failing with 500. Presigning does not contact the S3 server, so
// the S3 store's endpoint need not exist.
func TestRedirectNearExpiry(t *testing.T) {
	s3, err := s3store.New(s3store.Config{Bucket: "files", Endpoint: "127.0.0.1:9", Insecure: true, PathStyle: true, AccessKey: "k", SecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	env := newTestEnv(t, "mux", func(c *Config) { c.Redirect = s3 })
	m := env.put(t, fileserve.Outputs, "alice", "near.txt", []byte("last moment"))
	sign := func(ttl time.Duration) (string, time.Time) {
		// Tokens carry whole seconds: expire on a second boundary.
		exp := time.Now().Add(ttl).Truncate(time.Second)
		tok, err := env.signer.Sign(signing.Claims{Owner: "alice", FileID: m.ID, Area: string(fileserve.Outputs), ExpiresAt: exp})
		if err != nil {
			t.Fatal(err)
		}
		return env.ts.URL + "/files/" + m.ID + "/near.txt?token=" + tok, exp
	}
	u, _ := sign(time.Minute)
	resp, body := do(t, http.MethodGet, u, nil, nil)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("GET with a minute left: %s %s, want 302", resp.Status, body)
	}
	u, exp := sign(2 * time.Second)
	time.Sleep(time.Until(exp.Add(-400 * time.Millisecond)))
	resp, body = do(t, http.MethodGet, u, nil, nil)
	if resp.StatusCode != http.StatusOK || string(body) != "last moment" {
		t.Fatalf("GET with under a second left: %s %q, want 200 and the file", resp.Status, body)
	}
}
