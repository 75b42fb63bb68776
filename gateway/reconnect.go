package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An agent's life cycle as the gateway sees it. The gateway starts with the
// agents it can reach and keeps trying the others in the background; once
// one answers, its tools are listed and the host told
// (notifications/tools/list_changed). A session found lost — the agent
// restarted and no longer knows it ("session not found"), the connection
// broke, a stdio agent exited, a 2026-07-28 agent's subscriptions/listen
// stream ended — is dropped and a new one opened, at once and then with a
// growing pause while the agent stays away. The tools of an agent that is
// away stay listed: a call to one is a tool error that says so.
//
// What is tried again, once, after reconnecting:
//   - tools/list: it changes nothing;
//   - the download of a produced file (the client package: a GET of a
//     signed URL, kept only when whole);
//   - tools/call, only when it provably never reached the agent: no HTTP
//     request was made (the session was found closing first), the
//     connection was refused (no byte of the request was written), or the
//     agent answered 404 to a request naming a session, which the MCP
//     transport defines as "this session does not exist" and which a
//     server answers before it reads the message. A call that failed in
//     any other way (the connection dropped after the request went out, a
//     timeout, a stdio agent that died) may have run, and is not repeated.

// Timing of the reconnection.
const (
	// connectTimeout bounds one attempt to open a session.
	connectTimeout = 20 * time.Second
	// retryFirst is the pause before the background's first attempt at an
	// agent that was not reached; it doubles up to retryMax.
	retryFirst = time.Second
	retryMax   = 10 * time.Second
)

// dialing is a connection attempt under way; those who need the session
// meanwhile wait for its outcome instead of dialling too.
type dialing struct {
	done chan struct{}
	s    *mcp.ClientSession
	err  error
}

// errClosed is the error of a session asked for after Close.
var errClosed = errors.New("the gateway is closing")

