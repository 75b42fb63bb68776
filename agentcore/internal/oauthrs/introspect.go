package oauthrs

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/agentura/agentura/internal/lib/boundedmap"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// introspectCacheTTL is how long an introspection answer is reused: a
// revoked token stops working at most this long after its revocation.
const introspectCacheTTL = 30 * time.Second

// scopeList reads a scope claim written either way providers write it: a
// space-separated string (RFC 9068 "scope", Entra's "scp") or an array
// (Hydra's and Okta's "scp").
type scopeList []string

// UnmarshalJSON accepts a string or an array of strings.
func (s *scopeList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = strings.Fields(one)
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("a scope claim is a string or an array of strings: %w", err)
	}
	*s = many
	return nil
}

// introspector checks opaque tokens at the issuer's introspection endpoint
// (RFC 7662), authenticating with the agent's own client credentials when
// it has them, and keeps each answer introspectCacheTTL. While the
// endpoint fails, a token it has not answered for is answered 503 at once
// for retry after each failure, so that an endpoint that is down is asked
// once per retry however many requests come.
type introspector struct {
	o                     *Resource // its issuer, client, log, issuerRetry and accept
	url, clientID, secret string
	cache                 boundedmap.Map[[32]byte, introspected]

	mu       sync.Mutex
	failedAt time.Time // when the endpoint last failed; zero: it answers
	since    time.Time // when it began failing
	lastErr  error
}

// failing reports whether the endpoint's last answer was a failure no
// older than within, and since when it fails. Only tokens ask it: with
// none for a while nothing is known of it, and it is not said to fail.
func (in *introspector) failing(within time.Duration) (since time.Time, failing bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.since, !in.failedAt.IsZero() && time.Since(in.failedAt) < within
}

// asked records how a request to the endpoint went, logging a change.
func (in *introspector) asked(err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if err == nil {
		if !in.failedAt.IsZero() {
			in.o.log.Info("the identity provider's introspection endpoint answers again", "url", in.url)
		}
		in.failedAt, in.since, in.lastErr = time.Time{}, time.Time{}, nil
		return
	}
	if in.lastErr == nil || in.lastErr.Error() != err.Error() {
		in.o.log.Warn("the identity provider's introspection endpoint fails: opaque tokens are answered 503 until it answers", "url", in.url, "err", err)
	}
	now := time.Now()
	if in.failedAt.IsZero() {
		in.since = now
	}
	in.failedAt, in.lastErr = now, err
}

// introspected is one cached answer.
type introspected struct {
	info  *auth.TokenInfo
	err   error
	until time.Time
}

// introspection is the answer of an introspection endpoint (RFC 7662 §2.2).
type introspection struct {
	Active    bool             `json:"active"`
	Scope     scopeList        `json:"scope"`
	ClientID  string           `json:"client_id"`
	Sub       string           `json:"sub"`
	Exp       int64            `json:"exp"`
	Nbf       int64            `json:"nbf"`
	Aud       jwt.ClaimStrings `json:"aud"`
	Iss       string           `json:"iss"`
	TokenType string           `json:"token_type"`
}

// verify introspects token and hands an active one's claims to accept.
func (in *introspector) verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	key := sha256.Sum256([]byte(token))
	if c, ok := in.cache.Get(key); ok && time.Now().Before(c.until) {
		return c.info, c.err
	}
	in.mu.Lock()
	failedAt, lastErr := in.failedAt, in.lastErr
	in.mu.Unlock()
	if !failedAt.IsZero() && time.Since(failedAt) < in.o.t.retry {
		return nil, unavailable(lastErr)
	}
	ans, err := in.ask(ctx, token)
	if ctx.Err() == nil { // a caller that went away says nothing of the endpoint
		in.asked(err)
	}
	if err != nil {
		return nil, unavailable(err) // not cached: the endpoint failed, not the token
	}
	var info *auth.TokenInfo
	now := time.Now()
	until := now.Add(introspectCacheTTL)
	switch {
	case !ans.Active:
		err = fmt.Errorf("%w: the identity provider says the token is not active (expired, revoked or unknown)", auth.ErrInvalidToken)
	case ans.Iss != "" && ans.Iss != in.o.issuer:
		err = fmt.Errorf("%w: the token's iss %q is not this agent's issuer %s (AGENT_OAUTH_ISSUER)", auth.ErrInvalidToken, ans.Iss, in.o.issuer)
	case ans.Nbf != 0 && now.Add(tokenLeeway).Before(time.Unix(ans.Nbf, 0)):
		err = fmt.Errorf("%w: the token is not valid yet", auth.ErrInvalidToken)
	default:
		exp := until
		if ans.Exp != 0 {
			exp = time.Unix(ans.Exp, 0)
			if exp.Before(until) {
				until = exp
			}
		}
		info, err = in.o.accept(ans.Sub, ans.Aud, ans.Scope, exp, ans.ClientID)
	}
	in.cache.Put(key, introspected{info: info, err: err, until: until})
	return info, err
}

// ask posts token to the introspection endpoint.
func (in *introspector) ask(ctx context.Context, token string) (*introspection, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.url, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("AGENT_OAUTH_INTROSPECTION_URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if in.clientID != "" {
		req.SetBasicAuth(url.QueryEscape(in.clientID), url.QueryEscape(in.secret)) // RFC 6749 §2.3.1
	}
	resp, err := in.o.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("introspection at %s: %w", in.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("introspection at %s answered %s; if 401 or 403, check AGENT_OAUTH_CLIENT_ID and AGENT_OAUTH_CLIENT_SECRET", in.url, resp.Status)
	}
	var ans introspection
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		return nil, fmt.Errorf("introspection at %s: not an answer of RFC 7662: %w", in.url, err)
	}
	return &ans, nil
}
