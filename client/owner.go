package client

import (
	"reflect"

	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An agent serving a caller without a session (MCP 2026-07-28, or a
// stateless agent) and without authentication returns an owner handle in
// each tool result's _meta (transfer.MetaOwner): its resources/list shows
// the files produced under that handle. The middleware keeps the newest
// handle of its agent and sends it in the _meta of every later request, as
// a session would be kept, so that the host lists its own outputs.

// carryOwner adds the kept owner handle to req's _meta, unless req names
// one of its own or has no params to carry it (a request of an older
// revision without params, which a session scopes anyway).
func (m *Middleware) carryOwner(req mcp.Request) {
	m.mu.Lock()
	handle := m.owner
	m.mu.Unlock()
	if handle == "" || req == nil {
		return
	}
	p := req.GetParams()
	if v := reflect.ValueOf(p); !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return
	}
	meta := p.GetMeta()
	if _, own := meta[transfer.MetaOwner]; own {
		return
	}
	if meta == nil {
		meta = map[string]any{}
	}
	meta[transfer.MetaOwner] = handle
	p.SetMeta(meta)
}

// keepOwner keeps the owner handle a result carries.
func (m *Middleware) keepOwner(res mcp.Result) {
	if h := ownerHandle(res); h != "" {
		m.mu.Lock()
		m.owner = h
		m.mu.Unlock()
	}
}

// ownerHandle is the owner handle res carries, "" for none.
func ownerHandle(res mcp.Result) string {
	if v := reflect.ValueOf(res); !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return ""
	}
	h, _ := res.GetMeta()[transfer.MetaOwner].(string)
	return h
}
