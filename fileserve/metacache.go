package fileserve

import "sync"

// metaCacheSize bounds the metadata kept in memory.
const metaCacheSize = 4096

// metaCache keeps the metadata of recently opened files, saving a file read
// per download. Metadata of an id never changes, so an entry is never stale;
// whether the file still exists is decided by opening its content.
// The zero value is ready to use.
type metaCache struct {
	mu sync.Mutex
	m  map[string]Meta
}

func (c *metaCache) get(id string) (Meta, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.m[id]
	return m, ok
}

func (c *metaCache) put(m Meta) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= metaCacheSize {
		c.m = make(map[string]Meta) // crude but bounded; refills from disk
	}
	c.m[m.ID] = m
}

func (c *metaCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}
