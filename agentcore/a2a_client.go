package agentcore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/filetype"
	"github.com/agentura/agentura/wire"
)

// DefaultA2AInlineMaxBytes is the largest file A2AClient sends inline, as
// base64 bytes; a larger one is staged through the agent's uploads endpoint
// and sent by URI when the agent offers one.
const DefaultA2AInlineMaxBytes = 1 << 20

// LocalFile is a file on local disk: an input to send, or a file another
// agent produced, downloaded.
type LocalFile struct {
	// Path is the local file.
	Path string
	// Name is the file's display name; it may hold a relative sub-path
	// ("images/diagram_002.png").
	Name string
	// MIMEType is the type the agent gave, or the one detected.
	MIMEType string
	// Size is the length in bytes.
	Size int64
}

// SkillResult is what a skill of another agent returned.
type SkillResult struct {
	// TaskID is the A2A task of the call.
	TaskID string
	// Text is the text of the result.
	Text string
	// Data is the structured content of the result, if any.
	Data map[string]any
	// Files are the produced files, in order, stored in the client's Dir.
	Files []LocalFile
}

// SkillError is a call that ended in a failed, canceled or rejected task.
type SkillError struct {
	Agent, Skill string
	State        string // the task's final state
	Message      string // the agent's reason: for a failed tool, its error text
}

// Error names the agent, the skill and the reason.
func (e *SkillError) Error() string {
	return fmt.Sprintf("skill %s of %s ended %s: %s", e.Skill, e.Agent, e.State, e.Message)
}

// A2AClient calls skills of other agents over A2A with local files, and
// brings the files they produce back as local files. The zero value works;
// from inside a tool, set Dir to the call's WorkDir so that the results can
// be handed out with FileResponse without a copy.
type A2AClient struct {
	// HTTPClient makes every request: agent card, JSON-RPC, uploads and
	// downloads. Default: a client without an overall timeout (the context
	// bounds a call).
	HTTPClient *http.Client
	// Token is sent as "Authorization: Bearer <Token>" to the agent (agents
	// with AGENT_AUTH=jwt); its sub owns the files of the call there.
	Token string
	// Dir receives the produced files. Empty: a new temporary folder per
	// call, which the caller removes.
	Dir string
	// MaxBytes caps each received file. Default: DefaultMaxUploadBytes.
	MaxBytes int64
	// InlineMaxBytes is the largest input sent inline. Default:
	// DefaultA2AInlineMaxBytes.
	InlineMaxBytes int64
	// DownloadHosts are hosts, besides the agent's own, whose file URIs may
	// be downloaded (an agent whose AGENT_PUBLIC_URL names another host).
	DownloadHosts []string
}

// CallSkill calls skill of the agent at agentURL (its base URL, where
// /.well-known/agent-card.json is served) with args and the local files at
// paths, as one message: a data part {"skill", "arguments"} and one file
// part per file. It follows the task over message/stream (message/send for
// an agent that does not stream) until it ends and returns its text, data
// and files. A task that fails is a *SkillError
// carrying the agent's reason.
func (c *A2AClient) CallSkill(ctx context.Context, agentURL, skill string, args map[string]any, paths ...string) (*SkillResult, error) {
	base, err := agentBase(agentURL)
	if err != nil {
		return nil, err
	}
	hc := c.httpClient()
	card, err := agentcard.NewResolver(hc).Resolve(ctx, base.String())
	if err != nil {
		return nil, fmt.Errorf("read the agent card of %s: %w", base, err)
	}
	if !slices.ContainsFunc(card.Skills, func(s a2a.AgentSkill) bool { return s.ID == skill }) {
		ids := make([]string, len(card.Skills))
		for i, s := range card.Skills {
			ids[i] = s.ID
		}
		return nil, fmt.Errorf("agent %s has no skill %q; its skills are %v", base, skill, ids)
	}
	if args == nil {
		args = map[string]any{}
	}
	parts := a2a.ContentParts{a2a.DataPart{Data: map[string]any{A2AKeySkill: skill, A2AKeyArguments: args}}}
	for _, p := range paths {
		part, err := c.filePart(ctx, hc, base, card, p)
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	// The card's own endpoint, at the address the caller reached the agent
	// at; from the card the client also knows whether the agent streams (if
	// not, it sends message/send and gets the finished task).
	endpoint := sameHost(base, card.URL, A2APath)
	reached := *card
	reached.URL, reached.PreferredTransport, reached.AdditionalInterfaces = endpoint, a2a.TransportProtocolJSONRPC, nil
	client, err := a2aclient.NewFromCard(ctx, &reached, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	defer client.Destroy()

	var (
		taskID    string
		artifacts []*a2a.Artifact
		status    a2a.TaskStatus
	)
	track := func(a *a2a.Artifact, appendParts bool) {
		for i, old := range artifacts {
			if old.ID == a.ID {
				if appendParts {
					old.Parts = append(old.Parts, a.Parts...)
				} else {
					artifacts[i] = a
				}
				return
			}
		}
		artifacts = append(artifacts, a)
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	for ev, err := range client.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: msg}) {
		if err != nil {
			return nil, fmt.Errorf("call skill %s of %s: %w", skill, base, err)
		}
		switch ev := ev.(type) {
		case *a2a.Task:
			taskID, status = string(ev.ID), ev.Status
			for _, a := range ev.Artifacts {
				track(a, false)
			}
		case *a2a.TaskStatusUpdateEvent:
			taskID, status = string(ev.TaskID), ev.Status
		case *a2a.TaskArtifactUpdateEvent:
			track(ev.Artifact, ev.Append)
		case *a2a.Message:
			status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: ev}
		}
	}
	if status.State != a2a.TaskStateCompleted {
		state := string(status.State)
		if state == "" {
			state = "without a result"
		}
		return nil, &SkillError{Agent: base.String(), Skill: skill, State: state, Message: textOf(status.Message)}
	}
	// Signed download URLs carry their own token: the bearer token stays
	// with the agent's endpoints and never goes to another host.
	return c.collect(ctx, c.plainClient(), base, taskID, artifacts, status)
}

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
		var e wire.Error
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(body))
		}
		return "", fmt.Errorf("upload %s to %s: %s: %s", name, endpoint, resp.Status, e.Error)
	}
	var up wire.Upload
	if err := json.Unmarshal(body, &up); err != nil || up.URL == "" {
		return "", fmt.Errorf("upload %s to %s: unexpected answer %q", name, endpoint, truncate(string(body), 200))
	}
	return up.URL, nil
}