// session returns the agent's session, opening one if it has none (one
// attempt; others asking meanwhile share its outcome). On failure the
// background keeps trying.
func (g *Gateway) session(ctx context.Context, a *agent) (*mcp.ClientSession, error) {
	a.mu.Lock()
	if a.session != nil {
		s := a.session
		a.mu.Unlock()
		return s, nil
	}
	if a.peer != nil {
		a.mu.Unlock()
		return nil, errIsA2A
	}
	if g.bg.Err() != nil {
		a.mu.Unlock()
		return nil, errClosed
	}
	if d := a.dial; d != nil {
		a.mu.Unlock()
		select {
		case <-d.done:
			return d.s, d.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	d := &dialing{done: make(chan struct{})}
	a.dial = d
	a.mu.Unlock()

	// Bound by the gateway's life, not the caller's: the session outlives
	// the call that needed it.
	cctx, cancel := context.WithTimeout(g.bg, g.connectTimeout())
	stop := context.AfterFunc(ctx, cancel) // a caller that gives up ends the attempt
	d.s, d.err = g.connect(cctx, a)
	stop()
	cancel()

	a.mu.Lock()
	a.dial = nil
	wasDown := a.down
	if d.err == nil && g.bg.Err() != nil { // Close came meanwhile
		d.s.Close()
		d.s, d.err = nil, errClosed
	}
	if errors.Is(d.err, errIsA2A) { // its URL's base serves an A2A card (a2a.go)
		a.peer, a.down = &a2aPeer{url: a.base}, nil
	} else if d.err == nil {
		a.session, a.down = d.s, nil
	} else {
		a.down = d.err
	}
	a.mu.Unlock()
	close(d.done)
	if errors.Is(d.err, errIsA2A) {
		g.log.Info("the agent's URL is no MCP endpoint, but its base serves an A2A agent card: its skills are shown as tools", "agent", a.what)
		if g.started.Load() {
			g.background(func() { g.refreshLogged("skills not listed", a) })
		}
		return nil, d.err
	}
	if d.err != nil {
		if errors.Is(d.err, errClosed) {
			return nil, d.err
		}
		if a.signingIn() != nil {
			// Not a failure: the user is on the provider's page, and the
			// background connects as soon as the sign-in ends.
			if !errors.Is(wasDown, errSigningIn) {
				g.log.Info("the agent waits for a sign-in in the browser; its tools appear once it is done", "agent", a.what,
					"waiting up to", client.SignInTimeout)
			}
			a.mu.Lock()
			a.down = errSigningIn
			a.mu.Unlock()
		} else if wasDown == nil {
			msg := "agent not reachable; the gateway keeps trying"
			if _, ok := errors.AsType[*notMCPError](d.err); ok {
				msg = "the agent's URL answers, but not as an MCP endpoint; the gateway keeps trying"
			}
			g.log.Warn(msg, "agent", a.what, "err", d.err)
		} else {
			g.log.Debug("agent still not reachable", "agent", a.what, "err", d.err)
		}
		g.retryLater(a, false)
		return nil, d.err
	}
	if wasDown != nil {
		g.log.Info("agent reachable", "agent", a.what)
	}
	g.background(func() { g.watch(a, d.s) })
	if g.started.Load() {
		// Its tools may have changed (a new version was started): list
		// them, apart from whoever asked for the session. (Until New has
		// listed every agent's tools, New does it.)
		g.background(func() { g.refreshLogged("tools not listed after connecting", a) })
	}
	return d.s, nil
}

// errSigningIn is why an agent has no session while its sign-in waits for
// the user.
var errSigningIn = errors.New("it waits for the sign-in in the browser (the URL is on the gateway's stderr)")

// connectTimeout is how long one attempt to open a session may last.
func (g *Gateway) connectTimeout() time.Duration {
	if g.cfg.connectTimeout > 0 {
		return g.cfg.connectTimeout
	}
	return connectTimeout
}

// firstSession opens the agent's first session as New starts. An agent
// that answers, but not as an MCP endpoint (an A2A agent card, a web page,
// 404 or 405 to the POST of initialize), is asked again until the connect
// window has passed, and then refused: the URL is wrong, and the gateway
// would otherwise run with no tools of it and keep trying in silence. An
// agent that does not answer at all is left to the background.
func (g *Gateway) firstSession(ctx context.Context, a *agent) error {
	window := time.Now().Add(g.connectTimeout())
	for {
		_, err := g.session(ctx, a)
		var no *notMCPError
		if err == nil || !errors.As(err, &no) {
			return nil
		}
		if time.Now().After(window) {
			return fmt.Errorf("gateway: %s is no MCP endpoint: %s (asked for %s); give the agent's MCP endpoint "+
				"(agentura's agents serve it at /mcp: http://host:port/mcp) or an A2A agent's card URL (http://host:port/.well-known/agent-card.json), or leave the agent out", no.url, no.why, g.connectTimeout())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(min(retryFirst, time.Until(window))):
		}
	}
}

// notMCPError is a connection attempt that the agent's URL answered, but
// not as an MCP endpoint.
type notMCPError struct {
	url, why string
	err      error
}

func (e *notMCPError) Error() string {
	return fmt.Sprintf("gateway: connect to %s: it answers, but not as an MCP endpoint: %s", e.url, e.why)
}

func (e *notMCPError) Unwrap() error { return e.err }

// openingAnswer is what the agent answered the last POST without a
// session (initialize, or 2026-07-28's server/discover).
type openingAnswer struct {
	mu          sync.Mutex
	seen        bool
	status      int
	contentType string
}

// notMCP says why the answers to the opening requests, which ended in err,
// show an endpoint that is no MCP one, or "" when they do not: a network
// error, a refusal (401, 403), a server error (a proxy whose agent is
// starting) are not.
func (o *openingAnswer) notMCP(err error) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.seen {
		return ""
	}
	ct, _, _ := strings.Cut(o.contentType, ";")
	ct = strings.TrimSpace(strings.ToLower(ct))
	switch {
	case o.status == http.StatusNotFound || o.status == http.StatusMethodNotAllowed || o.status == http.StatusUnsupportedMediaType:
		return fmt.Sprintf("the POST of initialize got %d %s", o.status, http.StatusText(o.status))
	case o.status < 200 || o.status > 299:
		return ""
	case ct != "application/json" && ct != "text/event-stream":
		return fmt.Sprintf("the POST of initialize got %d %s with %q, not JSON-RPC", o.status, http.StatusText(o.status), o.contentType)
	case ct == "application/json" && strings.Contains(err.Error(), "failed to decode"):
		return fmt.Sprintf("the POST of initialize got %d %s with JSON that is no JSON-RPC answer (an A2A agent card, say)", o.status, http.StatusText(o.status))
	}
	return ""
}

// live returns the agent's session, or nil while it has none.
func (a *agent) live() *mcp.ClientSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.session
}

