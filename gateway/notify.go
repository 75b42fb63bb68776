package gateway

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/filetype"
)

// transferEvery is how often a transfer's progress is reported at most.
const transferEvery = 250 * time.Millisecond

// callProgress is the progress of one host call: the agent's notifications
// (sent under the gateway's own token id) and the gateway's transfers go
// to the host under the host's token. MCP wants each notification's
// progress to grow, and two sources count differently, so the host gets a
// step count with the real figures in the message.
type callProgress struct {
	ctx     context.Context
	session *mcp.ServerSession
	token   any    // the host's progress token; nil: the host wants none
	id      string // the token the agent is given

	mu       sync.Mutex
	step     float64
	lastSent time.Time
}

// send reports msg to the host.
func (p *callProgress) send(msg string, force bool) {
	if p == nil || p.token == nil || p.session == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !force && time.Since(p.lastSent) < transferEvery {
		return
	}
	p.step++
	p.lastSent = time.Now()
	_ = p.session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.step, Message: msg})
}

// transfer is the client.Config.Progress of the call.
func (p *callProgress) transfer(t client.Progress) {
	if p == nil || p.token == nil {
		return
	}
	verb := "uploading"
	if t.Direction == client.Download {
		verb = "downloading"
	}
	msg := fmt.Sprintf("%s %s: %s", verb, t.Name, filetype.Size(t.Done))
	if t.Total > 0 {
		msg += " of " + filetype.Size(t.Total)
	}
	p.send(msg, t.Total >= 0 && t.Done == t.Total)
}

// progressRoutes maps the token ids given to agents to the calls they
// belong to.
type progressRoutes struct {
	next  atomic.Int64
	mu    sync.Mutex
	calls map[string]*callProgress
}

// start begins the progress of a call whose host asked for it with token.
func (r *progressRoutes) start(ctx context.Context, ss *mcp.ServerSession, token any) *callProgress {
	p := &callProgress{ctx: ctx, session: ss, token: token, id: fmt.Sprintf("agentura-gateway-%d", r.next.Add(1))}
	if token != nil {
		r.mu.Lock()
		r.calls[p.id] = p
		r.mu.Unlock()
	}
	return p
}

func (r *progressRoutes) end(p *callProgress) {
	r.mu.Lock()
	delete(r.calls, p.id)
	r.mu.Unlock()
}

func (r *progressRoutes) get(id any) *callProgress {
	s, _ := id.(string)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[s]
}

// agentProgress forwards an agent's progress to the host call it belongs to.
func (g *Gateway) agentProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	pp := req.Params
	p := g.calls.get(pp.ProgressToken)
	if p == nil {
		return
	}
	msg := scrub(pp.Message)
	if pp.Total > 0 {
		msg = fmt.Sprintf("%s (%g of %g)", msg, pp.Progress, pp.Total)
	}
	p.send(msg, true)
}

// forwardLog passes an agent's log message to every host session, named
// after the agent; each session's own level (logging/setLevel) filters it.
func (g *Gateway) forwardLog(ctx context.Context, a *agent, lp *mcp.LoggingMessageParams) {
	logger := a.label()
	if lp.Logger != "" {
		logger += "/" + lp.Logger
	}
	for ss := range g.server.Sessions() {
		_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: lp.Level, Logger: logger, Data: scrubValue(lp.Data)})
	}
}
