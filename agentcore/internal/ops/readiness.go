package ops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/signing"
)

// Readiness answers /readyz: whether the store takes files, the signing key
// works, the agent's own checks pass and the start-up sweep is over. It
// probes in the background, one probe at a time, and answers from the last
// result (readyProbe).
type Readiness struct {
	store    fileserve.Store
	signer   *signing.Signer
	sweeping func() (running bool, since time.Time) // the start-up sweep
	log      *slog.Logger

	mu     sync.Mutex
	checks []readinessCheck
	probe  readyProbe // the last result of the checks
}

type readinessCheck struct {
	name string
	fn   func(context.Context) error
}

// Degraded is what the error of a readiness check implements to say that
// its part works, only less well than it should (the identity provider
// unreachable while the keys read before still verify tokens): while
// Degraded returns true, /readyz stays 200 "ready", names the check under
// "degraded" and gives the error's text under checks. Taking an agent out
// of its balancer for it would turn a partial outage into a whole one.
type Degraded interface {
	error
	Degraded() bool
}

// isDegraded reports whether err says its check is degraded, not failing.
func isDegraded(err error) bool {
	d, ok := errors.AsType[Degraded](err)
	return ok && d.Degraded()
}

// NewReadiness makes the readiness of the agent whose store and key these
// are; sweeping tells whether its start-up sweep runs, and since when
// (cleanup.Sweeper.StartupSweep).
func NewReadiness(store fileserve.Store, signer *signing.Signer, sweeping func() (bool, time.Time), log *slog.Logger) *Readiness {
	return &Readiness{store: store, signer: signer, sweeping: sweeping, log: log}
}

// Add adds a check (see agentcore.Service.AddReadinessCheck).
func (s *Readiness) Add(name string, fn func(context.Context) error) {
	s.mu.Lock()
	s.checks = append(s.checks, readinessCheck{name: name, fn: fn})
	s.mu.Unlock()
	s.probe.mu.Lock()
	s.probe.stale = true // the next /readyz runs the new check
	s.probe.mu.Unlock()
}

func (s *Readiness) readiness() []readinessCheck {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.checks)
}

// probeClaims are signed by /readyz to prove the key works.
func probeClaims() signing.Claims {
	return signing.Claims{Owner: "readyz", FileID: "probe", ExpiresAt: time.Now().Add(time.Minute)}
}

// Timings of /readyz.
const (
	// readyCheckTimeout is how long the checks of one probe may take.
	readyCheckTimeout = 5 * time.Second
	// ReadyFresh is the age up to which a probe's result is answered
	// without probing again.
	ReadyFresh = time.Second
	// ReadyWait is how long /readyz waits for a probe it started before
	// it answers from the last result: well within a health checker's own
	// timeout (Kubernetes: 1 s by default).
	ReadyWait = 500 * time.Millisecond
	// startupSweepReady is how long /readyz says not ready while the
	// start-up sweep runs; past it the agent is ready while the sweep goes
	// on (files past their TTL are never served either way).
	startupSweepReady = 10 * time.Second
)

// readyProbe runs the readiness checks in the background, one probe at a
// time, and keeps the last result: /readyz answers from it within
// ReadyWait, even while the store hangs (an S3 outage), and never piles up
// probes on a store that does not answer.
type readyProbe struct {
	mu      sync.Mutex
	running bool
	started time.Time         // when the running probe began
	done    chan struct{}     // closed when the running probe ends
	ended   time.Time         // when the last probe ended; zero: none yet
	stale   bool              // the checks changed since the last probe
	last    readyState        // the last probe's result
	logged  map[string]string // the failures (and degraded checks) last logged, by check
}

// readyState is what one probe found: each check's public text, whether
// the agent is ready, and the checks that are degraded (ready all the
// same).
type readyState struct {
	checks   map[string]string
	ok       bool
	degraded []string
}

