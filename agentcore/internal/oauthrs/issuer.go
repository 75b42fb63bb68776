package oauthrs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/MicahParks/jwkset"

	"github.com/agentura/agentura/internal/lib/fault"
	"github.com/agentura/agentura/internal/lib/issuermeta"
	"github.com/agentura/agentura/internal/lib/mcptrace"
)

// timings are how often and how long the agent reads its issuer; New sets
// the constants of resource.go, the package's tests shorter ones.
type timings struct {
	timeout    time.Duration // issuerTimeout
	retry      time.Duration // issuerRetry
	recheck    time.Duration // issuerRecheck
	refresh    time.Duration // jwksRefreshInterval
	unknownKID time.Duration // jwksUnknownKIDEvery
	readyWait  time.Duration // readyWait
}

// unavailableWords is what a caller whose token could not be checked is
// told: no URL or address of the provider (the log has them).
const unavailableWords = "the identity provider cannot be reached (or answered what the agent cannot use), so the bearer token " +
	"could not be checked; it is not refused: send it again in a few seconds"

// unavailable is a token check that failed because the issuer could not be
// read: a fault (fault.IdentityProviderUnavailable, told in words, 503 with
// Retry-After) wrapping ErrIssuerUnavailable and err, the details for the
// log.
func unavailable(err error) error {
	return &fault.Fault{Reason: fault.IdentityProviderUnavailable, Words: unavailableWords,
		Err: fmt.Errorf("%w: %w", ErrIssuerUnavailable, err)}
}

// startReadLocked starts a read of the issuer unless one runs, and returns
// a channel closed when it ends. A read takes the metadata until they are
// read, then the JWKS (unless the issuer publishes none); it runs apart
// from the request that wanted it, bounded by 2×timeout, so that a request
// that stops waiting (after timeout) leaves it to finish for the next.
// o.mu is held.
func (o *Resource) startReadLocked() chan struct{} {
	if o.reading != nil {
		return o.reading
	}
	done := make(chan struct{})
	o.reading = done
	meta := o.meta
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(o.ctx, 2*o.t.timeout)
		defer cancel()
		meta, err := o.read(ctx, meta)
		o.mu.Lock()
		defer o.mu.Unlock()
		o.reading = nil
		if o.ctx.Err() != nil {
			return // closed: nothing to tell
		}
		o.tried = time.Now()
		if meta != nil && o.meta == nil {
			o.meta = meta
		}
		if err != nil {
			if o.lastErr == nil || o.lastErr.Error() != err.Error() {
				o.log.Warn("cannot read the identity provider: tokens of keys read before still verify, others are answered 503 until it can be read",
					"issuer", o.issuer, "err", err)
			}
			o.lastErr = err
			return
		}
		if o.lastErr != nil {
			o.log.Info("the identity provider can be read again", "issuer", o.issuer)
		}
		o.lastErr, o.lastOK = nil, o.tried
		o.usable = true
	}()
	return done
}

// read reads the issuer's metadata (unless meta holds them) and its JWKS
// into o.store. The metadata must name this very issuer, and its endpoints
// be https (or loopback http): issuermeta.Read. It returns the metadata
// when they were read, even if the keys were not.
func (o *Resource) read(ctx context.Context, meta *issuermeta.Meta) (*issuermeta.Meta, error) {
	if meta == nil {
		m, err := issuermeta.Read(ctx, o.issuer, o.client)
		if err != nil {
			return nil, fmt.Errorf("%w (AGENT_OAUTH_ISSUER)", err)
		}
		meta = m
	}
	if meta.JWKSURI == "" {
		if o.introspect == nil {
			return meta, fmt.Errorf("issuer %s publishes no jwks_uri; set AGENT_OAUTH_INTROSPECTION_URL to check its tokens by introspection", o.issuer)
		}
		return meta, nil
	}
	if err := o.readKeys(ctx, meta.JWKSURI); err != nil {
		return meta, fmt.Errorf("read the keys of issuer %s at %s: %w", o.issuer, meta.JWKSURI, err)
	}
	return meta, nil
}

// readKeys reads the JWKS at uri and makes it the key set tokens are
// checked with. A set that cannot be read (no answer, not 200, not a key
// set, a key that is not one) leaves the keys read before in use; keys of a
// type no token here can use (symmetric ones, unknown kinds) are left out.
func (o *Resource) readKeys(ctx context.Context, uri string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := o.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("answered %s", resp.Status)
	}
	var set jwkset.JWKSMarshal
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		return fmt.Errorf("not a key set: %w", err)
	}
	keys := make([]jwkset.JWK, 0, len(set.Keys))
	for _, m := range set.Keys {
		if m.KTY == jwkset.KtyOct {
			continue // a shared secret: never a key of an access token here (asymmetricAlgs)
		}
		k, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{}, jwkset.JWKValidateOptions{})
		if errors.Is(err, jwkset.ErrUnsupportedKey) {
			continue
		}
		if err != nil {
			return fmt.Errorf("key %q: %w", mcptrace.Truncate(m.KID, 80), err)
		}
		keys = append(keys, k)
	}
	return o.store.KeyReplaceAll(ctx, keys)
}

