package httpguard

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/agentura/agentura/settings"
	"github.com/prometheus/client_golang/prometheus"
)

// BodyPacer makes the bodies of requests keep flowing: a body must start
// within AGENT_BODY_TIMEOUT and then arrive at AGENT_MIN_BODY_RATE bytes
// per second on average (the timeout is the slack), or the connection's
// read deadline passes and the read fails. The deadline is moved on as
// bytes arrive (http.ResponseController.SetReadDeadline) and lifted once
// the body has been read to its end, so the tool call that follows has all
// its time; the server sets its own deadlines again for the connection's
// next request.
type BodyPacer struct {
	grace   time.Duration
	rate    int64 // bytes per second
	refused prometheus.Counter
}

// NewBodyPacer returns the pacer for a body that must start within grace
// (AGENT_BODY_TIMEOUT) and then average rate bytes per second
// (AGENT_MIN_BODY_RATE); refused counts the bodies cut off. A rate of zero
// or less paces nothing (nil).
func NewBodyPacer(grace time.Duration, rate int64, refused prometheus.Counter) *BodyPacer {
	if rate <= 0 {
		return nil
	}
	return &BodyPacer{grace: grace, rate: rate, refused: refused}
}

// Wrap paces the bodies of the requests h gets; nil paces nothing.
func (p *BodyPacer) Wrap(h http.Handler) http.Handler {
	if p == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		pr := &pacedBody{ReadCloser: r.Body, p: p, rc: http.NewResponseController(w), start: start, deadline: start.Add(p.grace)}
		if pr.rc.SetReadDeadline(pr.deadline) != nil {
			h.ServeHTTP(w, r) // a writer that cannot: serve unpaced
			return
		}
		// A copy of the request carries the paced body: the server's own
		// keeps its body, which it drains or abandons after the handler
		// under the deadline still set (a body left unread is not waited for).
		r = r.WithContext(r.Context())
		r.Body = pr
		h.ServeHTTP(w, r)
	})
}

// pacedBody moves the read deadline of its connection on as bytes arrive.
type pacedBody struct {
	io.ReadCloser
	p        *BodyPacer
	rc       *http.ResponseController
	start    time.Time
	deadline time.Time
	n        int64
	done     bool
}

func (b *pacedBody) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	b.n += int64(n)
	switch {
	case err == io.EOF:
		if !b.done {
			b.done = true
			b.rc.SetReadDeadline(time.Time{})
		}
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		b.p.refused.Inc()
		err = fmt.Errorf("the request body arrived too slowly: %d bytes in %s, below the minimum of %d bytes/s after %s of slack "+
			"(AGENT_MIN_BODY_RATE, AGENT_BODY_TIMEOUT); send it faster or upload large files to /uploads from a faster link",
			b.n, time.Since(b.start).Round(time.Second), b.p.rate, settings.FormatDuration(b.p.grace))
	case n > 0:
		// Allowed so far: the slack plus the time the bytes read need at the minimum rate.
		next := b.start.Add(b.p.grace + time.Duration(float64(b.n)/float64(b.p.rate)*float64(time.Second)))
		if next.Sub(b.deadline) >= 100*time.Millisecond {
			b.deadline = next
			b.rc.SetReadDeadline(next)
		}
	}
	return n, err
}
