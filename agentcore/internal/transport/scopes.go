package transport

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/agentura/agentura/fileserve"
)

// Without authentication every caller is the one store owner
// (calls.AnonymousOwner), so the store alone cannot tell whose a produced
// file is. Scopes keeps which files each anonymous caller's scope (its MCP
// session, or its owner handle: the MCP binding decides) produced: a
// produced file's URI resolves only in the scope it was produced in, and
// resources/list shows a scope its own files.

// ScopeRecordKind is the kind of the records (fileserve.RecordStore) that
// place a produced file in a scope: owner = the scope, name = the file id.
const ScopeRecordKind = "mcp-scopes"

// Scopes keeps which files each scope produced: in the store's records
// when it has them (every replica sees them; they expire with the outputs),
// else in this process's memory.
type Scopes struct {
	records fileserve.RecordStore // nil: memory
	mem     producedResources
}

// NewScopes keeps scopes in rs; nil: in this process's memory.
func NewScopes(rs fileserve.RecordStore) *Scopes { return &Scopes{records: rs} }

// Add places files in scope.
func (o *Scopes) Add(ctx context.Context, scope string, files []fileserve.Meta, ttl time.Duration) error {
	if o.records == nil {
		o.mem.record(scope, files, ttl, time.Now())
		return nil
	}
	for _, f := range files {
		if err := o.records.PutRecord(ctx, ScopeRecordKind, scope, f.ID, nil); err != nil {
			return err
		}
	}
	return nil
}

// IDs are the ids of the files placed in scope, some perhaps swept since.
func (o *Scopes) IDs(ctx context.Context, scope string) ([]string, error) {
	if o.records == nil {
		var out []string
		for _, m := range o.mem.of(scope) {
			out = append(out, m.ID)
		}
		return out, nil
	}
	infos, err := o.records.Records(ctx, ScopeRecordKind, scope)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(infos))
	for _, in := range infos {
		out = append(out, in.Name)
	}
	return out, nil
}

// has reports whether the file id was placed in scope.
func (o *Scopes) has(ctx context.Context, scope, id string) (bool, error) {
	if o.records == nil {
		return slices.ContainsFunc(o.mem.of(scope), func(m fileserve.Meta) bool { return m.ID == id }), nil
	}
	_, err := o.records.GetRecord(ctx, ScopeRecordKind, scope, id)
	if errors.Is(err, fileserve.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// producedResources is the memory of Scopes: which files each scope
// produced, for a store without records.
type producedResources struct {
	mu     sync.Mutex
	scopes map[string][]fileserve.Meta
}

// record notes that scope produced files, and forgets files past their
// lifetime (ttl) in every scope, so that the map does not outlive them.
func (p *producedResources) record(scope string, files []fileserve.Meta, ttl time.Duration, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.scopes == nil {
		p.scopes = map[string][]fileserve.Meta{}
	}
	p.scopes[scope] = append(p.scopes[scope], files...)
	for id, ms := range p.scopes {
		ms = slices.DeleteFunc(ms, func(m fileserve.Meta) bool { return Expired(m, ttl, now) })
		if len(ms) == 0 {
			delete(p.scopes, id)
		} else {
			p.scopes[id] = ms
		}
	}
}

func (p *producedResources) of(scope string) []fileserve.Meta {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.scopes[scope])
}

// Expired reports whether m is past ttl at now.
func Expired(m fileserve.Meta, ttl time.Duration, now time.Time) bool {
	return ttl > 0 && !m.Created.Add(ttl).After(now)
}
