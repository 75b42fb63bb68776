// Package signing issues and verifies the tokens carried by download URLs.
//
// A token is a JWT signed with HMAC-SHA256. The algorithm is pinned: a token
// that names any other algorithm (including "none") is refused before its
// signature is looked at. Every token carries a key id, so keys can be rotated:
// the first key of a [Signer] signs, every key verifies, and an old key stops
// verifying the moment it is removed. A token binds the owner, the file id and
// the storage area it may be used for, and it expires.
//
// [Signer.FileURL] builds the download URL around a token,
// <public URL>/files/<id>/<name>?token=<JWT>. It is the one builder of these
// URLs: the agents' file service hands out what it builds, and a service
// beside the agents that opens the same store with the same keys
// (AGENT_SIGNING_KEY, with the agents' AGENT_PUBLIC_URL as audience) mints
// links the agents serve.
package signing

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MinKeyBytes is the shortest secret a [Key] accepts: 256 bits, the output size
// of SHA-256, below which HMAC-SHA256 is weaker than it needs to be.
const MinKeyBytes = 32

// Algorithm is the only JWT "alg" this package signs with or accepts.
const Algorithm = "HS256"

// Errors returned by [Signer.Verify]. Each wraps into a *[VerifyError] whose
// Reason is safe to show to the caller.
var (
	ErrMalformed  = errors.New("token is malformed")
	ErrAlgorithm  = errors.New("token algorithm is not " + Algorithm)
	ErrUnknownKey = errors.New("token was signed with an unknown key")
	ErrSignature  = errors.New("token signature is invalid")
	ErrExpired    = errors.New("token has expired")
	ErrAudience   = errors.New("token is for another audience")
	ErrClaims     = errors.New("token lacks a required claim")
	// ErrRevoked: the token was revoked. Verify never returns it; a server
	// that keeps a revocation list (internal/lib/revocation) does.
	ErrRevoked = errors.New("token was revoked")
)

// VerifyError is the error of a failed verification. Err is one of the Err*
// values of this package; Reason is a short sentence for the HTTP response.
type VerifyError struct {
	Err    error
	Reason string
}

// Error returns the Reason.
func (e *VerifyError) Error() string { return e.Reason }

// Unwrap returns the sentinel error, for errors.Is.
func (e *VerifyError) Unwrap() error { return e.Err }

// Key is one HMAC secret and its id. The id travels in the token header ("kid")
// and selects the key on verification; it is derived from the secret, so the
// same secret always has the same id and the secret itself is never revealed.
type Key struct {
	ID     string
	Secret []byte
}

// NewKey returns the key for secret, refusing secrets shorter than MinKeyBytes.
func NewKey(secret []byte) (Key, error) {
	if len(secret) < MinKeyBytes {
		return Key{}, fmt.Errorf("signing key is %d bytes; it must be at least %d bytes (use GenerateSecret or `openssl rand -hex 32`)", len(secret), MinKeyBytes)
	}
	sum := sha256.Sum256(append([]byte("agentura-kid:"), secret...))
	return Key{ID: hex.EncodeToString(sum[:6]), Secret: append([]byte(nil), secret...)}, nil
}

// GenerateSecret returns a fresh random secret of MinKeyBytes bytes, hex encoded
// so it can be kept in a text file or an environment variable.
func GenerateSecret() ([]byte, error) {
	raw := make([]byte, MinKeyBytes)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generate signing secret: %w", err)
	}
	return []byte(hex.EncodeToString(raw)), nil
}

// Claims are what a token grants: access by Owner to the file FileID in Area,
// until ExpiresAt.
type Claims struct {
	Owner     string
	FileID    string
	Area      string
	ExpiresAt time.Time
}

// Signer signs and verifies tokens for one audience (the public base URL of the
// agent, so that a token minted by one deployment is useless at another).
// It is safe for concurrent use.
type Signer struct {
	audience string
	keys     []Key
	byID     map[string]Key
	now      func() time.Time
}

// Option changes how NewSigner builds a Signer.
type Option func(*Signer)

// WithClock makes the Signer read the time from now, for issuing tokens and
// checking their expiry, instead of time.Now. Tests use it to issue tokens
// that have expired or will expire; nil keeps time.Now.
func WithClock(now func() time.Time) Option {
	return func(s *Signer) {
		if now != nil {
			s.now = now
		}
	}
}

// NewSigner returns a Signer whose first key signs and whose every key verifies.
func NewSigner(audience string, keys []Key, opts ...Option) (*Signer, error) {
	if audience == "" {
		return nil, errors.New("signing: audience must not be empty")
	}
	if len(keys) == 0 {
		return nil, errors.New("signing: at least one key is required")
	}
	keys = append([]Key(nil), keys...) // the caller's slice may change later
	s := &Signer{audience: audience, keys: keys, byID: make(map[string]Key, len(keys)), now: time.Now}
	for _, o := range opts {
		o(s)
	}
	for _, k := range keys {
		if len(k.Secret) < MinKeyBytes {
			return nil, fmt.Errorf("signing: key %q is %d bytes; at least %d are required", k.ID, len(k.Secret), MinKeyBytes)
		}
		if k.ID == "" {
			return nil, errors.New("signing: a key has no id; build keys with NewKey")
		}
		if prev, dup := s.byID[k.ID]; dup && !hmac.Equal(prev.Secret, k.Secret) {
			return nil, fmt.Errorf("signing: two different keys share the id %q", k.ID)
		}
		s.byID[k.ID] = k
	}
	return s, nil
}

// HasKey reports whether a key of this signer has the id kid.
func (s *Signer) HasKey(kid string) bool {
	_, ok := s.byID[kid]
	return ok
}

