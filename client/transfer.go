package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transferclient"
)

// Direction says which way a transfer goes.
type Direction string

// The directions of a transfer.
const (
	Upload   Direction = "upload"
	Download Direction = "download"
)

// Progress reports how far a transfer has come. Total is -1 when unknown.
type Progress struct {
	Direction Direction
	Name      string
	Done      int64
	Total     int64
}

// What the refusals of a download tell the user to set.
const (
	allowSetting  = "Config.AllowHosts (agentura: --allow-host)"
	originSetting = "Config.BaseURL (agentura: --base-url)"
	capSetting    = "Config.MaxDownloadBytes; agentura: --max-download"
)

// upload streams the registry file e to the agent's /uploads as a raw body
// and returns the signed URL the agent answers with.
func (m *Middleware) upload(ctx context.Context, e Entry, name string) (string, error) {
	if m.base == nil {
		return "", fmt.Errorf("%s is %d bytes, over the inline limit of %d bytes, and the agent's base URL is unknown, so it cannot be uploaded: set %s",
			name, e.Size, m.cfg.InlineMaxBytes, originSetting)
	}
	f, err := openEntry(e)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if m.cfg.TusMinBytes >= 0 && e.Size >= m.cfg.TusMinBytes {
		return m.resumableUpload(ctx, f, e, name)
	}
	body := &progressReader{r: f, p: Progress{Direction: Upload, Name: name, Total: e.Size}, fn: m.cfg.Progress}
	up, err := transferclient.SendUpload(ctx, m.hc, m.base.JoinPath(transfer.UploadsPath).String(), name, body, e.Size)
	if err != nil {
		return "", err
	}
	body.finish()
	return up.URL, nil
}

// resumableUpload sends a large file with tus, resuming after a dropped
// connection, and returns the signed URL of the staged file.
func (m *Middleware) resumableUpload(ctx context.Context, f *os.File, e Entry, name string) (string, error) {
	p := Progress{Direction: Upload, Name: name, Total: e.Size}
	tus := &transferclient.Tus{Client: m.hc, Progress: func(done, total int64) {
		if m.cfg.Progress != nil {
			p.Done, p.Total = done, total
			m.cfg.Progress(p)
		}
	}}
	return tus.Send(ctx, transferclient.TusEndpoint(m.base), name, f, e.Size)
}

// download streams rawURL into the registry under name, refusing foreign
// hosts, anything over the size cap, and content whose sha256 is not the
// announced one (sha256 "" when the agent announced none). A GET is
// idempotent and the registry keeps nothing of a failed one, so a download
// that failed on the network (the connection refused, reset or cut short)
// is tried once more, after retryDelay; a refusal, a status other than 200,
// a file over the cap or a wrong digest is not.
func (m *Middleware) download(ctx context.Context, rawURL, name, sha256, source string) (Entry, error) {
	e, err := m.downloadOnce(ctx, rawURL, name, sha256, source)
	if err == nil || !transient(ctx, err) {
		return e, err
	}
	m.cfg.Logger.Debug("download failed on the network, trying once more", "name", name, "err", err)
	select {
	case <-ctx.Done():
		return Entry{}, err
	case <-time.After(retryDelay):
	}
	return m.downloadOnce(ctx, rawURL, name, sha256, source)
}

// retryDelay is the pause before a failed download is tried again: long
// enough for a restarting agent to be listening again.
const retryDelay = 500 * time.Millisecond

// transient reports whether err is a network failure a second try may not
// meet: not the caller's end, not a refusal of the URL or of the content.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, transferclient.ErrTooLarge) || errors.Is(err, transferclient.ErrForeignURL) || errors.Is(err, transfer.ErrDigestMismatch) {
		return false
	}
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}

// ErrStalled is wrapped by the error of a download that went
// Config.StallTimeout without a byte, or fell below Config.MinDownloadRate.
var ErrStalled = errors.New("the download stalled")

// paceSlack is PaceSlack, shortened by tests.
var paceSlack = PaceSlack

