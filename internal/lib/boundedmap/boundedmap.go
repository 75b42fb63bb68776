// Package boundedmap is a map safe for concurrent use that never holds more
// than a set number of entries. fileserve keeps file metadata in one and
// internal/lib/filehttp verified download tokens.
package boundedmap

import "sync"

// Map holds at most Limit entries: when full, it starts over empty, which is
// crude but keeps memory bounded and refills from the source. The zero value
// is ready to use once Limit is set.
type Map[K comparable, V any] struct {
	// Limit is the most entries the map holds.
	Limit int

	mu sync.Mutex
	m  map[K]V
}

// Get returns the value kept for k.
func (b *Map[K, V]) Get(k K) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[k]
	return v, ok
}

// Put keeps v for k, emptying the map first when it is full.
func (b *Map[K, V]) Put(k K, v V) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil || len(b.m) >= b.Limit {
		b.m = make(map[K]V)
	}
	b.m[k] = v
}

// Forget removes k.
func (b *Map[K, V]) Forget(k K) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, k)
}

// Len returns the number of entries.
func (b *Map[K, V]) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}