// result returns the checks' state: a fresh probe's when one ends within
// ReadyWait, else the last one's. run is a probe.
func (p *readyProbe) result(run func(context.Context) readyState) readyState {
	p.mu.Lock()
	if !p.running && (p.stale || time.Since(p.ended) > ReadyFresh) {
		p.running, p.started, p.done, p.stale = true, time.Now(), make(chan struct{}), false
		go func(done chan struct{}) {
			ctx, cancel := context.WithTimeout(context.Background(), readyCheckTimeout)
			st := run(ctx)
			cancel()
			p.mu.Lock()
			p.running, p.ended, p.last = false, time.Now(), st
			p.mu.Unlock()
			close(done)
		}(p.done)
	}
	done := p.done
	p.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-time.After(ReadyWait):
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st := readyState{checks: map[string]string{}, ok: p.last.ok, degraded: slices.Clone(p.last.degraded)}
	for k, v := range p.last.checks {
		st.checks[k] = v
	}
	switch hung := time.Since(p.started); {
	case p.running && p.ended.IsZero():
		st.checks["probe"] = "the first readiness checks are still running; ask again in a moment"
		st.ok = false
	case p.running && hung > readyCheckTimeout+ReadyWait:
		st.checks["probe"] = fmt.Sprintf("the readiness checks have not answered for %s (the storage may hang)", hung.Round(time.Second))
		st.ok = false
	}
	return st
}

// ServeHTTP answers /readyz: 200 when the store takes files, the signing
// key works, the agent's own checks pass and the start-up sweep is over (or
// has run for startupSweepReady); 503 with what is wrong otherwise. A
// check that is degraded (Degraded) leaves the answer 200 and is listed
// under "degraded". The body names no server path or address: the log has
// the details.
func (s *Readiness) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	st := s.probe.result(s.runReadiness)
	code, body := http.StatusOK, map[string]any{"status": "ready", "checks": st.checks}
	if !st.ok {
		code, body["status"] = http.StatusServiceUnavailable, "not ready"
	}
	if len(st.degraded) > 0 {
		body["degraded"] = st.degraded
	}
	httpjson.WriteJSON(w, code, body)
}

// runReadiness runs every readiness check once, logs what changed, and
// returns the public text of each.
func (s *Readiness) runReadiness(ctx context.Context) readyState {
	checks := map[string]string{}
	details := map[string]error{}
	var degraded []string
	fail := func(name, public string, err error) {
		checks[name] = public
		details[name] = err
	}
	checks["storage"], checks["signing_key"] = "ok", "ok"
	if err := s.store.Ready(ctx); err != nil {
		fail("storage", storageNotReady(err), err)
	}
	if _, err := s.signer.Sign(probeClaims()); err != nil {
		fail("signing_key", err.Error(), err)
	}
	for _, chk := range s.readiness() {
		switch err := chk.fn(ctx); {
		case err == nil:
			checks[chk.name] = "ok"
		case isDegraded(err):
			checks[chk.name] = err.Error()
			degraded = append(degraded, chk.name)
		default:
			fail(chk.name, err.Error(), err)
		}
	}
	checks["cleanup"] = "ok"
	if running, since := s.sweeping(); running && time.Since(since) < startupSweepReady {
		checks["cleanup"] = fmt.Sprintf("the start-up sweep is running (%s so far); ready once it ends, or after %s at most", time.Since(since).Round(time.Second), startupSweepReady)
	}
	s.logReadiness(details, degraded, checks)
	ok := len(details) == 0 && checks["cleanup"] == "ok"
	return readyState{checks: checks, ok: ok, degraded: degraded}
}

// logReadiness logs each check that starts failing (or being degraded) or
// fails differently, with the full error, and each that recovers.
func (s *Readiness) logReadiness(details map[string]error, degraded []string, checks map[string]string) {
	s.probe.mu.Lock()
	defer s.probe.mu.Unlock()
	logged := map[string]string{}
	for name, err := range details {
		logged[name] = err.Error()
		if s.probe.logged[name] != logged[name] {
			s.log.Warn("not ready", "check", name, "err", err)
		}
	}
	for _, name := range degraded {
		logged[name] = checks[name]
		if s.probe.logged[name] != logged[name] {
			s.log.Warn("degraded, still ready", "check", name, "state", checks[name])
		}
	}
	for name := range s.probe.logged {
		if _, still := logged[name]; !still {
			s.log.Info("ready again", "check", name)
		}
	}
	s.probe.logged = logged
}

// storageNotReady is what /readyz says of a store that cannot take files:
// the cause in words, without the paths, keys or addresses the error
// holds (the log has it whole).
func storageNotReady(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "the store is full: free space or grow the volume (the agent's log names it)"
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("the store did not answer within %s: check that it is up and reachable (the agent's log has the error)", readyCheckTimeout)
	case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return "the store is not writable: check the volume's mount and permissions (the agent's log names it)"
	}
	return "the store cannot take files now (the agent's log has the error)"
}
