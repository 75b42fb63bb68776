package transferclient_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transferclient"
	"github.com/golang-jwt/jwt/v5"
)

const callerSecret = "manage-test-caller-secret-0123456789abcdef"

// prefixedAgent serves a real agent (AGENT_AUTH=jwt) under the base path
// /agent/ of a test server, as behind a proxy that routes a prefix to it:
// its URLs are <server>/agent/files/…, and nothing outside /agent/ is
// the agent's (404). It returns the agent's public URL.
func prefixedAgent(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	cfg, err := agentcore.ConfigFromLookup(func(string) (string, bool) { return "", false }, "manage", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.StorageURL = "file://" + cfg.DataDir
	cfg.PublicURL = ts.URL + "/agent"
	key := make([]byte, 32)
	rand.Read(key)
	cfg.SigningKeys = []string{hex.EncodeToString(key)}
	cfg.Auth, cfg.AuthJWTSecret = "jwt", callerSecret
	svc, err := agentcore.New(agentcore.Info{Name: "manage", Version: "0"}, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	mux.Handle("/agent/", http.StripPrefix("/agent", svc.Handler()))
	return cfg.PublicURL
}

// as is a client carrying a bearer of sub to the agent at base.
func as(t *testing.T, base, sub string) *http.Client {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Subject: sub, ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour)),
	}).SignedString([]byte(callerSecret))
	if err != nil {
		t.Fatal(err)
	}
	origin, _ := url.Parse(base)
	return transferclient.WithBearer(nil, tok, origin)
}

// stage uploads a small file as hc's caller and returns its download URL.
func stage(t *testing.T, hc *http.Client, base, name string) string {
	t.Helper()
	up, err := transferclient.SendUpload(context.Background(), hc, base+transfer.UploadsPath, name, strings.NewReader("contents of "+name), -1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(up.URL, base+"/files/") {
		t.Fatalf("the agent's URL %s is not under its base %s", up.URL, base)
	}
	return up.URL
}

// get is the status of a GET of u.
func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// DeleteFile: the owner's 204 is success, and so is the 404 of a file gone
// already; another caller's 403 is an error that carries the agent's
// reason, and the file stays.
func TestDeleteFile(t *testing.T) {
	ctx := context.Background()
	base := prefixedAgent(t)
	alice, mallory := as(t, base, "alice"), as(t, base, "mallory")
	u := stage(t, alice, base, "notes.txt")

	err := transferclient.DeleteFile(ctx, mallory, u)
	if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "only its owner may delete it") {
		t.Fatalf("DeleteFile by another caller: %v; want an error with the 403 and the agent's reason", err)
	}
	if _, token, _ := strings.Cut(u, "token="); strings.Contains(err.Error(), token) {
		t.Errorf("the error shows the URL's token: %v", err)
	}
	if code, _ := get(t, u); code != http.StatusOK {
		t.Fatalf("the refused deletion deleted the file: GET %d", code)
	}
	if err := transferclient.DeleteFile(ctx, alice, u); err != nil {
		t.Fatalf("DeleteFile by the owner: %v", err)
	}
	if code, _ := get(t, u); code != http.StatusNotFound {
		t.Errorf("GET of the deleted file: %d, want 404", code)
	}
	if err := transferclient.DeleteFile(ctx, alice, u); err != nil {
		t.Errorf("DeleteFile of a file deleted already (404): %v; want no error", err)
	}
}

// RevokeURL of an agent served under a base path posts to the revoke
// endpoint under that path (outside it the server has nothing: a client
// that dropped the prefix gets 404): the URL stops, the file's other URLs
// stay. A URL the agent refuses is an error with its reason.
func TestRevokeURLUnderABasePath(t *testing.T) {
	ctx := context.Background()
	base := prefixedAgent(t)
	alice := as(t, base, "alice")
	u := stage(t, alice, base, "report.txt")
	if err := transferclient.RevokeURL(ctx, http.DefaultClient, u); err != nil {
		t.Fatalf("RevokeURL: %v", err)
	}
	if code, body := get(t, u); code != http.StatusForbidden || !strings.Contains(body, "revoked") {
		t.Errorf("GET of the revoked URL: %d %s; want 403 saying revoked", code, body)
	}
	v := stage(t, alice, base, "other.txt")
	if code, _ := get(t, v); code != http.StatusOK {
		t.Errorf("another file's URL after the revocation: %d, want 200", code)
	}
	err := transferclient.RevokeURL(ctx, http.DefaultClient, v[:len(v)-4]+"AAAA")
	if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "signature") {
		t.Errorf("RevokeURL of a forged URL: %v; want an error with the 403 and the agent's reason", err)
	}
	if err := transferclient.RevokeURL(ctx, http.DefaultClient, "/files/x/y?token=z"); err == nil {
		t.Error("RevokeURL of a relative URL: no error")
	}
}
