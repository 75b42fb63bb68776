package agentcore

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
)

// callInputs remembers the inputs a call resolved: the same input listed
// many times is resolved (written, fetched) once, and the bytes of all of
// them are counted against the call's budget, so a 100 KiB request cannot
// make 300 copies of one staged file.
type callInputs struct {
	mu    sync.Mutex
	seen  map[[sha256.Size]byte]*InputFile
	bytes int64
}

// resolve returns the input already resolved for (name, content), or
// resolves it with do and counts it against limit.
func (ci *callInputs) resolve(name, content string, limit int64, do func() (*InputFile, error)) (*InputFile, error) {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write([]byte(content))
	key := [sha256.Size]byte(h.Sum(nil))
	ci.mu.Lock()
	if in, ok := ci.seen[key]; ok {
		ci.mu.Unlock()
		cp := *in
		return &cp, nil
	}
	ci.mu.Unlock()
	in, err := do()
	if err != nil {
		return nil, err
	}
	ci.mu.Lock()
	defer ci.mu.Unlock()
	if limit > 0 && ci.bytes+in.Size > limit {
		os.Remove(in.Path)
		return nil, &ResolveError{Name: in.Name, Err: fmt.Errorf("%w: with this file the inputs come to %d bytes, over the %d allowed for one call (AGENT_MAX_CALL_INPUT_BYTES); send fewer or smaller files per call, or split the work over several calls",
			ErrCallInputsTooLarge, ci.bytes+in.Size, limit)}
	}
	ci.bytes += in.Size
	if ci.seen == nil {
		ci.seen = map[[sha256.Size]byte]*InputFile{}
	}
	ci.seen[key] = in
	cp := *in
	return &cp, nil
}