// await waits for done, at most max and no longer than ctx; it reports
// whether done was closed.
func await(ctx context.Context, done <-chan struct{}, max time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, max)
	defer cancel()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// refresher reads the JWKS again every refresh interval so that a key the
// issuer retired stops verifying without a restart, and every recheck
// interval while the issuer cannot be read, so that its return is seen
// without waiting for a request. It runs from the first use to Close.
func (o *Resource) refresher() {
	tick := time.NewTicker(o.t.recheck)
	defer tick.Stop()
	for {
		select {
		case <-o.ctx.Done():
			return
		case <-tick.C:
		}
		o.mu.Lock()
		if (o.lastErr != nil || !o.usable) && time.Since(o.tried) >= o.t.retry || time.Since(o.lastOK) >= o.t.refresh {
			o.startReadLocked()
		}
		o.mu.Unlock()
	}
}

// begin starts the refresher on first use.
func (o *Resource) begin() { o.once.Do(func() { go o.refresher() }) }

// IssuerMeta returns the issuer's metadata, reading them on first use and,
// while that fails, again at most every issuerRetry (the other callers
// meanwhile get the error at once); a caller waits for a read
// issuerTimeout at the most. An error wraps ErrIssuerUnavailable.
func (o *Resource) IssuerMeta(ctx context.Context) (*issuermeta.Meta, error) {
	o.begin()
	for waited := false; ; waited = true {
		o.mu.Lock()
		switch {
		case o.meta != nil:
			meta := o.meta
			o.mu.Unlock()
			return meta, nil
		case waited || o.lastErr != nil && (o.reading != nil || time.Since(o.tried) < o.t.retry):
			err := o.lastErr
			o.mu.Unlock()
			return nil, unavailable(cmp.Or(err, fmt.Errorf("issuer %s was not read", o.issuer)))
		}
		if err := o.awaitReadLocked(ctx); err != nil {
			return nil, err
		}
	}
}

// awaitReadLocked waits for the read of the issuer that runs, or one it
// starts, issuerTimeout at the most: nil when the read ended, ctx's error
// when the request ended first, else the 503 of an issuer that did not
// answer in time. o.mu is held on entry, and released.
func (o *Resource) awaitReadLocked(ctx context.Context) error {
	done := o.startReadLocked()
	o.mu.Unlock()
	if await(ctx, done, o.t.timeout) {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return unavailable(fmt.Errorf("issuer %s did not answer within %s", o.issuer, o.t.timeout))
}

// degraded is the /readyz state of an issuer that cannot be read while the
// keys read before still verify: ops.Readiness reads Degraded and answers
// 200, naming the check under "degraded".
type degraded struct{ words string }

func (d degraded) Error() string { return d.words }

// Degraded marks the state as degraded rather than not ready.
func (degraded) Degraded() bool { return true }

// Ready is the /readyz check of the identity provider. It reads the issuer
// again when its last read is older than issuerRecheck (issuerRetry while
// it fails), waiting for that read readyWait at the most, and answers from
// the state: nil while the issuer can be read; an error Degraded says is
// degraded when it cannot but the keys read before still verify; a plain
// error when no token can be checked (never read, or publishing no keys
// the agent can use). The text names no URL or address: the log has them.
func (o *Resource) Ready(ctx context.Context) error {
	o.begin()
	o.mu.Lock()
	again := o.t.recheck
	if o.lastErr != nil || !o.usable {
		again = o.t.retry
	}
	done := o.reading
	if done == nil && (o.tried.IsZero() || time.Since(o.tried) >= again) {
		done = o.startReadLocked()
	}
	o.mu.Unlock()
	if done != nil {
		await(ctx, done, o.t.readyWait)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case !o.usable && o.tried.IsZero():
		return fmt.Errorf("the identity provider (AGENT_OAUTH_ISSUER) has not answered yet; no bearer token can be checked until it does (waiting at most %s a request)", o.t.timeout)
	case !o.usable:
		return errors.New("the identity provider (AGENT_OAUTH_ISSUER) cannot be reached, or its metadata or keys cannot be used, " +
			"so no bearer token can be checked (answered 503); the agent's log has the error")
	case o.lastErr != nil:
		return degraded{"degraded: the identity provider (AGENT_OAUTH_ISSUER) cannot be reached since the keys were last read at " +
			o.lastOK.UTC().Format(time.RFC3339) + "; tokens of those keys still verify, tokens of a key the agent has not read are answered 503 " +
			"until it can be read (the agent's log has the error)"}
	}
	if o.introspect != nil {
		if since, failing := o.introspect.failing(o.t.recheck); failing {
			return degraded{"degraded: the identity provider's introspection endpoint (AGENT_OAUTH_INTROSPECTION_URL) has failed since " +
				since.UTC().Format(time.RFC3339) + "; opaque tokens it has not answered for are answered 503 (the agent's log has the error)"}
		}
	}
	return nil
}
