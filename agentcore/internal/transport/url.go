package transport

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/url"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/urlfetch"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/filehttp"
	"github.com/agentura/agentura/transfer"
)

// URL is the transport of http(s) URLs: in, this agent's own signed URLs
// (outputs, and inputs staged by POST /uploads or tus) are read from the
// store, any other is fetched behind the SSRF guard; out, every produced
// file gets a signed, expiring download URL.
type URL struct {
	Files *filehttp.Server  // this agent's signed URLs
	Fetch *urlfetch.Fetcher // everyone else's
}

// Schemes are http and https.
func (URL) Schemes() []string { return []string{"http", "https"} }

// Describe names the form.
func (URL) Describe() Description { return Description{Content: "http(s) URL"} }

// Resolves is not asked: the transport has schemes.
func (URL) Resolves(string) bool { return false }

// Offer signs m's download URL: the file's download_url and first link.
func (t URL) Offer(m fileserve.Meta, o *Offer) error {
	u, err := t.Files.URL(m)
	if err != nil {
		return err
	}
	o.File.DownloadURL = u
	o.Links = append(o.Links, u)
	return nil
}

// Open reads an own URL from the store, or fetches another.
func (t URL) Open(ctx context.Context, owner, rawURL string) (*Source, error) {
	if t.Files != nil {
		obj, meta, own, err := t.Files.OpenURL(ctx, rawURL, owner)
		if own {
			if err != nil {
				return nil, err
			}
			return &Source{ReadCloser: obj, Name: meta.Name, MIMEType: meta.MIMEType, Size: meta.Size, Where: "the staged file"}, nil
		}
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("malformed URL %q", transfer.Redact(rawURL))
	}
	resp, err := t.Fetch.Get(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	name := NameFromContent(resp.Request.URL.String())
	if _, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition")); err == nil && params["filename"] != "" {
		name = params["filename"]
	}
	where := transfer.Redact(rawURL)
	body := reportFetch(ctx, resp.Body, where, resp.ContentLength)
	return &Source{ReadCloser: readCloser{body, resp.Body}, Name: name, MIMEType: resp.Header.Get("Content-Type"), Size: resp.ContentLength,
		Where: where, ReadError: func(err error) error { return fmt.Errorf("fetch %s: %w", where, err) }}, nil
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// FetchReportEvery is how many bytes of a URL input are fetched between two
// reports to the caller.
const FetchReportEvery = 16 << 20

// reportFetch returns body, telling the caller of the call under ctx (as
// Call.Log at info) how much of a URL input has arrived every
// FetchReportEvery bytes. A fetch is reported as log messages, not
// progress: the tool's own progress has units of its own (pages, phases),
// and one request's progress may not go back.
func reportFetch(ctx context.Context, body io.Reader, url string, total int64) io.Reader {
	h := calls.HooksFrom(ctx)
	if h.Log == nil {
		return body
	}
	return &fetchReporter{r: body, hooks: h, url: url, total: total, next: FetchReportEvery}
}

type fetchReporter struct {
	r     io.Reader
	hooks *calls.Hooks
	url   string
	total int64 // -1: unknown
	got   int64
	next  int64
}

func (f *fetchReporter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	f.got += int64(n)
	if f.got >= f.next {
		for f.got >= f.next {
			f.next += FetchReportEvery
		}
		f.hooks.Send(slog.LevelInfo, "fetching an input", "url", f.url, "received_bytes", f.got, "total_bytes", f.total)
	}
	return n, err
}
