package signing_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentura/agentura/signing"
	"github.com/golang-jwt/jwt/v5"
)

const audience = "http://localhost:8001"

// t0 is the fixed "now" of tests that control the clock.
var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func newKey(t testing.TB) signing.Key {
	t.Helper()
	secret, err := signing.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	k, err := signing.NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newSigner(t testing.TB, aud string, keys ...signing.Key) *signing.Signer {
	t.Helper()
	return newSignerAt(t, func() time.Time { return t0 }, aud, keys...)
}

// newSignerAt is newSigner on the clock now.
func newSignerAt(t testing.TB, now func() time.Time, aud string, keys ...signing.Key) *signing.Signer {
	t.Helper()
	s, err := signing.NewSigner(aud, keys, signing.WithClock(now))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func claims() signing.Claims {
	return signing.Claims{
		Owner:     "alice",
		FileID:    "0123456789abcdef0123456789abcdef",
		Area:      "outputs",
		ExpiresAt: t0.Add(time.Hour),
	}
}

func sign(t testing.TB, s *signing.Signer, c signing.Claims) string {
	t.Helper()
	tok, err := s.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// wantVerifyError checks that err is a *VerifyError wrapping want, with a
// reason a person can read.
func wantVerifyError(t *testing.T, err, want error) {
	t.Helper()
	if err == nil {
		t.Fatalf("Verify succeeded; want %v", want)
	}
	if !errors.Is(err, want) {
		t.Fatalf("Verify error = %v (%#v); want %v", err, err, want)
	}
	var ve *signing.VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("Verify error %T is not a *VerifyError", err)
	}
	if len(ve.Reason) < 10 || ve.Reason != err.Error() {
		t.Fatalf("VerifyError.Reason = %q; want a readable sentence equal to Error()", ve.Reason)
	}
}

func b64(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(raw)
}

// handToken assembles a token from parts without any JWT library.
func handToken(header, payload map[string]any, sig []byte) string {
	return b64(header) + "." + b64(payload) + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// validPayload is the body of a token that would pass every claim check.
func validPayload() map[string]any {
	return map[string]any{
		"fid":  "0123456789abcdef0123456789abcdef",
		"area": "outputs",
		"sub":  "alice",
		"aud":  []string{audience},
		"exp":  t0.Add(time.Hour).Unix(),
		"iat":  t0.Unix(),
	}
}

// signWith signs payload with the given method and key, setting kid.
func signWith(t *testing.T, method jwt.SigningMethod, kid string, key any, payload map[string]any) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, jwt.MapClaims(payload))
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Two tokens of the same claims, signed in the same second, differ (each
// has an id of its own), so that revoking one URL of a file leaves its
// other URLs; both verify to the same claims.
func TestTokensOfOneSecondDiffer(t *testing.T) {
	s := newSigner(t, audience, newKey(t)) // its clock stands still
	a, b := sign(t, s, claims()), sign(t, s, claims())
	if a == b {
		t.Fatalf("two tokens of the same claims and second are the same string %q", a)
	}
	if signing.TokenID(a) == signing.TokenID(b) {
		t.Errorf("two tokens share the id revocations are recorded by")
	}
	ca, erra := s.Verify(a)
	cb, errb := s.Verify(b)
	if erra != nil || errb != nil || ca != cb {
		t.Errorf("the two tokens verify to %+v (%v) and %+v (%v)", ca, erra, cb, errb)
	}
}

func TestRoundTrip(t *testing.T) {
	s := newSigner(t, audience, newKey(t))
	want := claims()
	got, err := s.Verify(sign(t, s, want))
	if err != nil {
		t.Fatal(err)
	}
	if got.Owner != want.Owner || got.FileID != want.FileID || got.Area != want.Area || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("Verify = %+v; want %+v", got, want)
	}
	if s.Audience() != audience {
		t.Fatalf("Audience = %q", s.Audience())
	}
}

func TestTokenHeader(t *testing.T) {
	k := newKey(t)
	s := newSigner(t, audience, k)
	tok := sign(t, s, claims())
	head, _, _ := strings.Cut(tok, ".")
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	if h["alg"] != signing.Algorithm || h["kid"] != k.ID {
		t.Fatalf("header = %v; want alg %s and kid %s", h, signing.Algorithm, k.ID)
	}
	if strings.Contains(tok, string(k.Secret)) {
		t.Fatal("token reveals the secret")
	}
}

func TestSignRefusesBadClaims(t *testing.T) {
	s := newSigner(t, audience, newKey(t))
	for name, c := range map[string]signing.Claims{
		"no owner": {FileID: "f", ExpiresAt: t0.Add(time.Hour)},
		"no file":  {Owner: "alice", ExpiresAt: t0.Add(time.Hour)},
		"past":     {Owner: "alice", FileID: "f", ExpiresAt: t0.Add(-time.Second)},
		"now":      {Owner: "alice", FileID: "f", ExpiresAt: t0},
	} {
		if _, err := s.Sign(c); err == nil {
			t.Errorf("%s: Sign succeeded", name)
		}
	}
}

func TestTamperedPayload(t *testing.T) {
	s := newSigner(t, audience, newKey(t))
	parts := strings.Split(sign(t, s, claims()), ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	body["fid"] = "ffffffffffffffffffffffffffffffff" // someone else's file
	parts[1] = b64(body)
	_, err = s.Verify(strings.Join(parts, "."))
	wantVerifyError(t, err, signing.ErrSignature)
}

func TestTamperedSignature(t *testing.T) {
	s := newSigner(t, audience, newKey(t))
	parts := strings.Split(sign(t, s, claims()), ".")
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	sig[0] ^= 0x01
	parts[2] = base64.RawURLEncoding.EncodeToString(sig)
	_, err = s.Verify(strings.Join(parts, "."))
	wantVerifyError(t, err, signing.ErrSignature)

	// No signature at all.
	parts[2] = ""
	_, err = s.Verify(strings.Join(parts, "."))
	wantVerifyError(t, err, signing.ErrSignature)
}

func TestAlgNone(t *testing.T) {
	k := newKey(t)
	s := newSigner(t, audience, k)
	for _, alg := range []string{"none", "None", "NONE"} {
		tok := handToken(map[string]any{"alg": alg, "typ": "JWT", "kid": k.ID}, validPayload(), nil)
		_, err := s.Verify(tok)
		wantVerifyError(t, err, signing.ErrAlgorithm)
	}
	// The golang-jwt way of producing an unsigned token, for good measure.
	tok := signWith(t, jwt.SigningMethodNone, k.ID, jwt.UnsafeAllowNoneSignatureType, validPayload())
	_, err := s.Verify(tok)
	wantVerifyError(t, err, signing.ErrAlgorithm)
}

func TestOtherHMACRefused(t *testing.T) {
	k := newKey(t)
	s := newSigner(t, audience, k)
	for _, m := range []jwt.SigningMethod{jwt.SigningMethodHS384, jwt.SigningMethodHS512} {
		tok := signWith(t, m, k.ID, k.Secret, validPayload())
		_, err := s.Verify(tok)
		wantVerifyError(t, err, signing.ErrAlgorithm)
	}
	// Sanity: the same hand-made payload signed with HS256 passes, so the
	// refusals above are due to the algorithm alone.
	if _, err := s.Verify(signWith(t, jwt.SigningMethodHS256, k.ID, k.Secret, validPayload())); err != nil {
		t.Fatalf("HS256 control token refused: %v", err)
	}
}

func TestRS256Refused(t *testing.T) {
	k := newKey(t)
	s := newSigner(t, audience, k)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tok := signWith(t, jwt.SigningMethodRS256, k.ID, rsaKey, validPayload())
	_, err = s.Verify(tok)
	wantVerifyError(t, err, signing.ErrAlgorithm)

	// Key confusion: an RS256 header over an HMAC made with our secret.
	fake := handToken(map[string]any{"alg": "RS256", "typ": "JWT", "kid": k.ID}, validPayload(), []byte("x"))
	_, err = s.Verify(fake)
	wantVerifyError(t, err, signing.ErrAlgorithm)

	// An algorithm nobody knows, and no algorithm at all.
	unknown := handToken(map[string]any{"alg": "XS999", "kid": k.ID}, validPayload(), []byte("x"))
	_, err = s.Verify(unknown)
	wantVerifyError(t, err, signing.ErrAlgorithm)
	missing := handToken(map[string]any{"kid": k.ID}, validPayload(), []byte("x"))
	_, err = s.Verify(missing)
	wantVerifyError(t, err, signing.ErrAlgorithm)
}

func TestUnknownKey(t *testing.T) {
	ours := newSigner(t, audience, newKey(t))
	theirs := newSigner(t, audience, newKey(t))
	_, err := ours.Verify(sign(t, theirs, claims()))
	wantVerifyError(t, err, signing.ErrUnknownKey)

	// A token without a kid is from no key we know either.
	k := newKey(t)
	s := newSigner(t, audience, k)
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims(validPayload()))
	noKid, err := tok.SignedString(k.Secret)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Verify(noKid)
	wantVerifyError(t, err, signing.ErrUnknownKey)
}

func TestSameKidWrongSecret(t *testing.T) {
	real := newKey(t)
	impostor := signing.Key{ID: real.ID, Secret: bytes.Repeat([]byte("x"), signing.MinKeyBytes)}
	forger := newSigner(t, audience, impostor)
	s := newSigner(t, audience, real)
	_, err := s.Verify(sign(t, forger, claims()))
	wantVerifyError(t, err, signing.ErrSignature)
}

// RFC 7515 §4.1.11: a token whose header names critical extensions (crit)
// is refused whatever the list holds (an unknown extension, nothing, a
// registered parameter, not even a list), though signed with the right key.
func TestCritRefused(t *testing.T) {
	k := newKey(t)
	s := newSigner(t, audience, k)
	for _, crit := range []any{[]string{"urn:example:unknown"}, []string{}, []string{"exp"}, "b64"} {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims(validPayload()))
		tok.Header["kid"], tok.Header["crit"] = k.ID, crit
		signed, err := tok.SignedString(k.Secret)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Verify(signed)
		wantVerifyError(t, err, signing.ErrMalformed)
		if err != nil && !strings.Contains(err.Error(), "crit") {
			t.Errorf("crit %v: the reason does not say why: %v", crit, err)
		}
	}
	// The same token without crit passes: the refusal is crit's alone.
	if _, err := s.Verify(signWith(t, jwt.SigningMethodHS256, k.ID, k.Secret, validPayload())); err != nil {
		t.Fatalf("control token refused: %v", err)
	}
}

func TestExpired(t *testing.T) {
	now := t0
	s := newSignerAt(t, func() time.Time { return now }, audience, newKey(t))
	c := claims()
	c.ExpiresAt = t0.Add(time.Minute)
	tok := sign(t, s, c)

	now = t0.Add(59 * time.Second)
	if _, err := s.Verify(tok); err != nil {
		t.Fatalf("Verify before expiry: %v", err)
	}
	now = t0.Add(2 * time.Minute)
	_, err := s.Verify(tok)
	wantVerifyError(t, err, signing.ErrExpired)
}

func TestWrongAudience(t *testing.T) {
	k := newKey(t)
	a := newSigner(t, "http://agent-a:8001", k)
	b := newSigner(t, "http://agent-b:8001", k)
	_, err := b.Verify(sign(t, a, claims()))
	wantVerifyError(t, err, signing.ErrAudience)

	// No audience at all: refused, and the reason says so.
	p := validPayload()
	delete(p, "aud")
	_, err = a.Verify(signWith(t, jwt.SigningMethodHS256, k.ID, k.Secret, p))
	wantVerifyError(t, err, signing.ErrClaims)
	if !strings.Contains(err.Error(), "audience") {
		t.Errorf("reason %q does not name the missing audience", err)
	}
}

func TestMissingClaims(t *testing.T) {
	k := newKey(t)
	s := newSigner(t, audience, k)

	p := validPayload()
	delete(p, "exp")
	_, err := s.Verify(signWith(t, jwt.SigningMethodHS256, k.ID, k.Secret, p))
	wantVerifyError(t, err, signing.ErrClaims)
	if !strings.Contains(err.Error(), "expiry") {
		t.Errorf("reason %q does not name the missing expiry", err)
	}

	for _, claim := range []string{"fid", "sub"} {
		p := validPayload()
		delete(p, claim)
		_, err := s.Verify(signWith(t, jwt.SigningMethodHS256, k.ID, k.Secret, p))
		wantVerifyError(t, err, signing.ErrClaims)
	}
}

func TestMalformed(t *testing.T) {
	s := newSigner(t, audience, newKey(t))
	for _, tok := range []string{"", "abc", "a.b", "a.b.c.d", "!!!.???.***"} {
		_, err := s.Verify(tok)
		wantVerifyError(t, err, signing.ErrMalformed)
	}
}

func TestRotation(t *testing.T) {
	oldKey, newK := newKey(t), newKey(t)
	before := newSigner(t, audience, oldKey)
	oldTok := sign(t, before, claims())

	during := newSigner(t, audience, newK, oldKey)
	if _, err := during.Verify(oldTok); err != nil {
		t.Fatalf("old token refused during rotation: %v", err)
	}
	newTok := sign(t, during, claims())
	if kid := kidOf(t, newTok); kid != newK.ID {
		t.Fatalf("rotated signer signs with kid %s; want the new key %s", kid, newK.ID)
	}
	if _, err := during.Verify(newTok); err != nil {
		t.Fatal(err)
	}

	after := newSigner(t, audience, newK)
	_, err := after.Verify(oldTok)
	wantVerifyError(t, err, signing.ErrUnknownKey)
	if _, err := after.Verify(newTok); err != nil {
		t.Fatalf("new token refused after rotation: %v", err)
	}
}

func kidOf(t *testing.T, tok string) string {
	t.Helper()
	head, _, _ := strings.Cut(tok, ".")
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	return h.Kid
}

func TestNewSignerRefuses(t *testing.T) {
	k := newKey(t)
	if _, err := signing.NewSigner("", []signing.Key{k}); err == nil {
		t.Error("empty audience accepted")
	}
	if _, err := signing.NewSigner(audience, nil); err == nil {
		t.Error("no keys accepted")
	}
	if _, err := signing.NewSigner(audience, []signing.Key{{ID: "short", Secret: []byte("short")}}); err == nil {
		t.Error("short key accepted")
	}
	if _, err := signing.NewSigner(audience, []signing.Key{{Secret: k.Secret}}); err == nil {
		t.Error("key without id accepted")
	}
	clash := signing.Key{ID: k.ID, Secret: bytes.Repeat([]byte("y"), 40)}
	if _, err := signing.NewSigner(audience, []signing.Key{k, clash}); err == nil {
		t.Error("two different secrets under one id accepted")
	}
	if _, err := signing.NewSigner(audience, []signing.Key{k, k}); err != nil {
		t.Errorf("the same key twice refused: %v", err)
	}
}

func TestNewKey(t *testing.T) {
	if _, err := signing.NewKey(bytes.Repeat([]byte("a"), signing.MinKeyBytes-1)); err == nil {
		t.Fatal("31-byte secret accepted")
	} else if !strings.Contains(err.Error(), "32") {
		t.Errorf("error %q does not say how long a key must be", err)
	}
	if _, err := signing.NewKey(nil); err == nil {
		t.Fatal("empty secret accepted")
	}
	secret := bytes.Repeat([]byte("a"), signing.MinKeyBytes)
	k1, err := signing.NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := signing.NewKey(secret)
	if k1.ID == "" || k1.ID != k2.ID {
		t.Fatalf("ids %q and %q: want the same non-empty id for the same secret", k1.ID, k2.ID)
	}
	if strings.Contains(k1.ID, "aaaa") {
		t.Fatalf("id %q reveals the secret", k1.ID)
	}
	other, _ := signing.NewKey(bytes.Repeat([]byte("b"), signing.MinKeyBytes))
	if other.ID == k1.ID {
		t.Fatal("different secrets share an id")
	}
	// NewKey copies the secret: changing the caller's slice changes nothing.
	secret[0] = 'z'
	if k1.Secret[0] != 'a' {
		t.Fatal("Key aliases the caller's secret")
	}
}

func TestGenerateSecret(t *testing.T) {
	a, err := signing.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := signing.GenerateSecret()
	if len(a) < signing.MinKeyBytes || bytes.Equal(a, b) {
		t.Fatalf("secrets %q, %q: want two different secrets of at least %d bytes", a, b, signing.MinKeyBytes)
	}
}

func TestParseKeys(t *testing.T) {
	s1 := strings.Repeat("1", 32)
	s2 := strings.Repeat("2", 40)
	keys, err := signing.ParseKeys(" " + s1 + " , ,\t" + s2 + ",,")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || string(keys[0].Secret) != s1 || string(keys[1].Secret) != s2 {
		t.Fatalf("ParseKeys = %d keys %q; want [%s %s] in order", len(keys), keys, s1, s2)
	}
	for _, bad := range []string{"", " , ,", s1 + ",short"} {
		if _, err := signing.ParseKeys(bad); err == nil {
			t.Errorf("ParseKeys(%q) succeeded", bad)
		}
	}
}

func TestLoadKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	s1, s2 := strings.Repeat("1", 32), strings.Repeat("2", 32)
	if err := os.WriteFile(path, []byte("# new key first\n"+s1+"\r\n\n  "+s2+"  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := signing.LoadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || string(keys[0].Secret) != s1 || string(keys[1].Secret) != s2 {
		t.Fatalf("LoadKeyFile = %q", keys)
	}
	if err := os.WriteFile(path, []byte("# only a comment\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := signing.LoadKeyFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("empty key file: err = %v; want an error naming the file", err)
	}
}

func TestLoadOrCreateKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "signing.key")
	keys, created, err := signing.LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !created || len(keys) != 1 {
		t.Fatalf("first call: created=%v, %d keys; want created and one key", created, len(keys))
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Fatalf("key file mode %o; want 600", mode)
	}
	again, created, err := signing.LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if created || len(again) != 1 || again[0].ID != keys[0].ID || !bytes.Equal(again[0].Secret, keys[0].Secret) {
		t.Fatalf("second call: created=%v keys=%v; want the same key, not created", created, again)
	}
	// No temporary files are left beside the key.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("folder holds %d entries; want only the key file", len(entries))
	}
}

