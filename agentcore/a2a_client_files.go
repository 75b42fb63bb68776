package agentcore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/filename"
	"github.com/agentura/agentura/filetype"
	"github.com/agentura/agentura/transfer"
)

// The files of an A2AClient call: local inputs made file parts, produced
// files made local files.

// filePart is the file part of the local file at path: inline bytes up to
// InlineMaxBytes, above that a URI from the agent's uploads endpoint (when it
// offers one; otherwise inline all the same).
func (c *A2AClient) filePart(ctx context.Context, hc *http.Client, base *url.URL, card *a2a.AgentCard, path string) (a2a.Part, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("input file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("input file %s is not a regular file", path)
	}
	name := filepath.Base(path)
	mimeType, err := filetype.DetectFile(path, name)
	if err != nil {
		return nil, fmt.Errorf("input file: %w", err)
	}
	meta := a2a.FileMeta{Name: name, MimeType: mimeType}
	inlineMax := c.InlineMaxBytes
	if inlineMax <= 0 {
		inlineMax = DefaultA2AInlineMaxBytes
	}
	if uploads := uploadsURL(card); st.Size() > inlineMax && uploads != "" {
		u, err := c.upload(ctx, hc, sameHost(base, uploads, "/uploads"), path, name)
		if err != nil {
			return nil, err
		}
		return a2a.FilePart{File: a2a.FileURI{FileMeta: meta, URI: u}}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("input file: %w", err)
	}
	return a2a.FilePart{File: a2a.FileBytes{FileMeta: meta, Bytes: base64.StdEncoding.EncodeToString(data)}}, nil
}

// upload stages the file at path with the agent and returns its signed URL.
func (c *A2AClient) upload(ctx context.Context, hc *http.Client, endpoint, path, name string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("input file: %w", err)
	}
	defer f.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, f)
	if err != nil {
		return "", err
	}
	req.Header.Set("X-Filename", "UTF-8''"+url.PathEscape(name))
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("upload %s to %s: %w", name, endpoint, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		var e transfer.Error
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(body))
		}
		return "", fmt.Errorf("upload %s to %s: %s: %s", name, endpoint, resp.Status, e.Error)
	}
	var up transfer.Upload
	if err := json.Unmarshal(body, &up); err != nil || up.URL == "" {
		return "", fmt.Errorf("upload %s to %s: unexpected answer %q", name, endpoint, truncate(string(body), 200))
	}
	return up.URL, nil
}

// collect turns the final artifacts into a result with local files: the
// text and data of the "result" artifact, and per file artifact its bytes
// part when present, else its URI downloaded.
func (c *A2AClient) collect(ctx context.Context, hc *http.Client, base *url.URL, taskID string, artifacts []*a2a.Artifact, status a2a.TaskStatus) (_ *SkillResult, err error) {
	res := &SkillResult{TaskID: taskID, Dir: c.Dir}
	// Without a Dir, a temporary folder is made for the first file, and
	// removed again if the call fails: only a result hands it over.
	folder := func() (string, error) {
		if res.Dir != "" {
			return res.Dir, nil
		}
		d, err := os.MkdirTemp("", "a2a-files-")
		if err != nil {
			return "", fmt.Errorf("make a folder for the received files: %w", err)
		}
		res.Dir = d
		return d, nil
	}
	defer func() {
		if err != nil && c.Dir == "" && res.Dir != "" {
			os.RemoveAll(res.Dir)
		}
	}()
	var texts []string
	taken := map[string]bool{}
	for _, a := range artifacts {
		var bytesPart *a2a.FileBytes
		var uriPart *a2a.FileURI
		for _, p := range a.Parts {
			switch p := p.(type) {
			case a2a.TextPart:
				texts = append(texts, p.Text)
			case a2a.DataPart:
				if res.Data == nil {
					res.Data = p.Data
				}
			case a2a.FilePart:
				switch f := p.File.(type) {
				case a2a.FileBytes:
					bytesPart = &f
				case a2a.FileURI:
					uriPart = &f
				}
			}
		}
		if bytesPart == nil && uriPart == nil {
			continue
		}
		dir, err := folder()
		if err != nil {
			return nil, err
		}
		var lf LocalFile
		if bytesPart != nil {
			lf, err = c.save(dir, nameOr(bytesPart.Name, a.Name), bytesPart.MimeType, base64Reader(bytesPart.Bytes), taken)
		} else {
			lf, err = c.download(ctx, hc, base, dir, nameOr(uriPart.Name, a.Name), uriPart.MimeType, uriPart.URI, taken)
		}
		if err != nil {
			return nil, err
		}
		res.Files = append(res.Files, lf)
	}
	res.Text = strings.Join(texts, "\n")
	if res.Text == "" {
		res.Text = textOf(status.Message)
	}
	return res, nil
}

