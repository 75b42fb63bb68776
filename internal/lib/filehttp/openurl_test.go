package filehttp

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/signing"
)

func TestOpenURL(t *testing.T) {
	env := newTestEnv(t, "mux", nil)
	m := env.put(t, fileserve.Outputs, "alice", "report.pdf", []byte("%PDF-1.7 alice"))
	u := env.signedURL(t, m)
	sign := func(s *signing.Signer, c signing.Claims) string {
		tok, err := s.Sign(c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	base, token, _ := strings.Cut(u, "?token=")
	inHour := time.Now().Add(time.Hour)
	claims := signing.Claims{Owner: "alice", FileID: m.ID, Area: "outputs", ExpiresAt: inHour}

	// Our own URL, under another host name of the same server.
	alias := strings.Replace(u, "127.0.0.1", "localhost", 1)
	if alias == u {
		t.Fatalf("test server URL %s has no 127.0.0.1 to replace", u)
	}
	for _, url := range []string{u, alias, strings.Replace(u, "http://", "https://", 1)} {
		obj, got, own, err := env.srv.OpenURL(bg, url, "alice")
		if err != nil || !own {
			t.Fatalf("OpenURL(%s): own=%v, %v", url, own, err)
		}
		b, _ := io.ReadAll(obj)
		obj.Close()
		if string(b) != "%PDF-1.7 alice" || got.ID != m.ID || got.Name != "report.pdf" {
			t.Errorf("OpenURL: %q, %+v", b, got)
		}
	}

	past := newTestSigner(t, env.ts.URL, testSecret, signing.WithClock(func() time.Time { return time.Now().Add(-2 * time.Hour) }))
	expiredClaims := claims
	expiredClaims.ExpiresAt = time.Now().Add(-time.Hour)
	swept := env.put(t, fileserve.Outputs, "alice", "swept.txt", []byte("x"))
	sweptURL := env.signedURL(t, swept)
	env.st.Delete(bg, fileserve.Outputs, "alice", swept.ID)
	otherAudience := newTestSigner(t, "http://composer-agent:8002", testSecret)

	for _, tc := range []struct {
		name, url, owner string
		own              bool
		errText          string
	}{
		{"another caller", u, "bob", true, "belongs to another caller"},
		{"tampered payload", base + "?token=" + flip(token, 1), "alice", true, "not valid"},
		{"tampered signature", base + "?token=" + flip(token, 2), "alice", true, "signature"},
		{"expired", base + "?token=" + sign(past, expiredClaims), "alice", true, "expired"},
		{"token of another file", strings.Replace(u, m.ID, swept.ID, 1), "alice", true, "another file"},
		{"swept", sweptURL, "alice", true, "gone"},
		{"foreign URL", "https://example.com/files/report.pdf", "alice", false, ""},
		{"foreign URL of the same shape", "https://example.com/files/" + m.ID + "/report.pdf?token=abc.def.ghi", "alice", false, ""},
		{"foreign URL without token", "https://example.com/files/" + m.ID + "/report.pdf", "alice", false, ""},
		{"not http", "file:///etc/passwd", "alice", false, ""},
		{"not a URL", "%%%", "alice", false, ""},
		{"another key", base + "?token=" + sign(newTestSigner(t, env.ts.URL, []byte("a different secret of 32 bytes..")), claims), "alice", false, ""},
		{"another deployment sharing our key", base + "?token=" + sign(otherAudience, claims), "alice", false, ""},
		{"alg none", base + "?token=" + algNone(t, env.ts.URL, m), "alice", false, ""},
		{"other path", strings.Replace(u, "/files/", "/downloads/", 1), "alice", false, ""},
	} {
		obj, _, own, err := env.srv.OpenURL(bg, tc.url, tc.owner)
		if obj != nil {
			obj.Close()
			t.Errorf("%s: opened a file", tc.name)
		}
		if own != tc.own {
			t.Errorf("%s: own = %v, want %v (err %v)", tc.name, own, tc.own, err)
		}
		switch {
		case tc.errText == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.errText != "" && (err == nil || !strings.Contains(err.Error(), tc.errText)):
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.errText)
		}
		if tc.name == "swept" && !errors.Is(err, fileserve.ErrNotFound) {
			t.Errorf("swept: %v does not wrap ErrNotFound", err)
		}
	}
}

func TestOpenURLWithPathPrefix(t *testing.T) {
	st := newTestStore(t)
	signer := newTestSigner(t, "https://agents.example/ocr", testSecret)
	srv, err := NewServer(Config{Store: st, Signer: signer, PublicURL: "https://agents.example/ocr/"})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := st.Put(bg, fileserve.NewFile{Area: fileserve.Staging, Owner: "o", Name: "in.png"}, strings.NewReader("png"))
	u, err := srv.URL(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(u, "https://agents.example/ocr/files/"+m.ID+"/in.png?token=") {
		t.Errorf("URL = %s", u)
	}
	obj, _, own, err := srv.OpenURL(bg, u, "o")
	if err != nil || !own {
		t.Fatalf("OpenURL: own=%v %v", own, err)
	}
	obj.Close()
	// Served behind a proxy that keeps the prefix.
	req, _ := http.NewRequest("GET", u, nil)
	rec := newRecorder()
	srv.ServeFile(rec, req)
	if rec.code != 200 || rec.body.String() != "png" {
		t.Errorf("ServeFile: %d %q", rec.code, rec.body.String())
	}
}

func TestNewServerConfig(t *testing.T) {
	st := newTestStore(t)
	signer := newTestSigner(t, "http://localhost:8001", testSecret)
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no store", Config{Signer: signer, PublicURL: "http://localhost:8001"}, "Store"},
		{"no signer", Config{Store: st, PublicURL: "http://localhost:8001"}, "Signer"},
		{"no public URL", Config{Store: st, Signer: signer}, "AGENT_PUBLIC_URL"},
		{"relative public URL", Config{Store: st, Signer: signer, PublicURL: "localhost:8001"}, "AGENT_PUBLIC_URL"},
		{"public URL with query", Config{Store: st, Signer: signer, PublicURL: "http://h/?x=1"}, "AGENT_PUBLIC_URL"},
		{"negative TTL", Config{Store: st, Signer: signer, PublicURL: "http://h", URLTTL: -time.Second}, "AGENT_URL_TTL"},
		{"negative limit", Config{Store: st, Signer: signer, PublicURL: "http://h", MaxUploadBytes: -1}, "AGENT_MAX_UPLOAD_BYTES"},
	} {
		if _, err := NewServer(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error mentioning %s", tc.name, err, tc.want)
		}
	}
	srv, err := NewServer(Config{Store: st, Signer: signer, PublicURL: "http://localhost:8001/"})
	if err != nil {
		t.Fatal(err)
	}
	if srv.ttl != DefaultURLTTL || srv.maxUpload != DefaultMaxUploadBytes || srv.publicURL != "http://localhost:8001" {
		t.Errorf("defaults: %v %v %v", srv.ttl, srv.maxUpload, srv.publicURL)
	}
	if _, err := srv.URL(fileserve.Meta{ID: "x", Area: fileserve.Outputs, Owner: "o"}); err == nil {
		t.Error("URL signed metadata with a bad id")
	}
}

// URL is signing's FileURL on the server's public URL and the file's claims,
// so a program beside the agents that shares the store and the key mints the
// very URLs the server does; a name that did not come cleaned from a store is
// cleaned first.
func TestURLIsSigningFileURL(t *testing.T) {
	st := newTestStore(t)
	signer := newTestSigner(t, "http://localhost:8001", testSecret)
	srv, err := NewServer(Config{Store: st, Signer: signer, PublicURL: "http://localhost:8001/"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	srv.now = func() time.Time { return now }
	m, err := st.Put(bg, fileserve.NewFile{Area: fileserve.Outputs, Owner: "o", Name: "images/a b.png"}, strings.NewReader("png"))
	if err != nil {
		t.Fatal(err)
	}
	c := signing.Claims{Owner: m.Owner, FileID: m.ID, Area: string(m.Area), ExpiresAt: now.Add(DefaultURLTTL)}
	want, err := signer.FileURL("http://localhost:8001", c, m.Name)
	if err != nil {
		t.Fatal(err)
	}
	// Each token has an id of its own: the URLs agree but for it.
	got, err := srv.URL(m)
	gotPath, gotTok, _ := strings.Cut(got, "?token=")
	wantPath, wantTok, _ := strings.Cut(want, "?token=")
	gotClaims, gerr := signer.Verify(gotTok)
	wantClaims, _ := signer.Verify(wantTok)
	if err != nil || gerr != nil || gotPath != wantPath || gotClaims != wantClaims {
		t.Errorf("URL = %q, %v; want signing's %q", got, err, want)
	}

	m.Name = `..\x/./y.md`
	got, err = srv.URL(m)
	if err != nil || !strings.HasPrefix(got, "http://localhost:8001/files/"+m.ID+"/x/y.md?token=") {
		t.Errorf("URL of a name not cleaned = %q, %v", got, err)
	}
	// Whatever the name, cleaning leaves one FileURL takes.
	for _, name := range []string{"", ".", "...", "/", "a/../..", "\x00\n", "\xff\xfe", "\u202e.exe", strings.Repeat("é/", 600)} {
		m.Name = name
		if _, err := srv.URL(m); err != nil {
			t.Errorf("URL of name %q: %v", name, err)
		}
	}
}