// watch drops the session when its connection ends.
func (g *Gateway) watch(a *agent, s *mcp.ClientSession) {
	g.lost(a, s, cmp.Or(s.Wait(), errors.New("the connection ended")))
}

// lost drops s, the agent's session, because why showed it is gone, and
// starts reconnecting at once. A session already replaced is left alone.
func (g *Gateway) lost(a *agent, s *mcp.ClientSession, why error) {
	a.mu.Lock()
	if a.session != s || s == nil {
		a.mu.Unlock()
		return
	}
	a.session, a.down = nil, why
	a.mu.Unlock()
	go s.Close()
	if g.bg.Err() != nil {
		return
	}
	// Routine (a restart, a stream a proxy cut): a reconnection that fails
	// is what warns.
	g.log.Info("lost the session with the agent; reconnecting", "agent", a.what, "err", why)
	g.retryLater(a, true)
}

// retryLater keeps trying to open a session with the agent in the
// background until one opens or the gateway closes: at once if now, then
// after retryFirst, doubling up to retryMax. One loop per agent. For an
// A2A agent it reads the card instead, and lists the tools once it can.
func (g *Gateway) retryLater(a *agent, now bool) {
	a.mu.Lock()
	if a.retrying || g.bg.Err() != nil {
		a.mu.Unlock()
		return
	}
	a.retrying = true
	a.mu.Unlock()
	started := g.background(func() {
		list := false // an A2A agent's card answers: its tools are listed
		defer func() {
			a.mu.Lock()
			a.retrying = false
			a.mu.Unlock()
			// After the loop has ended: a listing that fails again starts a new one.
			if list && g.started.Load() {
				g.refreshLogged("tools not listed after connecting", a)
			}
		}()
		delay := retryFirst
		if now {
			delay = 0
		}
		for {
			// While a sign-in waits for the user, no attempt begins another
			// (it would show a new URL); the one that ends connects at once.
			pending := a.signingIn()
			var wait <-chan time.Time // nil, and never ready, while a sign-in waits
			if pending == nil {
				wait = time.After(delay)
			}
			select {
			case <-g.bg.Done():
				return
			case <-pending: // nil, and never ready, without a sign-in
			case <-wait:
			}
			if a.live() != nil {
				return
			}
			if p := a.peerOf(); p != nil { // an A2A agent: its card (a2a.go)
				if list = g.cardAnswers(a, p); list {
					return
				}
			} else if _, err := g.session(g.bg, a); err == nil || errors.Is(err, errIsA2A) {
				// (A failure calls retryLater, which finds this loop running.)
				return
			}
			delay = min(max(2*delay, retryFirst), retryMax)
		}
	})
	if !started {
		a.mu.Lock()
		a.retrying = false
		a.mu.Unlock()
	}
}

// background runs fn in a goroutine that Close waits for, unless Close has
// begun; it reports whether fn runs.
func (g *Gateway) background(fn func()) bool {
	g.bgMu.Lock()
	defer g.bgMu.Unlock()
	if g.bg.Err() != nil {
		return false
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		fn()
	}()
	return true
}

