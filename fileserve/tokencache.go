package fileserve

import (
	"sync"
	"time"

	"github.com/agentura/agentura/signing"
)

// tokenCacheSize bounds the verified tokens kept in memory.
const tokenCacheSize = 1024

// tokenCache remembers tokens that verified, until they expire, so that the
// requests a single download often takes (HEAD then GET, a PDF viewer's or a
// download manager's Range requests, retries) pay for signature checking
// once. Only successful verifications are kept, keyed by the whole token
// string, and expiry is checked again on every hit. Keys of a Signer never
// change, so a kept token cannot become invalid other than by expiring.
// The zero value is ready to use.
type tokenCache struct {
	mu sync.Mutex
	m  map[string]signing.Claims
}

func (c *tokenCache) get(token string, now time.Time) (signing.Claims, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	claims, ok := c.m[token]
	if ok && !claims.ExpiresAt.After(now) {
		delete(c.m, token)
		return signing.Claims{}, false
	}
	return claims, ok
}

func (c *tokenCache) put(token string, claims signing.Claims) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= tokenCacheSize {
		c.m = make(map[string]signing.Claims) // crude but bounded
	}
	c.m[token] = claims
}
