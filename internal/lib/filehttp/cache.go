package filehttp

import (
	"time"

	"github.com/agentura/agentura/internal/lib/boundedmap"
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
type tokenCache struct {
	boundedmap.Map[string, signing.Claims]
}

func newTokenCache() *tokenCache {
	return &tokenCache{boundedmap.Map[string, signing.Claims]{Limit: tokenCacheSize}}
}

// valid returns the claims of token if it verified before and has not expired.
func (c *tokenCache) valid(token string, now time.Time) (signing.Claims, bool) {
	claims, ok := c.Get(token)
	if ok && !claims.ExpiresAt.After(now) {
		c.Forget(token)
		return signing.Claims{}, false
	}
	return claims, ok
}
