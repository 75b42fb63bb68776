package transferclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentura/agentura/transfer"
)

// Defaults of Pace.
const (
	// DefaultStallTimeout is how long a download may go without a byte
	// before it is given up.
	DefaultStallTimeout = time.Minute
	// DefaultMinRate is the average, in bytes a second, a download must
	// keep from PaceSlack after its first byte on: 1 KiB/s, which any link
	// a person works over beats, and a trickle of a byte a second does not.
	DefaultMinRate = 1 << 10
	// PaceSlack is how long a download's bytes may come at any pace before
	// they must average the minimum rate.
	PaceSlack = 10 * time.Second
)

// ErrStalled is wrapped by the error of a download that went its stall
// timeout without a byte, or fell below its minimum rate.
var ErrStalled = errors.New("the download stalled")

// Pace is what a download (Guard.Download) must keep to.
type Pace struct {
	// StallTimeout is how long the answer, then each read of its body, may
	// go without a byte: a deadline that moves with progress, so a large
	// file on a slow link arrives and a sender that stopped does not hold
	// the caller forever. 0 means DefaultStallTimeout.
	StallTimeout time.Duration
	// MinRate is the average, in bytes a second, the body must keep from
	// Slack after its first byte on: a trickle (each byte within
	// StallTimeout of the last) would otherwise last as long as its sender
	// likes. 0 means DefaultMinRate, a negative value no minimum.
	MinRate int64
	// Slack is how long the bytes may come at any pace; 0 means PaceSlack.
	Slack time.Duration
	// Again ends a stalled download's error, saying what to do:
	// "call the tool again".
	Again string
}

// retryDelay is the pause before a download that failed on the network is
// asked again: long enough for a restarting agent to be listening again.
const retryDelay = 500 * time.Millisecond

// maxResumes is how many times one download resumes by Range.
const maxResumes = 3

// Download fetches rawURL under the guard (Get: the URL and its redirects
// checked, at most maxBytes) and hands its body to consume, with the size
// the answer announced (-1: none), under the pace p: when the answer or a
// byte of its body is later than p.StallTimeout, or the bytes average less
// than p.MinRate from p.Slack after the first on, consume's context ends and
// the error wraps ErrStalled, naming name. A GET is idempotent: one that
// failed on the network before its answer is asked once more, and a body
// cut off on the network resumes where it broke, asked by Range (If-Range:
// the same version), up to three times; consume reads one body throughout.
// A refusal, a status other than 200 (206 on a resume), or a file over the
// cap is not tried again. Errors name the URL without its query.
func (g Guard) Download(ctx context.Context, hc *http.Client, rawURL string, maxBytes int64, p Pace, name string,
	consume func(ctx context.Context, body io.Reader, size int64) error) error {
	stall := cmp.Or(p.StallTimeout, DefaultStallTimeout)
	again := ""
	if p.Again != "" {
		again = "; " + p.Again
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watch := time.AfterFunc(stall, func() {
		cancel(fmt.Errorf("%w: no byte of %s arrived for %s (the sender or the network stopped sending it)%s", ErrStalled, name, stall, again))
	})
	defer watch.Stop()
	pace := newPacer(p, name, again, cancel)
	defer pace.stop()
	stalled := func(err error) error {
		if cause := context.Cause(ctx); errors.Is(cause, ErrStalled) {
			return cause
		}
		return err
	}
	resp, err := g.Get(ctx, hc, rawURL, maxBytes)
	if err != nil && Transient(ctx, err) && sleep(ctx, retryDelay) == nil {
		resp, err = g.Get(ctx, hc, rawURL, maxBytes)
	}
	if err != nil {
		return stalled(err)
	}
	watch.Reset(stall)
	body := &resumer{ctx: ctx, g: g, hc: hc, url: rawURL, max: maxBytes, resp: resp,
		moved: func(n int) { watch.Reset(stall); pace.moved(n) }}
	defer body.close()
	return stalled(consume(ctx, body, resp.ContentLength))
}

// Transient reports whether err is a network failure a second try may not
// meet: not the caller's end, not a refusal of the URL or of the content.
func Transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, ErrTooLarge) || errors.Is(err, ErrForeignURL) || errors.Is(err, transfer.ErrDigestMismatch) {
		return false
	}
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}

// resumer reads a download's body, asking for the rest by Range when the
// body breaks off on the network.
type resumer struct {
	ctx     context.Context
	g       Guard
	hc      *http.Client
	url     string
	max     int64
	resp    *http.Response
	got     int64
	resumes int
	moved   func(n int)
}

func (r *resumer) Read(b []byte) (int, error) {
	for {
		n, err := r.resp.Body.Read(b)
		if n > 0 {
			r.got += int64(n)
			r.moved(n)
		}
		if err == nil || err == io.EOF || !Transient(r.ctx, err) || r.resumes >= maxResumes {
			return n, err
		}
		if rerr := r.resume(err); rerr != nil {
			return n, rerr
		}
		if n > 0 {
			return n, nil
		}
	}
}