// KeyID returns the key id named in token's header, without verifying
// anything; ok is false when the header cannot be read.
func KeyID(token string) (kid string, ok bool) {
	header, _, found := strings.Cut(token, ".")
	if !found {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(header)
	if err != nil {
		return "", false
	}
	var h struct {
		Kid string `json:"kid"`
	}
	if json.Unmarshal(raw, &h) != nil || h.Kid == "" {
		return "", false
	}
	return h.Kid, true
}

// Audience returns the audience tokens are issued for.
func (s *Signer) Audience() string { return s.audience }

// urlClaims is the JWT body. Short names keep URLs short.
type urlClaims struct {
	FileID string `json:"fid"`
	Area   string `json:"area,omitempty"`
	jwt.RegisteredClaims
}

// Sign issues a token for c. ExpiresAt must lie in the future.
func (s *Signer) Sign(c Claims) (string, error) {
	if c.FileID == "" || c.Owner == "" {
		return "", errors.New("signing: a token needs an owner and a file id")
	}
	now := s.now()
	if !c.ExpiresAt.After(now) {
		return "", errors.New("signing: expiry must lie in the future")
	}
	key := s.keys[0]
	// A token id of 64 random bits: two URLs of one file minted in the
	// same second are two tokens, so revoking one leaves the other.
	var nonce [8]byte
	rand.Read(nonce[:])
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, urlClaims{
		FileID: c.FileID,
		Area:   c.Area,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   c.Owner,
			Audience:  jwt.ClaimStrings{s.audience},
			ExpiresAt: jwt.NewNumericDate(c.ExpiresAt),
			ID:        base64.RawURLEncoding.EncodeToString(nonce[:]),
		},
	})
	// URLs carry the token: leave out what verification does not use
	// ("typ", "iat"), since every byte is sent and parsed on each download.
	delete(tok.Header, "typ")
	tok.Header["kid"] = key.ID
	signed, err := tok.SignedString(key.Secret)
	if err != nil {
		return "", fmt.Errorf("signing: %w", err)
	}
	return signed, nil
}

// Verify checks token and returns its claims. A failure is a *VerifyError.
func (s *Signer) Verify(token string) (Claims, error) {
	var uc urlClaims
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{Algorithm}),
		jwt.WithAudience(s.audience),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(s.now),
		jwt.WithStrictDecoding(),
	)
	var keyErr error
	_, err := parser.ParseWithClaims(token, &uc, func(t *jwt.Token) (any, error) {
		// RFC 7515 §4.1.11: extensions named critical (crit) must be
		// understood; Sign writes none and none is understood here.
		if _, ok := t.Header["crit"]; ok {
			keyErr = errCrit
			return nil, errCrit
		}
		kid, _ := t.Header["kid"].(string)
		k, ok := s.byID[kid]
		if !ok {
			keyErr = ErrUnknownKey
			return nil, ErrUnknownKey
		}
		return k.Secret, nil
	})
	if err != nil {
		return Claims{}, classify(err, keyErr)
	}
	if uc.FileID == "" || uc.Subject == "" {
		return Claims{}, &VerifyError{Err: ErrClaims, Reason: "token does not name a file and an owner"}
	}
	c := Claims{Owner: uc.Subject, FileID: uc.FileID, Area: uc.Area}
	if uc.ExpiresAt != nil {
		c.ExpiresAt = uc.ExpiresAt.Time
	}
	return c, nil
}

// errCrit marks a token whose header names critical extensions (crit).
var errCrit = errors.New("crit")

func classify(err, keyErr error) error {
	switch {
	case keyErr == errCrit:
		return &VerifyError{Err: ErrMalformed, Reason: "token header names critical extensions (crit) this server does not understand"}
	case keyErr != nil:
		return &VerifyError{Err: ErrUnknownKey, Reason: "token was signed with a key this server does not have (rotated out, or another deployment's)"}
	case errors.Is(err, jwt.ErrTokenUnverifiable),
		// golang-jwt reports a disallowed "alg" as an invalid signature too
		// ("signing method X is invalid").
		errors.Is(err, jwt.ErrTokenSignatureInvalid) && strings.Contains(err.Error(), "signing method"):
		return &VerifyError{Err: ErrAlgorithm, Reason: "token algorithm is not allowed; only " + Algorithm + " is accepted"}
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return &VerifyError{Err: ErrSignature, Reason: "token signature is invalid (tampered or forged)"}
	case errors.Is(err, jwt.ErrTokenExpired):
		return &VerifyError{Err: ErrExpired, Reason: "token has expired; ask the agent for a fresh download URL"}
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return &VerifyError{Err: ErrClaims, Reason: "token is not valid yet (its nbf or iat lies in the future); check that the clocks of the signer and this server agree"}
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return &VerifyError{Err: ErrAudience, Reason: "token was issued for another server"}
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		// golang-jwt names the claim only in the message ("aud claim is required").
		if strings.Contains(err.Error(), "aud claim") {
			return &VerifyError{Err: ErrClaims, Reason: "token names no audience"}
		}
		return &VerifyError{Err: ErrClaims, Reason: "token has no expiry"}
	default:
		return &VerifyError{Err: ErrMalformed, Reason: "token is malformed"}
	}
}

// TokenID names a token for revocation: 32 hex digits of the SHA-256 of the
// whole token. Tokens carry no id of their own; this one works for every
// token ever issued, and a token is one string only (strict base64, an HMAC
// over header and body), so a revoked token cannot be re-spelled into one
// that passes.
func TokenID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:16])
}
