package fileserve

import "github.com/agentura/agentura/internal/lib/boundedmap"

// metaCacheSize bounds the metadata kept in memory.
const metaCacheSize = 4096

// newMetaCache keeps the metadata of recently opened files, saving a file
// read per download. Metadata of an id never changes, so an entry is never
// stale; whether the file still exists is decided by opening its content.
func newMetaCache() *boundedmap.Map[string, Meta] {
	return &boundedmap.Map[string, Meta]{Limit: metaCacheSize}
}