// resume asks for the body from r.got on, after it broke with cause.
func (r *resumer) resume(cause error) error {
	r.resumes++
	r.resp.Body.Close()
	if sleep(r.ctx, retryDelay) != nil {
		return cause
	}
	req, err := http.NewRequestWithContext(r.ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Range", "bytes="+strconv.FormatInt(r.got, 10)+"-")
	if v := cmp.Or(r.resp.Header.Get("ETag"), r.resp.Header.Get("Last-Modified")); v != "" {
		req.Header.Set("If-Range", v)
	}
	resp, err := r.g.Client(r.hc).Do(req)
	if err != nil {
		return fmt.Errorf("GET %s broke off after %d bytes (%w), and resuming it failed: %w", transfer.Redact(r.url), r.got, cause, err)
	}
	if resp.StatusCode == http.StatusOK && sameVersion(r.resp, resp) {
		// The server ignores Range: the whole file again, its first
		// r.got bytes skipped.
		body := &capReader{ReadCloser: resp.Body, left: r.max, max: r.max}
		if _, err := io.CopyN(io.Discard, &watched{body, r.moved}, r.got); err != nil {
			body.Close()
			return fmt.Errorf("GET %s broke off after %d bytes (%w), and asking for it again failed: %w", transfer.Redact(r.url), r.got, cause, err)
		}
		resp.Body, r.resp = body, resp
		return nil
	}
	start, _, _ := strings.Cut(strings.TrimPrefix(resp.Header.Get("Content-Range"), "bytes "), "-")
	if resp.StatusCode != http.StatusPartialContent || start != strconv.FormatInt(r.got, 10) {
		resp.Body.Close()
		return fmt.Errorf("GET %s broke off after %d bytes (%w), and the server does not resume it (it answered %s to a Range request from byte %d)%s",
			transfer.Redact(r.url), r.got, cause, resp.Status, r.got, changed(r.resp, resp))
	}
	resp.Body = &capReader{ReadCloser: resp.Body, left: r.max - r.got, max: r.max}
	r.resp = resp
	return nil
}

// sameVersion reports whether answer b is of the version of the file a
// was: the same ETag, or no ETag on either.
func sameVersion(a, b *http.Response) bool {
	return a.Header.Get("ETag") == b.Header.Get("ETag")
}

// changed says, for a failed resume, that the file changed in between.
func changed(a, b *http.Response) string {
	if sameVersion(a, b) {
		return ""
	}
	return "; the file changed in between (another ETag): fetch it again"
}

// watched calls moved with the count of each read that brought bytes.
type watched struct {
	r     io.Reader
	moved func(n int)
}

func (w *watched) Read(b []byte) (int, error) {
	n, err := w.r.Read(b)
	if n > 0 {
		w.moved(n)
	}
	return n, err
}

func (r *resumer) close() { r.resp.Body.Close() }

// pacer holds a download to its minimum rate: from the slack after its
// first byte on, its bytes must average the rate, or it is cancelled with
// ErrStalled. Its deadline moves on with each byte, as an agent's own
// deadline on a request body does (AGENT_MIN_BODY_RATE).
type pacer struct {
	rate  int64 // bytes a second; 0: no minimum
	slack time.Duration
	fail  func()
	mu    sync.Mutex
	first time.Time
	got   int64
	timer *time.Timer
}

func newPacer(p Pace, name, again string, cancel context.CancelCauseFunc) *pacer {
	pc := &pacer{rate: max(cmp.Or(p.MinRate, DefaultMinRate), 0), slack: cmp.Or(p.Slack, PaceSlack)}
	pc.fail = func() {
		pc.mu.Lock()
		got, took := pc.got, time.Since(pc.first)
		pc.mu.Unlock()
		cancel(fmt.Errorf("%w: %s came at %s a second (%d bytes in %s), under the %s a second a download must average after its first %s (the sender or the network is barely sending it)%s",
			ErrStalled, name, rateText(float64(got)/took.Seconds()), got, took.Round(100*time.Millisecond), rateText(float64(pc.rate)), pc.slack, again))
	}
	return pc
}

// moved counts n more bytes and moves the deadline on.
func (p *pacer) moved(n int) {
	if p.rate == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first.IsZero() {
		p.first = time.Now()
	}
	p.got += int64(n)
	deadline := p.first.Add(p.slack + time.Duration(float64(p.got)/float64(p.rate)*float64(time.Second)))
	if p.timer == nil {
		p.timer = time.AfterFunc(time.Until(deadline), p.fail)
	} else {
		p.timer.Reset(time.Until(deadline))
	}
}

func (p *pacer) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
	}
}

// rateText writes a rate for people: "1 byte", "512 bytes", "1 KiB".
func rateText(perSecond float64) string {
	switch {
	case perSecond >= 1<<20:
		return fmt.Sprintf("%.4g MiB", perSecond/(1<<20))
	case perSecond >= 1<<10:
		return fmt.Sprintf("%.4g KiB", perSecond/(1<<10))
	case perSecond < 1.5 && perSecond >= 0.5:
		return "1 byte"
	}
	return fmt.Sprintf("%.0f bytes", perSecond)
}
