package agentcore

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// callerVerifier checks the bearer tokens of callers when AGENT_AUTH=jwt.
// The algorithm is pinned by the kind of key: HS256 for a secret, RS256 for
// an RSA key, ES256 for an ECDSA P-256 key, EdDSA for an Ed25519 key.
type callerVerifier struct {
	key    any
	method string
}

func newCallerVerifier(cfg Config) (*callerVerifier, error) {
	if cfg.AuthJWTSecret != "" {
		return &callerVerifier{key: []byte(cfg.AuthJWTSecret), method: jwt.SigningMethodHS256.Alg()}, nil
	}
	data, err := os.ReadFile(cfg.AuthJWTKeyFile)
	if err != nil {
		return nil, &ConfigError{"AGENT_AUTH_JWT_PUBLIC_KEY_FILE", cfg.AuthJWTKeyFile, err}
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, &ConfigError{"AGENT_AUTH_JWT_PUBLIC_KEY_FILE", cfg.AuthJWTKeyFile, errors.New("no PEM block found; give a PEM-encoded public key")}
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, &ConfigError{"AGENT_AUTH_JWT_PUBLIC_KEY_FILE", cfg.AuthJWTKeyFile, fmt.Errorf("not a PKIX public key: %w", err)}
	}
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return &callerVerifier{key: k, method: jwt.SigningMethodRS256.Alg()}, nil
	case ed25519.PublicKey:
		return &callerVerifier{key: k, method: jwt.SigningMethodEdDSA.Alg()}, nil
	case *ecdsa.PublicKey:
		return &callerVerifier{key: k, method: jwt.SigningMethodES256.Alg()}, nil
	}
	return nil, &ConfigError{"AGENT_AUTH_JWT_PUBLIC_KEY_FILE", cfg.AuthJWTKeyFile, fmt.Errorf("unsupported key type %T; use RSA, ECDSA P-256 or Ed25519", pub)}
}

// verify implements auth.TokenVerifier: the token's sub becomes the owner.
func (v *callerVerifier) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return v.key, nil },
		jwt.WithValidMethods([]string{v.method}), jwt.WithExpirationRequired())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	if claims.Subject == "" {
		return nil, fmt.Errorf("%w: the token has no sub claim to name the caller", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{UserID: claims.Subject, Expiration: claims.ExpiresAt.Time}, nil
}

// uploadOwner is the owner of an /uploads request: the verified caller (the
// bearer middleware ran before), or AnonymousOwner without authentication.
func (s *Service) uploadOwner(r *http.Request) (string, error) {
	if s.verifier == nil {
		return AnonymousOwner, nil
	}
	ti := auth.TokenInfoFromContext(r.Context())
	if ti == nil || ti.UserID == "" {
		return "", errors.New("no verified caller; send Authorization: Bearer <JWT>")
	}
	return ti.UserID, nil
}
