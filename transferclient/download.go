package transferclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentura/agentura/transfer"
)

// ErrTooLarge is wrapped by the error of a download over its size cap.
var ErrTooLarge = errors.New("file too large")

// ErrForeignURL is wrapped by the error of a download URL that is neither on
// the agent's origin nor on an allowed host.
var ErrForeignURL = errors.New("download URL not on the agent's origin nor an allowed host")

// maxRedirects is how many redirects a guarded download follows.
const maxRedirects = 5

// Guard is the rule for the download of a file another agent named: the
// URL comes from the agent, and a host must not become the agent's way into
// hosts its user never named. A URL passes when it lies on Origin
// ([transfer.SameOrigin]) or on a host of AllowHosts ([transfer.HostAllowed]); so must every
// redirect.
type Guard struct {
	// Origin is the agent's origin; nil when unknown.
	Origin *url.URL
	// AllowHosts are further hosts ("host" or "host:port") whose URLs may be
	// fetched.
	AllowHosts []string
	// AllowSetting names, for refusals, the setting that takes AllowHosts:
	// "Config.AllowHosts (agentura: --allow-host)".
	AllowSetting string
	// OriginSetting names, for refusals while Origin is nil, the setting that
	// gives the agent's origin: "Config.BaseURL (agentura: --base-url)".
	OriginSetting string
}

// Check returns nil when u may be fetched, else an error wrapping
// ErrForeignURL that says what to set.
func (g Guard) Check(u *url.URL) error {
	if transfer.SameOrigin(g.Origin, u) || transfer.HostAllowed(g.AllowHosts, u) {
		return nil
	}
	shown := u.Scheme + "://" + u.Host
	if u.User != nil {
		return fmt.Errorf("%w: %s with user information in the URL is refused", ErrForeignURL, shown)
	}
	if g.Origin == nil {
		return fmt.Errorf("%w: %s is refused; the agent's origin is unknown — set %s to the agent's HTTP base, or add the host to %s if you trust it",
			ErrForeignURL, shown, cmp.Or(g.OriginSetting, "the agent's base URL"), cmp.Or(g.AllowSetting, "the allowed hosts"))
	}
	return fmt.Errorf("%w: %s is refused; the agent's origin is %s — add the host (or host:port) to %s if you trust it",
		ErrForeignURL, shown, g.Origin.Scheme+"://"+g.Origin.Host, cmp.Or(g.AllowSetting, "the allowed hosts"))
}

// Get starts the GET of rawURL through hc under the guard: the URL and every
// redirect must pass Check (at most five redirects), the answer must be 200,
// and a Content-Length over maxBytes is refused before the body is read.
// Reading more than maxBytes from the returned body fails with an error
// wrapping ErrTooLarge. The caller closes the body. Errors name the URL
// without its query ([transfer.Redact]).
func (g Guard) Get(ctx context.Context, hc *http.Client, rawURL string, maxBytes int64) (*http.Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL", transfer.Redact(rawURL))
	}
	if err := g.Check(u); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := g.Client(hc).Do(req)
	if err != nil {
		var ue *url.Error // names the last URL asked for, a redirect's with its query
		if errors.As(err, &ue) {
			ue.URL = transfer.Redact(ue.URL)
		}
		return nil, fmt.Errorf("GET %s: %w", transfer.Redact(rawURL), err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", transfer.Redact(rawURL), Describe(resp))
	}
	if resp.ContentLength > maxBytes {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %d bytes, over the cap of %d", ErrTooLarge, resp.ContentLength, maxBytes)
	}
	resp.Body = &capReader{ReadCloser: resp.Body, left: maxBytes, max: maxBytes}
	return resp, nil
}

// Client returns a copy of hc (nil: a client without an overall timeout)
// that makes no request the guard refuses, whatever its method: its
// transport refuses a request whose URL Check refuses before anything is
// sent, and a redirect is followed only when Check passes its URL (the error
// says "redirect:" and wraps ErrForeignURL), five at most. A CheckRedirect
// of hc is asked first and may stop a redirect (http.ErrUseLastResponse: no
// redirect followed), never allow one the guard refuses. Get uses it; a
// caller that makes other requests to URLs an agent named (a probe that
// must see a 403, a descriptor's PUT) uses it to apply the same rule.
func (g Guard) Client(hc *http.Client) *http.Client {
	hc = cmp.Or(hc, &http.Client{})
	guarded := *hc
	guarded.Transport = &guardTransport{g: g, base: hc.Transport}
	own := hc.CheckRedirect
	guarded.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if own != nil {
			if err := own(r, via); err != nil {
				return err
			}
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if err := g.Check(r.URL); err != nil {
			return fmt.Errorf("redirect: %w", err)
		}
		return nil
	}
	return &guarded
}

// guardTransport refuses the requests its guard refuses and passes the
// others to base (nil: http.DefaultTransport), each with the W3C trace
// context of its request's context in its traceparent header, so that the
// agent's span of a download (or a descriptor's PUT) is in the caller's
// trace. Baggage is not sent: its values are the caller's.
type guardTransport struct {
	g    Guard
	base http.RoundTripper
}

// traceContext writes a request's traceparent and tracestate headers.
var traceContext = propagation.TraceContext{}

// newRequest is http.NewRequestWithContext for a request to an agent's file
// routes (an upload, tus, a deletion, a revocation), with the W3C trace
// context of ctx in its headers, as guardTransport adds it to downloads.
func newRequest(ctx context.Context, method, rawURL string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, rawURL, body)
	if err == nil {
		traceContext.Inject(ctx, propagation.HeaderCarrier(req.Header))
	}
	return req, err
}

func (t *guardTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := t.g.Check(r.URL); err != nil {
		if r.Body != nil {
			r.Body.Close() // a RoundTripper closes the body, even on an error
		}
		return nil, err
	}
	if trace.SpanContextFromContext(r.Context()).IsValid() {
		r = r.Clone(r.Context()) // a RoundTripper leaves its request as it is
		traceContext.Inject(r.Context(), propagation.HeaderCarrier(r.Header))
	}
	base := cmp.Or(t.base, http.DefaultTransport)
	return base.RoundTrip(r)
}

// capReader passes at most left bytes and fails with ErrTooLarge when there
// are more.
type capReader struct {
	io.ReadCloser
	left, max int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := c.ReadCloser.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("%w: more than the cap of %d bytes", ErrTooLarge, c.max)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}
