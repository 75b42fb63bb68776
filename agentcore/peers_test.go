package agentcore

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentura/agentura/agentcore/internal/urlfetch"
)

func TestBadPeerURLsAreAConfigError(t *testing.T) {
	_, err := ConfigFromLookup(func(k string) (string, bool) {
		if k == "AGENT_PEER_URLS" {
			return "http://localhost:8001", true
		}
		return "", false
	}, "a", ":8002")
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Var != "AGENT_PEER_URLS" || !strings.Contains(err.Error(), "PUBLIC=INTERNAL") {
		t.Errorf("bad AGENT_PEER_URLS: err = %v, want a ConfigError naming the variable and the form", err)
	}
}

// TestPeerURLsReachAPeerByItsInternalName plays the compose network: the
// producer hands out URLs under a public base that does not resolve from the
// consumer (http://ocr.invalid:8001), and is really reached on a loopback
// port. The consumer fetches it only with AGENT_PEER_URLS, and that lets
// nothing else through: not another private address, and not the peer's
// internal address named directly.
func TestPeerURLsReachAPeerByItsInternalName(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewUnstartedServer(nil)
	internal := "http://" + srv.Listener.Addr().String()
	producer := newTestService(t, func(c *Config) { c.PublicURL = "http://ocr.invalid:8001" })
	srv.Config.Handler = producer.Handler()
	srv.Start()
	defer srv.Close()
	call := producer.newCall("t", "alice", "")
	defer call.end()
	res, err := call.FileResponse(ctx, OutputBytes("scan.txt", []byte("recognised text")))
	if err != nil {
		t.Fatal(err)
	}
	public := res.Files[0].DownloadURL
	if !strings.HasPrefix(public, "http://ocr.invalid:8001/files/") {
		t.Fatalf("download URL %s is not under the public base", public)
	}

	without := newTestService(t, nil).newCall("t", "bob", "")
	defer without.end()
	if _, err := without.ResolveFile(ctx, "", public); err == nil {
		t.Fatal("a consumer without AGENT_PEER_URLS fetched the peer's public URL, which should not resolve")
	}

	consumer := newTestService(t, func(c *Config) {
		c.PeerURLs = []PeerURL{{Public: "http://ocr.invalid:8001", Internal: internal}}
	})
	with := consumer.newCall("t", "bob", "")
	defer with.end()
	f, err := with.ResolveFile(ctx, "", public)
	if err != nil {
		t.Fatalf("fetch through the peer mapping: %v", err)
	}
	if f.Name != "scan.txt" || string(readFile(t, f.Path)) != "recognised text" {
		t.Errorf("got %q: %q", f.Name, readFile(t, f.Path))
	}

	// The internal host:port is reached only through the public URL: named
	// directly it meets the SSRF guard, even with a peer connection just used.
	var ssrf *urlfetch.SSRFError
	if _, err := with.ResolveFile(ctx, "", strings.Replace(public, "http://ocr.invalid:8001", internal, 1)); !errors.As(err, &ssrf) {
		t.Errorf("the peer's internal URL named directly: err = %v, want an SSRF refusal", err)
	}
	// No other loopback server is let through either.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("internal")) }))
	defer other.Close()
	if _, err := with.ResolveFile(ctx, "x.txt", other.URL+"/x"); !errors.As(err, &ssrf) {
		t.Errorf("another loopback server: err = %v, want an SSRF refusal", err)
	}
	// A tampered token is refused by the peer, with its answer in the error.
	if _, err := with.ResolveFile(ctx, "", public[:len(public)-2]+"xx"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("tampered token through the peer mapping: err = %v, want the peer's 403", err)
	}
}
