package mcptest

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// BearerToken returns an HS256 JWT for caller sub, signed with secret and
// valid for an hour: what an agent run with AGENT_AUTH=jwt and
// AGENT_AUTH_JWT_SECRET=secret accepts as "Authorization: Bearer <token>".
func BearerToken(t testing.TB, secret, sub string) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Subject: sub, ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour)),
	}).SignedString([]byte(secret))
	if err != nil {
		t.Fatalf("sign a JWT for %s: %v", sub, err)
	}
	return tok
}
