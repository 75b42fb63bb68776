package httpguard

import (
	"net/http"
	"strconv"
	"sync/atomic"

	"crypto/rand"
)

// requestIDPrefix is random per process; a counter follows it, so request
// ids are unique without reading random bytes per request.
var (
	requestIDPrefix = rand.Text()[:12] // 60 random bits
	requestCounter  atomic.Uint64
)

// RequestID is the caller's X-Request-Id (up to 64 bytes), or a new one.
func RequestID(r *http.Request) string {
	if v := r.Header["X-Request-Id"]; len(v) > 0 && v[0] != "" && len(v[0]) <= 64 {
		return v[0]
	}
	return requestIDPrefix + strconv.FormatUint(requestCounter.Add(1), 16)
}