// collect turns the final artifacts into a result with local files: the
// text and data of the "result" artifact, and per file artifact its bytes
// part when present, else its URI downloaded.
func (c *A2AClient) collect(ctx context.Context, hc *http.Client, base *url.URL, taskID string, artifacts []*a2a.Artifact, status a2a.TaskStatus) (*SkillResult, error) {
	res := &SkillResult{TaskID: taskID}
	dir := c.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "a2a-files-"); err != nil {
			return nil, err
		}
	}
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
		var lf LocalFile
		var err error
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
	if !strings.EqualFold(u.Hostname(), base.Hostname()) && !slices.ContainsFunc(c.DownloadHosts, func(h string) bool { return strings.EqualFold(h, u.Hostname()) || strings.EqualFold(h, u.Host) }) {
		return LocalFile{}, fmt.Errorf("file %q is at host %s, not at the agent's host %s; add it to A2AClient.DownloadHosts if it is trusted", name, u.Host, base.Host)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURI, nil)
	if err != nil {
		return LocalFile{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return LocalFile{}, fmt.Errorf("download %q from %s: %w", name, redactURL(rawURI), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return LocalFile{}, fmt.Errorf("download %q from %s: the server answered %s", name, redactURL(rawURI), resp.Status)
	}
	return c.save(dir, name, mimeType, resp.Body, taken)
}

// save writes r into dir under the cleaned name (a sub-path is kept),
// capped at MaxBytes. The file appears whole or not at all.
func (c *A2AClient) save(dir, name, mimeType string, r io.Reader, taken map[string]bool) (LocalFile, error) {
	maxBytes := c.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxUploadBytes
	}
	clean := UniqueName(fileserve.CleanName(name), taken)
	path := filepath.Join(dir, filepath.FromSlash(clean))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return LocalFile{}, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".part-*")
	if err != nil {
		return LocalFile{}, err
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing left to remove
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
	if err := os.Rename(tmp.Name(), path); err != nil {
		return LocalFile{}, err
	}
	if mimeType == "" {
		if mimeType, err = filetype.DetectFile(path, clean); err != nil {
			return LocalFile{}, err
		}
	}
	return LocalFile{Path: path, Name: clean, MIMEType: mimeType, Size: n}, nil
}

// plainClient makes requests without the bearer token.
func (c *A2AClient) plainClient() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return &http.Client{}
}

// httpClient makes requests to the agent's endpoints, with the token.
func (c *A2AClient) httpClient() *http.Client {
	hc := c.plainClient()
	if c.Token == "" {
		return hc
	}
	with := *hc
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	with.Transport = bearerTransport{token: c.Token, base: base}
	return &with
}

// bearerTransport sends a bearer token with every request.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

// RoundTrip sends r with the token.
func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// agentBase is the base URL of an agent given by its base URL, its A2A
// endpoint or its card URL.
func agentBase(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("agent URL %q: give the agent's http(s) base URL, e.g. http://localhost:8001", raw)
	}
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(p, AgentCardPath)
	p = strings.TrimSuffix(p, A2APath)
	u.Path, u.RawQuery, u.Fragment = p, "", ""
	return u, nil
}

// sameHost returns the URL an agent advertised (or base+fallback), moved to
// the scheme and host the caller reached the agent at: an agent behind
// another name (a container network) advertises its public address.
func sameHost(base *url.URL, advertised, fallback string) string {
	u, err := url.Parse(advertised)
	if err != nil || advertised == "" {
		return base.JoinPath(fallback).String()
	}
	out := *base
	out.Path = u.Path
	out.RawQuery = u.RawQuery
	return out.String()
}

func uploadsURL(card *a2a.AgentCard) string {
	for _, ext := range card.Capabilities.Extensions {
		if ext.URI == A2AUploadsExtension {
			if u, ok := ext.Params["url"].(string); ok {
				return u
			}
		}
	}
	return ""
}

func textOf(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var texts []string
	for _, p := range m.Parts {
		if t, ok := p.(a2a.TextPart); ok {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func nameOr(name, fallback string) string {
	if name != "" {
		return name
	}
	return fallback
}
