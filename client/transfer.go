package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

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
// announced one (sha256 "" when the agent announced none), under the
// download guard every produced file is fetched with
// (transferclient.Guard.Download): it fails with ErrStalled when the
// answer, or the next byte of its body, takes longer than StallTimeout, or
// when its bytes, from paceSlack after the first on, average less than
// MinDownloadRate; a download that failed on the network is asked again,
// or resumed by Range where it broke. The registry keeps nothing of a
// failed download.
func (m *Middleware) download(ctx context.Context, rawURL, name, sha256, source string) (Entry, error) {
	pace := transferclient.Pace{StallTimeout: m.cfg.StallTimeout, MinRate: m.cfg.MinDownloadRate, Slack: paceSlack, Again: "call the tool again"}
	var e Entry
	err := m.guard().Download(ctx, m.hc, rawURL, m.cfg.MaxDownloadBytes, pace, name, func(ctx context.Context, r io.Reader, size int64) error {
		body := &progressReader{r: r, p: Progress{Direction: Download, Name: name, Total: size}, fn: m.cfg.Progress}
		var err error
		if e, err = m.cfg.Registry.Add(ctx, name, bufio.NewReaderSize(transfer.VerifySHA256(body, sha256, name), 256<<10), source); err != nil {
			return err
		}
		body.finish()
		return nil
	})
	if err != nil {
		return Entry{}, fmt.Errorf("download %s: %w", name, withCapHint(err))
	}
	return e, nil
}

// guard is what every URL of the agent's is checked by before it is
// followed: the agent's origin, Config.AllowHosts, and the settings that
// widen them.
func (m *Middleware) guard() transferclient.Guard {
	return transferclient.Guard{Origin: m.base, AllowHosts: m.cfg.AllowHosts, AllowSetting: allowSetting, OriginSetting: originSetting}
}

// ErrStalled is wrapped by the error of a download that went
// Config.StallTimeout without a byte, or fell below Config.MinDownloadRate.
var ErrStalled = transferclient.ErrStalled

// paceSlack is PaceSlack, shortened by tests.
var paceSlack = PaceSlack

// withCapHint adds the setting that raises the cap to an error of a file
// over it.
func withCapHint(err error) error {
	if errors.Is(err, transferclient.ErrTooLarge) {
		return fmt.Errorf("%w (%s)", err, capSetting)
	}
	return err
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