// download fetches a produced file's URI, from the agent's host or one of
// DownloadHosts only: the URI comes from the other agent, and this client
// must not become a way into hosts the caller never named.
func (c *A2AClient) download(ctx context.Context, hc *http.Client, base *url.URL, dir, name, mimeType, rawURI string, taken map[string]bool) (LocalFile, error) {
	u, err := url.Parse(rawURI)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return LocalFile{}, fmt.Errorf("file %q: the agent gave an unusable URI %q; expected http(s)", name, redactURL(rawURI))
	}
	if err := c.mayDownload(base, u); err != nil {
		return LocalFile{}, fmt.Errorf("file %q: %w", name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURI, nil)
	if err != nil {
		return LocalFile{}, err
	}
	// A redirect must meet the same rule as the URI itself.
	guarded := *hc
	guarded.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("stopped after 5 redirects")
		}
		if err := c.mayDownload(base, r.URL); err != nil {
			return fmt.Errorf("redirect: %w", err)
		}
		return nil
	}
	resp, err := guarded.Do(req)
	if err != nil {
		return LocalFile{}, fmt.Errorf("download %q from %s: %w", name, redactURL(rawURI), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return LocalFile{}, fmt.Errorf("download %q from %s: the server answered %s", name, redactURL(rawURI), resp.Status)
	}
	return c.save(dir, name, mimeType, resp.Body, taken)
}

// mayDownload reports whether u may be fetched: it lies on the agent's
// origin (scheme, host and port of base) or on a host of DownloadHosts
// ("host" for any port of it, or "host:port").
func (c *A2AClient) mayDownload(base, u *url.URL) error {
	if onAgentOrigin(base, u) {
		return nil
	}
	if slices.ContainsFunc(c.DownloadHosts, func(h string) bool { return strings.EqualFold(h, u.Hostname()) || strings.EqualFold(h, u.Host) }) {
		return nil
	}
	return fmt.Errorf("%s://%s is not the agent's origin %s://%s; add the host (or host:port) to A2AClient.DownloadHosts if it is trusted",
		u.Scheme, u.Host, base.Scheme, base.Host)
}

// save writes r into dir under the cleaned name (a sub-path is kept),
// capped at MaxBytes. The file appears whole or not at all, and never in
// place of one that is there.
func (c *A2AClient) save(dir, name, mimeType string, r io.Reader, taken map[string]bool) (LocalFile, error) {
	maxBytes := c.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxUploadBytes
	}
	clean := UniqueName(filename.Clean(name), taken)
	path := filepath.Join(dir, filepath.FromSlash(clean))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return LocalFile{}, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".part-*")
	if err != nil {
		return LocalFile{}, err
	}
	defer os.Remove(tmp.Name()) // the linked name stays
	n, err := io.Copy(tmp, io.LimitReader(r, maxBytes+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return LocalFile{}, fmt.Errorf("receive %q: %w", name, err)
	}
	if n > maxBytes {
		return LocalFile{}, fmt.Errorf("receive %q: larger than the limit of %d bytes (A2AClient.MaxBytes)", name, maxBytes)
	}
	// A hard link never replaces a file: one that is there already (an
	// earlier call's, in a shared Dir) keeps its name and this one takes a
	// distinct name, "report (2).pdf".
	wanted := filename.Clean(name)
	for tries := 0; ; tries++ {
		err := os.Link(tmp.Name(), path)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || tries >= 10000 {
			return LocalFile{}, fmt.Errorf("receive %q as %s: %w", name, path, err)
		}
		clean = UniqueName(wanted, taken)
		path = filepath.Join(dir, filepath.FromSlash(clean))
	}
	if mimeType == "" {
		if mimeType, err = filetype.DetectFile(path, clean); err != nil {
			return LocalFile{}, err
		}
	}
	return LocalFile{Path: path, Name: clean, MIMEType: mimeType, Size: n}, nil
}
