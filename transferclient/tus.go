package transferclient

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentura/agentura/transfer"
)

// DefaultTusThreshold is the size from which clients upload with tus
// (resumable) rather than one POST to /uploads.
const DefaultTusThreshold = 64 << 20

// Tus sends files to an agent's resumable upload endpoint ([transfer.TusPath], the
// tus 1.0 protocol): it creates an upload, PATCHes its bytes in chunks, and
// after a dropped connection asks the agent (HEAD) where to resume, waiting
// longer between tries. An upload the agent no longer knows (404 or 410:
// it expired, or the replica holding it went away) is started over, at
// most maxRestarts times. The zero value is ready to use with
// http.DefaultClient and the defaults below.
type Tus struct {
	// Client sends the requests; it carries the caller's identity
	// (BearerTransport) when the agent wants one. nil: http.DefaultClient.
	Client *http.Client
	// ChunkBytes is the most one PATCH sends; 0 means 16 MiB.
	ChunkBytes int64
	// Retries is how many failures in a row are retried; 0 means 5, a
	// negative value none.
	Retries int
	// Backoff is the first wait after a failure, doubled after each
	// further failure in a row (up to 30 s); 0 means 500 ms.
	Backoff time.Duration
	// Progress, if set, is called with the bytes the agent holds so far
	// and the total after every chunk (and after a resume).
	Progress func(done, total int64)
}

// tusVersion is the protocol version every request names.
const tusVersion = "1.0.0"

// Send uploads size bytes of src to endpoint (the agent's [transfer.TusPath] URL) as
// the file name and returns the signed URL of the staged file (the File-Url
// of the completing answer), usable as any file input. src is read at
// offsets, so a resumed upload re-reads only what the agent lacks.
func (t *Tus) Send(ctx context.Context, endpoint, name string, src io.ReaderAt, size int64) (string, error) {
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("resumable upload of %s to %s: %w", name, transfer.Redact(endpoint), err)
	}
	loc, err := t.create(ctx, endpoint, name, size)
	if err != nil {
		return fail(err)
	}
	var offset int64
	failures, restarts := 0, 0
	// startOver makes a new upload when the agent no longer knows loc
	// (lost: its answer), to send everything again; it reports false when
	// the restarts are used up.
	startOver := func(lost error) (bool, error) {
		if !gone(lost) || restarts == maxRestarts {
			return false, nil
		}
		restarts++
		newLoc, err := t.create(ctx, endpoint, name, size)
		if err != nil {
			return false, fmt.Errorf("start over after %v: %w", lost, err)
		}
		loc, offset, failures = newLoc, 0, 0
		return true, nil
	}
	for {
		fileURL, next, err := t.patch(ctx, loc, src, offset, size)
		if again, serr := startOver(err); serr != nil {
			return fail(serr)
		} else if again {
			t.progress(0, size)
			continue
		}
		if err == nil && fileURL != "" {
			return fileURL, nil
		}
		if err == nil {
			offset, failures = next, 0
			continue
		}
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		if _, ok := errors.AsType[*tusFatal](err); ok {
			return fail(err)
		}
		// The connection dropped or the agent stumbled: wait, then ask
		// the agent how much it holds, and go on from there.
		for {
			failures++
			if failures > t.retries() {
				return fail(fmt.Errorf("gave up after %d tries in a row: %w", failures, err))
			}
			if err := sleep(ctx, t.backoff(failures)); err != nil {
				return fail(err)
			}
			var herr error
			offset, fileURL, herr = t.head(ctx, loc)
			if herr == nil {
				break
			}
			again, serr := startOver(herr)
			if again {
				break
			}
			if serr != nil {
				return fail(serr)
			}
			if _, ok := errors.AsType[*tusFatal](herr); ok {
				return fail(herr)
			}
			err = herr
		}
		if fileURL != "" {
			return fileURL, nil
		}
		t.progress(offset, size)
	}
}

// tusFatal is an answer that retrying does not change (4xx). gone marks
// the upload not there any more (404, 410): starting over may help.
type tusFatal struct {
	msg  string
	gone bool
}

func (e *tusFatal) Error() string { return e.msg }

// gone reports whether err says the upload is not there any more.
func gone(err error) bool {
	var fatal *tusFatal
	return errors.As(err, &fatal) && fatal.gone
}

// maxRestarts is how often one Send starts an upload over that the agent
// no longer knows.
const maxRestarts = 2

func (t *Tus) client() *http.Client {
	return cmp.Or(t.Client, http.DefaultClient)
}

func (t *Tus) retries() int {
	return max(cmp.Or(t.Retries, 5), 0) // 0 means 5, a negative value none
}

