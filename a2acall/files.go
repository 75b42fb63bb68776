package a2acall

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/filetype"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transferclient"
)

// The files of a call: local inputs made file parts, produced files made
// local files.

// filePart is the file part of the local file at path: inline bytes up to
// InlineMaxBytes, above that a URI from the agent's uploads endpoint (when it
// offers one; otherwise inline all the same).
func (c *Client) filePart(ctx context.Context, hc *http.Client, base *url.URL, card *a2a.AgentCard, path string) (a2a.Part, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("input file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
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
		inlineMax = DefaultInlineMaxBytes
	}
	if uploads := uploadsURL(card); st.Size() > inlineMax && uploads != "" {
		up, err := transferclient.SendUpload(ctx, hc, sameHost(base, uploads, transfer.UploadsPath), name, f, st.Size())
		if err != nil {
			return nil, err
		}
		return a2a.FilePart{File: a2a.FileURI{FileMeta: meta, URI: up.URL}}, nil
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("input file: %w", err)
	}
	return a2a.FilePart{File: a2a.FileBytes{FileMeta: meta, Bytes: base64.StdEncoding.EncodeToString(data)}}, nil
}

// collect turns the final artifacts into a result with local files: the
// text and data of the "result" artifact, and per file artifact the file
// that arrived in chunks, else its bytes part when present, else its URI
// downloaded.
func (c *Client) collect(ctx context.Context, hc *http.Client, base *url.URL, taskID string, artifacts []*a2a.Artifact, status a2a.TaskStatus, chunks *assemblies) (_ *Result, err error) {
	res := &Result{TaskID: taskID, Dir: c.Dir}
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
		var lf File
		sum, _ := a.Metadata[transfer.MetaSHA256].(string) // "" from agents that announce none
		if asm := chunks.byID[a.ID]; asm != nil {
			lf, err = c.assembled(ctx, hc, base, dir, a, uriPart, asm)
		} else if bytesPart != nil {
			name := cmp.Or(bytesPart.Name, a.Name)
			r := base64.NewDecoder(base64.StdEncoding, strings.NewReader(bytesPart.Bytes))
			lf, err = c.save(dir, name, bytesPart.MimeType, transfer.VerifySHA256(r, sum, name))
		} else {
			lf, err = c.download(ctx, hc, base, dir, cmp.Or(uriPart.Name, a.Name), uriPart.MimeType, uriPart.URI, sum)
		}
		if err != nil {
			return nil, err
		}
		res.Files = append(res.Files, lf)
	}
	res.Text = cmp.Or(strings.Join(texts, "\n"), textOf(status.Message))
	return res, nil
}

// download fetches a produced file's URI, from the agent's origin or one of
// DownloadHosts only (transferclient.Guard): the URI comes from the other agent,
// and this client must not become a way into hosts the caller never named.
// It keeps the pace every produced file's download keeps
// (transferclient.Guard.Download: StallTimeout, MinDownloadRate, a dropped
// download resumed by Range). The content must hash to sha256 when the
// artifact announced one.
func (c *Client) download(ctx context.Context, hc *http.Client, base *url.URL, dir, name, mimeType, rawURI, sha256 string) (File, error) {
	guard := transferclient.Guard{Origin: base, AllowHosts: c.DownloadHosts, AllowSetting: "a2acall.Client.DownloadHosts"}
	pace := transferclient.Pace{StallTimeout: c.StallTimeout, MinRate: c.MinDownloadRate, Slack: paceSlack, Again: "call the skill again"}
	var lf File
	err := guard.Download(ctx, hc, rawURI, c.maxBytes(), pace, name, func(_ context.Context, body io.Reader, _ int64) error {
		var err error
		lf, err = c.save(dir, name, mimeType, transfer.VerifySHA256(body, sha256, name))
		return err
	})
	if err != nil {
		return File{}, fmt.Errorf("file %q: %w", name, c.capHint(err))
	}
	return lf, nil
}

// paceSlack is transferclient.PaceSlack, shortened by tests.
var paceSlack = transferclient.PaceSlack

// save writes r into dir under the cleaned name (a sub-path is kept),
// capped at MaxBytes, whole or not at all and never in place of a file that
// is there (transferclient.Save): an earlier call's file in a shared Dir keeps its
// name and this one gets "report (2).pdf".
func (c *Client) save(dir, name, mimeType string, r io.Reader) (File, error) {
	saved, err := transferclient.Save(dir, name, r, c.maxBytes(), 0o600)
	if err != nil {
		return File{}, fmt.Errorf("receive %q: %w", name, c.capHint(err))
	}
	if mimeType == "" {
		if mimeType, err = filetype.DetectFile(saved.Path, saved.Name); err != nil {
			return File{}, err
		}
	}
	return File{Path: saved.Path, Name: saved.Name, MIMEType: mimeType, Size: saved.Size}, nil
}

func (c *Client) maxBytes() int64 {
	if c.MaxBytes > 0 {
		return c.MaxBytes
	}
	return DefaultMaxBytes
}

// capHint names the setting that raises the cap in the error of a file over
// it.
func (c *Client) capHint(err error) error {
	if errors.Is(err, transferclient.ErrTooLarge) {
		return fmt.Errorf("%w (a2acall.Client.MaxBytes)", err)
	}
	return err
}