func TestLoadOrCreateKeyFileRace(t *testing.T) {
	for round := 0; round < 20; round++ {
		path := filepath.Join(t.TempDir(), "signing.key")
		const n = 8
		var (
			wg      sync.WaitGroup
			ids     [n]string
			created [n]bool
			errs    [n]error
			start   = make(chan struct{})
		)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				keys, c, err := signing.LoadOrCreateKeyFile(path)
				errs[i], created[i] = err, c
				if err == nil {
					ids[i] = keys[0].ID
				}
			}()
		}
		close(start)
		wg.Wait()
		nCreated := 0
		for i := 0; i < n; i++ {
			if errs[i] != nil {
				t.Fatalf("round %d, goroutine %d: %v", round, i, errs[i])
			}
			if ids[i] != ids[0] {
				t.Fatalf("round %d: goroutines disagree on the key: %v", round, ids)
			}
			if created[i] {
				nCreated++
			}
		}
		if nCreated != 1 {
			t.Fatalf("round %d: %d callers report creating the key; want exactly 1", round, nCreated)
		}
	}
}

// TestVerifyErrorReasons produces one failure of every kind and checks that
// each carries its own readable reason (what the 403 response body shows).
func TestVerifyErrorReasons(t *testing.T) {
	k := newKey(t)
	s := newSigner(t, audience, k)
	good := sign(t, s, claims())
	parts := strings.Split(good, ".")
	noExp := validPayload()
	delete(noExp, "exp")
	expired := newSignerAt(t, func() time.Time { return t0.Add(2 * time.Hour) }, audience, k)

	cases := map[error]func() error{
		signing.ErrMalformed: func() error { _, err := s.Verify("not-a-token"); return err },
		signing.ErrAlgorithm: func() error {
			_, err := s.Verify(handToken(map[string]any{"alg": "none", "kid": k.ID}, validPayload(), nil))
			return err
		},
		signing.ErrUnknownKey: func() error { _, err := s.Verify(sign(t, newSigner(t, audience, newKey(t)), claims())); return err },
		signing.ErrSignature:  func() error { _, err := s.Verify(parts[0] + "." + parts[1] + ".AAAA"); return err },
		signing.ErrExpired:    func() error { _, err := expired.Verify(good); return err },
		signing.ErrAudience:   func() error { _, err := newSigner(t, "http://elsewhere", k).Verify(good); return err },
		signing.ErrClaims: func() error {
			_, err := s.Verify(signWith(t, jwt.SigningMethodHS256, k.ID, k.Secret, noExp))
			return err
		},
	}
	seen := map[string]error{}
	for sentinel, fail := range cases {
		err := fail()
		wantVerifyError(t, err, sentinel)
		if prev, dup := seen[err.Error()]; dup {
			t.Errorf("%v and %v share the reason %q", prev, sentinel, err)
		}
		seen[err.Error()] = sentinel
	}
}

// ExampleSigner shows a token being issued for a download URL, checked, and
// refused once it has expired.
func ExampleSigner() {
	// In a deployment the secret comes from AGENT_SIGNING_KEY or the key file.
	key, err := signing.NewKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	// WithClock fixes the time for the example; a deployment leaves it out.
	signer, err := signing.NewSigner("http://localhost:8001", []signing.Key{key}, signing.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}

	token, err := signer.Sign(signing.Claims{
		Owner:     "alice",
		FileID:    "9f86d081884c7d659a2feaa0c55ad015",
		Area:      "outputs",
		ExpiresAt: now.Add(time.Hour),
	})
	if err != nil {
		panic(err)
	}

	c, err := signer.Verify(token)
	fmt.Println(c.Owner, c.FileID, c.Area, c.ExpiresAt.Format(time.RFC3339), err)

	now = now.Add(2 * time.Hour)
	_, err = signer.Verify(token)
	fmt.Println(errors.Is(err, signing.ErrExpired), err)
	// Output:
	// alice 9f86d081884c7d659a2feaa0c55ad015 outputs 2025-06-01T13:00:00Z <nil>
	// true token has expired; ask the agent for a fresh download URL
}
