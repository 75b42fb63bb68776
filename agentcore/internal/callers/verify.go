package callers

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/oauthrs"
	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/settings"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// tokenVerifier checks a caller's bearer token: callerVerifier under
// AGENT_AUTH=jwt, oauthrs.Resource under AGENT_AUTH=oauth. An error wraps
// auth.ErrInvalidToken (401), or oauthrs.ErrIssuerUnavailable (503).
type tokenVerifier interface {
	Verify(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error)
}

// callerVerifier checks the bearer tokens of callers when AGENT_AUTH=jwt.
// The algorithm is pinned by the kind of key: HS256 for a secret, RS256 for
// an RSA key, ES256 for an ECDSA P-256 key, EdDSA for an Ed25519 key.
type callerVerifier struct {
	key    any
	method string
	aud    []string // AGENT_AUTH_JWT_AUDIENCE: the aud claim must name one; empty: not checked
	iss    []string // AGENT_AUTH_JWT_ISSUER: the iss claim must be one; empty: not checked
}

// newCallerVerifier reads the key that verifies caller tokens and pins its
// algorithm.
func newCallerVerifier(cfg Access) (*callerVerifier, error) {
	v := &callerVerifier{aud: cfg.AuthJWTAudience, iss: cfg.AuthJWTIssuer}
	if cfg.AuthJWTSecret != "" {
		v.key, v.method = []byte(cfg.AuthJWTSecret), jwt.SigningMethodHS256.Alg()
		return v, nil
	}
	keyErr := func(err error) error {
		return &settings.Error{Var: "AGENT_AUTH_JWT_PUBLIC_KEY_FILE", Value: cfg.AuthJWTKeyFile, Err: err}
	}
	data, err := os.ReadFile(cfg.AuthJWTKeyFile)
	if err != nil {
		return nil, keyErr(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, keyErr(errors.New("no PEM block found; give a PEM-encoded public key"))
	}
	v.key, err = x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, keyErr(fmt.Errorf("not a PKIX public key: %w", err))
	}
	switch k := v.key.(type) {
	case *rsa.PublicKey:
		v.method = jwt.SigningMethodRS256.Alg()
	case ed25519.PublicKey:
		v.method = jwt.SigningMethodEdDSA.Alg()
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return nil, keyErr(fmt.Errorf("ECDSA key on %s; ES256 needs a P-256 key", k.Curve.Params().Name))
		}
		v.method = jwt.SigningMethodES256.Alg()
	default:
		return nil, keyErr(fmt.Errorf("unsupported key type %T; use RSA, ECDSA P-256 or Ed25519", v.key))
	}
	return v, nil
}