func (t *Tus) backoff(failures int) time.Duration {
	d := t.Backoff
	if d <= 0 {
		d = 500 * time.Millisecond
	}
	for i := 1; i < failures && d < 30*time.Second; i++ {
		d *= 2
	}
	return min(d, 30*time.Second)
}

func (t *Tus) progress(done, total int64) {
	if t.Progress != nil {
		t.Progress(done, total)
	}
}

// answerError describes a failed answer; 4xx other than 408, 409 and 429
// are fatal, the rest are retried.
func answerError(what string, resp *http.Response) error {
	msg := what + ": " + Describe(resp)
	switch c := resp.StatusCode; {
	case c == http.StatusNotFound || c == http.StatusGone:
		return &tusFatal{msg: msg, gone: true}
	case c >= 400 && c < 500 && c != http.StatusRequestTimeout && c != http.StatusConflict && c != http.StatusTooManyRequests:
		return &tusFatal{msg: msg}
	}
	return errors.New(msg)
}

// create makes the upload and returns its URL.
func (t *Tus) create(ctx context.Context, endpoint, name string, size int64) (string, error) {
	req, err := newRequest(ctx, http.MethodPost, endpoint, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Tus-Resumable", tusVersion)
	req.Header.Set("Upload-Length", strconv.FormatInt(size, 10))
	req.Header.Set("Upload-Metadata", "filename "+base64.StdEncoding.EncodeToString([]byte(name)))
	resp, err := t.client().Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		if noUploadEndpoint(resp.StatusCode) {
			return "", fmt.Errorf("%w (%w)", answerError("create", resp), ErrNoUploadEndpoint)
		}
		return "", answerError("create", resp)
	}
	loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	if err != nil || resp.Header.Get("Location") == "" {
		return "", &tusFatal{msg: "the agent created the upload without a usable Location"}
	}
	if !transfer.SameOrigin(loc, resp.Request.URL) {
		return "", &tusFatal{msg: fmt.Sprintf("the agent named an upload on another origin (%s); refusing to send the file there", transfer.Redact(loc.String()))}
	}
	return loc.String(), nil
}

// patch sends one chunk from offset and returns the File-Url when the
// upload is complete, else the new offset.
func (t *Tus) patch(ctx context.Context, loc string, src io.ReaderAt, offset, size int64) (fileURL string, next int64, err error) {
	chunk := t.ChunkBytes
	if chunk <= 0 {
		chunk = 16 << 20
	}
	n := min(chunk, size-offset)
	req, err := newRequest(ctx, http.MethodPatch, loc, io.NewSectionReader(src, offset, n))
	if err != nil {
		return "", 0, &tusFatal{msg: err.Error()}
	}
	req.ContentLength = n
	if n == 0 {
		req.Body = http.NoBody
	}
	req.Header.Set("Tus-Resumable", tusVersion)
	req.Header.Set("Content-Type", "application/offset+octet-stream")
	req.Header.Set("Upload-Offset", strconv.FormatInt(offset, 10))
	resp, err := t.client().Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return "", 0, answerError("send", resp)
	}
	next, err = strconv.ParseInt(resp.Header.Get("Upload-Offset"), 10, 64)
	if err != nil || next < offset || next > size {
		return "", 0, &tusFatal{msg: fmt.Sprintf("the agent answered an Upload-Offset of %q", resp.Header.Get("Upload-Offset"))}
	}
	t.progress(next, size)
	if next == size {
		u := resp.Header.Get(transfer.HeaderFileURL)
		if u == "" {
			return "", 0, &tusFatal{msg: "the agent completed the upload without a " + transfer.HeaderFileURL}
		}
		return u, next, nil
	}
	return "", next, nil
}

// head asks the agent how much of the upload it holds; a complete upload
// also names its file.
func (t *Tus) head(ctx context.Context, loc string) (offset int64, fileURL string, err error) {
	req, err := newRequest(ctx, http.MethodHead, loc, nil)
	if err != nil {
		return 0, "", &tusFatal{msg: err.Error()}
	}
	req.Header.Set("Tus-Resumable", tusVersion)
	resp, err := t.client().Do(req)
	if err != nil {
		return 0, "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, "", answerError("ask for the offset", resp)
	}
	offset, err = strconv.ParseInt(resp.Header.Get("Upload-Offset"), 10, 64)
	if err != nil || offset < 0 {
		return 0, "", &tusFatal{msg: fmt.Sprintf("the agent answered an Upload-Offset of %q", resp.Header.Get("Upload-Offset"))}
	}
	return offset, resp.Header.Get(transfer.HeaderFileURL), nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// TusEndpoint is the resumable upload URL of the agent at base.
func TusEndpoint(base *url.URL) string { return base.JoinPath(transfer.TusPath).String() }
