package client

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentura/agentura/wire"
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

// ErrTooLarge is wrapped by the error of a download over the size cap.
var ErrTooLarge = errors.New("file too large")

// ErrForeignURL is wrapped by the error of a download URL that is neither on
// the agent's origin nor on an allowed host.
var ErrForeignURL = errors.New("download URL not on the agent's origin nor an allowed host")

// dataURI reads the blob of e into a data URI carrying name.
func dataURI(f io.Reader, mimeType, name string, size int64) (string, error) {
	base, _, err := mime.ParseMediaType(mimeType)
	if err != nil || base == "" {
		base = "application/octet-stream"
	}
	var b strings.Builder
	prefix := "data:" + base + ";name=" + url.PathEscape(name) + ";base64,"
	b.Grow(len(prefix) + int(base64.StdEncoding.EncodedLen(int(size))))
	b.WriteString(prefix)
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	if _, err := io.Copy(enc, f); err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// upload streams the registry file e to the agent's /uploads as a raw body
// and returns the signed URL the agent answers with.
func (m *Middleware) upload(ctx context.Context, e Entry, name string) (string, error) {
	if m.base == nil {
		return "", fmt.Errorf("%s is %s, over the inline limit of %d bytes, and the agent's base URL is unknown, so it cannot be uploaded: set Config.BaseURL (agentura: --base-url)",
			name, describeSize(e.Size), m.cfg.InlineMaxBytes)
	}
	f, err := openEntry(e)
	if err != nil {
		return "", err
	}
	defer f.Close()
	target := m.base.JoinPath("uploads").String()
	body := &progressReader{r: f, p: Progress{Direction: Upload, Name: name, Total: e.Size}, fn: m.cfg.Progress}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, body)
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", name, err)
	}
	req.ContentLength = e.Size
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("X-Filename", "UTF-8''"+url.PathEscape(name))
	m.authorize(req)
	resp, err := m.hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("upload %s to %s: %w", name, target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("upload %s to %s: %s", name, target, httpError(resp))
	}
	var up wire.Upload
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&up); err != nil {
		return "", fmt.Errorf("upload %s: the agent's answer is not the JSON of /uploads: %w", name, err)
	}
	if up.URL == "" {
		return "", fmt.Errorf("upload %s: the agent answered without a url", name)
	}
	body.finish()
	return up.URL, nil
}

// download streams rawURL into the registry under name, refusing foreign
// hosts and anything over the size cap.
func (m *Middleware) download(ctx context.Context, rawURL, name, source string) (Entry, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Entry{}, fmt.Errorf("download %s: %q is not an http(s) URL", name, redact(rawURL))
	}
	if err := m.allowed(u); err != nil {
		return Entry{}, fmt.Errorf("download %s: %w", name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return Entry{}, fmt.Errorf("download %s: %w", name, err)
	}
	m.authorize(req)
	resp, err := m.dl.Do(req)
	if err != nil {
		return Entry{}, fmt.Errorf("download %s from %s: %w", name, redact(rawURL), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Entry{}, fmt.Errorf("download %s from %s: %s", name, redact(rawURL), httpError(resp))
	}
	max := m.cfg.MaxDownloadBytes
	if resp.ContentLength > max {
		return Entry{}, fmt.Errorf("download %s: %w: %d bytes, over the cap of %d (Config.MaxDownloadBytes; agentura: --max-download)",
			name, ErrTooLarge, resp.ContentLength, max)
	}
	body := &progressReader{r: resp.Body, p: Progress{Direction: Download, Name: name, Total: resp.ContentLength}, fn: m.cfg.Progress}
	capped := &capReader{r: body, left: max}
	e, err := m.cfg.Registry.Add(ctx, name, bufio.NewReaderSize(capped, 256<<10), source)
	if capped.over {
		return Entry{}, fmt.Errorf("download %s: %w: more than the cap of %d bytes (Config.MaxDownloadBytes; agentura: --max-download)", name, ErrTooLarge, max)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("download %s: %w", name, err)
	}
	body.finish()
	return e, nil
}

// allowed reports whether u may be fetched: the agent's own origin, or a
// host of AllowHosts (host or host:port).
func (m *Middleware) allowed(u *url.URL) error {
	if m.base != nil && sameOrigin(m.base, u) {
		return nil
	}
	host := strings.ToLower(u.Hostname())
	hostPort := strings.ToLower(net.JoinHostPort(host, port(u)))
	for _, a := range m.cfg.AllowHosts {
		a = strings.ToLower(strings.TrimSpace(a))
		if a == host || a == hostPort {
			return nil
		}
	}
	if m.base == nil {
		return fmt.Errorf("%w: %s is refused; the agent's origin is unknown — set Config.BaseURL (agentura: --base-url) to the agent's HTTP base, or add the host to Config.AllowHosts (agentura: --allow-host) if you trust it",
			ErrForeignURL, u.Scheme+"://"+u.Host)
	}
	return fmt.Errorf("%w: %s is refused; the agent's origin is %s — add the host to Config.AllowHosts (agentura: --allow-host) if you trust it",
		ErrForeignURL, u.Scheme+"://"+u.Host, m.base.Scheme+"://"+m.base.Host)
}

// ownOrigin reports whether u lies on the agent's origin: only there does
// the bearer token go.
func (m *Middleware) ownOrigin(u *url.URL) bool { return m.base != nil && sameOrigin(m.base, u) }

// sameOrigin compares scheme, host and port; the names of the loopback
// interface (localhost, 127.0.0.0/8, ::1) count as one host, so an agent
// reached as 127.0.0.1 whose public URL says localhost is still itself.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && hostKey(a.Hostname()) == hostKey(b.Hostname()) && port(a) == port(b)
}

func hostKey(host string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" {
		return "loopback"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return "loopback"
	}
	return host
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// authorize adds the bearer token to a request bound for the agent's origin.
func (m *Middleware) authorize(req *http.Request) {
	if m.cfg.Token != "" && m.ownOrigin(req.URL) {
		req.Header.Set("Authorization", "Bearer "+m.cfg.Token)
	}
}

// checkRedirect applies the origin rule to every redirect of a download and
// drops the token when a redirect leaves the origin.
func (m *Middleware) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	if err := m.allowed(req.URL); err != nil {
		return fmt.Errorf("redirect: %w", err)
	}
	if !m.ownOrigin(req.URL) {
		req.Header.Del("Authorization")
	}
	return nil
}

// httpError describes an error answer: its status and the agent's JSON
// reason when there is one.
func httpError(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	var e wire.Error
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return resp.Status + ": " + e.Error
	}
	if s := strings.TrimSpace(string(b)); s != "" {
		return resp.Status + ": " + s
	}
	return resp.Status
}

// redact cuts the query (the token) off a URL for error messages.
func redact(raw string) string {
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		return raw[:i] + "?…"
	}
	return raw
}

// capReader passes at most left bytes and notes when there were more.
type capReader struct {
	r    io.Reader
	left int64
	over bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			c.over = true
			return 0, ErrTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// progressReader reports the bytes read through it.
type progressReader struct {
	r  io.Reader
	p  Progress
	fn func(Progress)
}

func (pr *progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
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

func describeSize(n int64) string { return fmt.Sprintf("%d bytes", n) }
