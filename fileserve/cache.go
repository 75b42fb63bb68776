package fileserve

import (
	"sync"
	"time"

	"github.com/agentura/agentura/signing"
)

// boundedMap is a map safe for concurrent use that never holds more than
// limit entries: when full, it starts over empty, which is crude but keeps
// memory bounded and refills from the source. The zero value is ready to use
// with limit set.
type boundedMap[K comparable, V any] struct {
	limit int
	mu    sync.Mutex
	m     map[K]V
}

func (b *boundedMap[K, V]) get(k K) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[k]
	return v, ok
}

func (b *boundedMap[K, V]) put(k K, v V) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil || len(b.m) >= b.limit {
		b.m = make(map[K]V)
	}
	b.m[k] = v
}

func (b *boundedMap[K, V]) forget(k K) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, k)
}

// len returns the number of entries.
func (b *boundedMap[K, V]) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

// metaCacheSize bounds the metadata kept in memory.
const metaCacheSize = 4096

// newMetaCache keeps the metadata of recently opened files, saving a file
// read per download. Metadata of an id never changes, so an entry is never
// stale; whether the file still exists is decided by opening its content.
func newMetaCache() *boundedMap[string, Meta] {
	return &boundedMap[string, Meta]{limit: metaCacheSize}
}

// tokenCacheSize bounds the verified tokens kept in memory.
const tokenCacheSize = 1024

// tokenCache remembers tokens that verified, until they expire, so that the
// requests a single download often takes (HEAD then GET, a PDF viewer's or a
// download manager's Range requests, retries) pay for signature checking
// once. Only successful verifications are kept, keyed by the whole token
// string, and expiry is checked again on every hit. Keys of a Signer never
// change, so a kept token cannot become invalid other than by expiring.
type tokenCache struct {
	boundedMap[string, signing.Claims]
}

func newTokenCache() *tokenCache {
	return &tokenCache{boundedMap[string, signing.Claims]{limit: tokenCacheSize}}
}

// valid returns the claims of token if it verified before and has not expired.
func (c *tokenCache) valid(token string, now time.Time) (signing.Claims, bool) {
	claims, ok := c.get(token)
	if ok && !claims.ExpiresAt.After(now) {
		c.forget(token)
		return signing.Claims{}, false
	}
	return claims, ok
}