// downloadOnce is one try of download. It fails with ErrStalled when the
// answer, or the next byte of its body, takes longer than StallTimeout, or
// when its bytes, from paceSlack after the first on, average less than
// MinDownloadRate.
func (m *Middleware) downloadOnce(ctx context.Context, rawURL, name, sha256, source string) (Entry, error) {
	stall := m.cfg.StallTimeout
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watch := time.AfterFunc(stall, func() {
		cancel(fmt.Errorf("%w: no byte of %s arrived for %s (the agent or the network stopped sending it); call the tool again", ErrStalled, name, stall))
	})
	defer watch.Stop()
	pace := m.pacer(name, cancel)
	defer pace.stop()
	stalled := func(err error) error {
		if cause := context.Cause(ctx); errors.Is(cause, ErrStalled) {
			return fmt.Errorf("download %s: %w", name, cause)
		}
		return fmt.Errorf("download %s: %w", name, withCapHint(err))
	}
	guard := transferclient.Guard{Origin: m.base, AllowHosts: m.cfg.AllowHosts, AllowSetting: allowSetting, OriginSetting: originSetting}
	resp, err := guard.Get(ctx, m.hc, rawURL, m.cfg.MaxDownloadBytes)
	if err != nil {
		return Entry{}, stalled(err)
	}
	defer resp.Body.Close()
	body := &progressReader{r: resp.Body, p: Progress{Direction: Download, Name: name, Total: resp.ContentLength}, fn: m.cfg.Progress,
		moved: func(n int) { watch.Reset(stall); pace.moved(n) }}
	watch.Reset(stall)
	e, err := m.cfg.Registry.Add(ctx, name, bufio.NewReaderSize(transfer.VerifySHA256(body, sha256, name), 256<<10), source)
	if err != nil {
		return Entry{}, stalled(err)
	}
	body.finish()
	return e, nil
}

// pacer holds a download to Config.MinDownloadRate: from paceSlack after
// its first byte on, its bytes must average the rate, or it is cancelled
// with ErrStalled. Its deadline moves on with each byte, as the agent's
// own deadline on a request body does (AGENT_MIN_BODY_RATE).
type pacer struct {
	rate  int64 // bytes a second; 0: no minimum
	fail  func()
	mu    sync.Mutex
	first time.Time
	got   int64
	timer *time.Timer
}

func (m *Middleware) pacer(name string, cancel context.CancelCauseFunc) *pacer {
	p := &pacer{rate: max(m.cfg.MinDownloadRate, 0)}
	p.fail = func() {
		p.mu.Lock()
		got, took := p.got, time.Since(p.first)
		p.mu.Unlock()
		cancel(fmt.Errorf("%w: %s came at %s a second (%d bytes in %s), under the %s a second a download must average after its first %s (the agent or the network is barely sending it); call the tool again",
			ErrStalled, name, rateText(float64(got)/took.Seconds()), got, took.Round(100*time.Millisecond), rateText(float64(p.rate)), paceSlack))
	}
	return p
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
	deadline := p.first.Add(paceSlack + time.Duration(float64(p.got)/float64(p.rate)*float64(time.Second)))
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

// withCapHint adds the setting that raises the cap to an error of a file
// over it.
func withCapHint(err error) error {
	if errors.Is(err, transferclient.ErrTooLarge) {
		return fmt.Errorf("%w (%s)", err, capSetting)
	}
	return err
}

// progressReader reports the bytes read through it, and calls moved (when
// set) on each read that brought some, with how many.
type progressReader struct {
	r     io.Reader
	p     Progress
	fn    func(Progress)
	moved func(n int)
}

func (pr *progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	if n > 0 && pr.moved != nil {
		pr.moved(n)
	}
	if n > 0 && pr.fn != nil {
		pr.p.Done += int64(n)
		pr.fn(pr.p)
	}
	return n, err
}

// finish reports the end of a transfer, with Total set to Done, unless the
// last report already said so.
func (pr *progressReader) finish() {
	if pr.fn != nil && (pr.p.Total != pr.p.Done || pr.p.Done == 0) {
		pr.p.Total = pr.p.Done
		pr.fn(pr.p)
	}
}