// verify implements auth.TokenVerifier: the token's sub becomes the owner.
func (v *callerVerifier) Verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	var claims jwt.RegisteredClaims
	opts := []jwt.ParserOption{jwt.WithValidMethods([]string{v.method}), jwt.WithExpirationRequired()}
	if len(v.aud) > 0 {
		opts = append(opts, jwt.WithAudience(v.aud...)) // any one of them
	}
	var crit error
	_, err := jwt.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		// RFC 7515 §4.1.11: a header naming extensions as critical (crit)
		// is refused when they are not understood, and none is here.
		if _, ok := t.Header["crit"]; ok {
			crit = fmt.Errorf("%w: the token's JWS header marks extensions as critical (crit) that this agent does not understand", auth.ErrInvalidToken)
			return nil, crit
		}
		return v.key, nil
	}, opts...)
	if crit != nil {
		return nil, crit
	}
	if err != nil {
		if errors.Is(err, jwt.ErrTokenInvalidAudience) {
			return nil, fmt.Errorf("%w: the token's aud %q is not this agent's (AGENT_AUTH_JWT_AUDIENCE); ask the identity provider for a token issued for %q",
				auth.ErrInvalidToken, []string(claims.Audience), v.aud[0])
		}
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	if len(v.iss) > 0 && !slices.Contains(v.iss, claims.Issuer) {
		return nil, fmt.Errorf("%w: the token's iss %q is not a trusted issuer (AGENT_AUTH_JWT_ISSUER); get a token from %q",
			auth.ErrInvalidToken, claims.Issuer, v.iss[0])
	}
	if claims.Subject == "" {
		return nil, fmt.Errorf("%w: the token has no sub claim to name the caller", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{UserID: claims.Subject, Expiration: claims.ExpiresAt.Time}, nil
}

// Require lets through requests with a valid bearer token and answers
// others with 401 and a JSON reason, with the challenge bearerChallenge
// writes (under AGENT_AUTH=oauth every 401 and 403 behind it carries one).
// Behind it the go-sdk's middleware puts the token's identity where the MCP
// handler (req.Extra.TokenInfo) and the upload handler
// (auth.TokenInfoFromContext) read it. Under AGENT_AUTH=none it is next.
func (g *Guard) Require(next http.Handler) http.Handler {
	if g.verifier == nil {
		return next
	}
	// The token is verified once, here; the go-sdk's middleware takes the
	// result from the request's context. Its own expiry check gets a minute
	// of slack, so a token expiring between the two never meets its
	// plain-text 401.
	withInfo := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		if ti, ok := ctx.Value(verifiedCaller{}).(*auth.TokenInfo); ok {
			return ti, nil
		}
		return nil, auth.ErrInvalidToken
	}, &auth.RequireBearerTokenOptions{ClockSkew: time.Minute})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		token = strings.TrimSpace(token)
		if g.oauth != nil {
			w = &challengeWriter{ResponseWriter: w, g: g, r: r}
		}
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			w.Header().Set("WWW-Authenticate", g.bearerChallenge(r, "", "", nil))
			httpjson.WriteError(w, http.StatusUnauthorized, "authentication required: send Authorization: Bearer <token> (AGENT_AUTH="+g.mode+")")
			return
		}
		ti, err := g.verifier.Verify(r.Context(), token, r)
		if errors.Is(err, oauthrs.ErrIssuerUnavailable) {
			// Not a refusal: 503 with Retry-After, the cause in words and
			// identity_provider_unavailable; the provider's URLs and
			// addresses are in the log (oauthrs logs each failed read).
			httpjson.WriteFailure(w, "check the bearer token", err)
			return
		}
		if err != nil {
			why := strings.TrimPrefix(err.Error(), auth.ErrInvalidToken.Error()+": ")
			w.Header().Set("WWW-Authenticate", g.bearerChallenge(r, "invalid_token", why, nil))
			httpjson.WriteError(w, http.StatusUnauthorized, "bearer token refused: "+why)
			return
		}
		withInfo.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), verifiedCaller{}, ti)))
	})
}

// verifiedCaller is the context key of a token requireCaller verified.
type verifiedCaller struct{}

// VerifiedCallerID is the user id of r's verified caller, or "" (no
// authentication, or the limiter runs before it).
func VerifiedCallerID(r *http.Request) string {
	if ti, ok := r.Context().Value(verifiedCaller{}).(*auth.TokenInfo); ok {
		return ti.UserID
	}
	return ""
}

// Owner is the owner of a request: the owner of a verified upload
// capability it carries (WithOwner), else the verified caller (Require ran
// before), or AnonymousOwner without authentication.
func (g *Guard) Owner(r *http.Request) (string, error) {
	if owner, ok := r.Context().Value(capabilityOwner{}).(string); ok {
		return owner, nil // an upload view's capability (internal/apps)
	}
	if g.verifier == nil {
		return calls.AnonymousOwner, nil
	}
	ti := auth.TokenInfoFromContext(r.Context())
	if ti == nil || ti.UserID == "" {
		return "", errors.New("no verified caller; send Authorization: Bearer <JWT>")
	}
	return ti.UserID, nil
}

// capabilityOwner carries the owner of a verified upload capability in a
// request's context to Owner.
type capabilityOwner struct{}

// WithOwner is ctx carrying owner, the owner of an upload capability a
// request carried and its handler verified, for Owner.
func WithOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, capabilityOwner{}, owner)
}

// OwnerOf is the owner of a request by its context alone: the subject of
// its verified bearer token (Require ran before), or calls.AnonymousOwner
// without authentication. An A2A execution runs in a context detached from
// the request's cancellation but keeping its values, so this holds there
// too.
func OwnerOf(ctx context.Context) string {
	if ti := auth.TokenInfoFromContext(ctx); ti != nil && ti.UserID != "" {
		return ti.UserID
	}
	return calls.AnonymousOwner
}
