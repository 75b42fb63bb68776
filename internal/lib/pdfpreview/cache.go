package pdfpreview

import "sync"

// cache keeps pictures and failures by key, at most limit bytes of them;
// the oldest go first.
type cache struct {
	mu    sync.Mutex
	limit int64
	size  int64
	items map[string]entry
	order []string // keys, oldest first
}

type entry struct {
	png []byte
	err error
}

func newCache(limit int64) *cache { return &cache{limit: limit, items: map[string]entry{}} }

func (c *cache) get(key string) ([]byte, error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	return e.png, e.err, ok
}

// cost is what an entry counts against the limit: its picture, or a small
// amount for a failure.
func cost(e entry) int64 { return int64(len(e.png)) + 256 }

func (c *cache) put(key string, png []byte, err error) {
	e := entry{png, err}
	if cost(e) > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; ok {
		return
	}
	for c.size+cost(e) > c.limit && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.size -= cost(c.items[old])
		delete(c.items, old)
	}
	c.items[key] = e
	c.order = append(c.order, key)
	c.size += cost(e)
}
