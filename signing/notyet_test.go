package signing_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/signing"
	"github.com/golang-jwt/jwt/v5"
)

// A token whose nbf lies in the future says so, not "malformed" (probe of
// 2026-12-01).
func TestTokenNotValidYetSaysSo(t *testing.T) {
	k := newKey(t)
	s := newSigner(t, audience, k)
	p := validPayload()
	p["nbf"] = t0.Add(time.Hour).Unix()
	_, err := s.Verify(signWith(t, jwt.SigningMethodHS256, k.ID, k.Secret, p))
	wantVerifyError(t, err, signing.ErrClaims)
	if !strings.Contains(err.Error(), "not valid yet") {
		t.Errorf("future nbf: %v", err)
	}
}