// refreshLogged is refresh in the background, its failure logged.
func (g *Gateway) refreshLogged(what string, a *agent) {
	ctx, cancel := context.WithTimeout(g.bg, time.Minute)
	defer cancel()
	if err := g.refresh(ctx); err != nil && g.bg.Err() == nil {
		g.log.Warn(what, "agent", a.label(), "err", err)
	}
}

// downReason is why the agent has no session, for a tool error: short, and
// without the agent's URL.
func downReason(err error) string {
	switch {
	case err == nil:
		return "it has not answered yet"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, errSigningIn):
		return err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer within " + connectTimeout.String()
	case errors.Is(err, mcp.ErrSessionMissing):
		return "it no longer knows the session (restarted)"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection dropped"
	}
	return scrub(err.Error())
}

// callProbe records what became of the HTTP request that carried a
// tools/call: whether any of it was written, and the status it got.
type callProbe struct {
	// http is set for an agent over HTTP, whose every request passes the
	// probe: no request seen is then no request sent.
	http    bool
	mu      sync.Mutex
	seen    bool // the first request with this probe has been made
	wrote   bool
	status  int
	session bool // the request named a session (Mcp-Session-Id)
}

// probeKey carries a call's probe in its context: the agent's HTTP
// transport fills it in for the first request made under it, the call's POST.
type probeKey struct{}

// unsent reports whether the call provably never reached the agent: over
// HTTP no request was made (the session was closing), no byte of it was
// written (the connection was refused), or the agent answered 404 to a
// request naming a session ("session not found", answered before the
// message is read).
func (p *callProbe) unsent() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.seen {
		return p.http // stdio: nothing is known
	}
	return !p.wrote || (p.status == http.StatusNotFound && p.session)
}

// watchTransport is the HTTP transport of one session with an agent: it
// fills in call probes, and tells when a 2026-07-28 subscriptions/listen
// stream (the way list changes arrive without a session) ends.
type watchTransport struct {
	next http.RoundTripper
	// listenEnded is called once a subscriptions/listen response ends.
	listenEnded func()
	// opening, if set, gets the answer to each POST without a session.
	opening *openingAnswer
}

func (w *watchTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	next := cmp.Or(w.next, http.DefaultTransport)
	p, _ := r.Context().Value(probeKey{}).(*callProbe)
	if p != nil {
		p.mu.Lock()
		first := !p.seen
		p.seen = true
		p.session = r.Header.Get(transfer.HeaderMCPSessionID) != ""
		p.mu.Unlock()
		if !first {
			p = nil
		}
	}
	if p != nil {
		trace := &httptrace.ClientTrace{WroteHeaders: func() {
			p.mu.Lock()
			p.wrote = true
			p.mu.Unlock()
		}}
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), trace))
	}
	resp, err := next.RoundTrip(r)
	// A notification's 202 (or 204) answers no request: it tells nothing.
	if w.opening != nil && err == nil && r.Method == http.MethodPost && r.Header.Get(transfer.HeaderMCPSessionID) == "" &&
		resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusNoContent {
		w.opening.mu.Lock()
		w.opening.seen, w.opening.status, w.opening.contentType = true, resp.StatusCode, resp.Header.Get("Content-Type")
		w.opening.mu.Unlock()
	}
	if p != nil && err == nil {
		p.mu.Lock()
		p.status = resp.StatusCode
		p.mu.Unlock()
	}
	if err == nil && w.listenEnded != nil && r.Header.Get(transfer.HeaderMCPMethod) == "subscriptions/listen" && resp.StatusCode == http.StatusOK {
		resp.Body = &endBody{ReadCloser: resp.Body, ended: w.listenEnded}
	}
	return resp, err
}

// endBody calls ended once its reading ends, by the end of the body, an
// error, or its closing (a layer above it that stopped reading: the cap
// on one message, client.LimitMessages, ends a stream at an event over it).
type endBody struct {
	io.ReadCloser
	once  sync.Once
	ended func()
}

func (b *endBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.once.Do(b.ended)
	}
	return n, err
}

func (b *endBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.ended)
	return err
}
