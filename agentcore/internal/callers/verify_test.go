package callers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// E9: with AGENT_AUTH_JWT_AUDIENCE / _ISSUER set, a token for another
// service or from another issuer is refused.
func TestCallerTokensMustMatchAudienceAndIssuer(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef-test"
	v, err := newCallerVerifier(Access{AuthJWTSecret: secret, AuthJWTAudience: []string{"https://agent.example"}, AuthJWTIssuer: []string{"https://idp.example"}})
	if err != nil {
		t.Fatal(err)
	}
	tok := func(aud, iss string) string {
		c := jwt.RegisteredClaims{Subject: "alice", Issuer: iss, ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour))}
		if aud != "" {
			c.Audience = jwt.ClaimStrings{aud}
		}
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		aud, iss, want string
	}{
		{"https://payroll.example", "https://idp.example", "aud"},
		{"", "https://idp.example", "aud"},
		{"https://agent.example", "evil", "iss"},
		{"https://agent.example", "", "iss"},
	} {
		if _, err := v.Verify(context.Background(), tok(tc.aud, tc.iss), nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("aud %q iss %q: %v, want a refusal naming %s", tc.aud, tc.iss, err, tc.want)
		}
	}
	if ti, err := v.Verify(context.Background(), tok("https://agent.example", "https://idp.example"), nil); err != nil || ti.UserID != "alice" {
		t.Errorf("matching token refused: %v", err)
	}
}

func TestCallerKeysMustFitTheirAlgorithm(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	path := filepath.Join(t.TempDir(), "p384.pem")
	os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600)
	_, err = newCallerVerifier(Access{AuthJWTKeyFile: path})
	if err == nil || !strings.Contains(err.Error(), "ES256 needs a P-256 key") {
		t.Errorf("P-384 key: err = %v", err)
	}
}
