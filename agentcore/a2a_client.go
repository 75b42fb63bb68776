package agentcore

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
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
	// Files are the produced files, in order, stored in Dir.
	Files []LocalFile
	// Dir is the folder the files are in: the client's Dir, or, when that
	// is empty, a temporary folder made for this call, which the caller
	// removes ("" when no file came back and none was made).
	Dir string
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
	// call that brings files back (SkillResult.Dir), which the caller
	// removes; a call that fails leaves none.
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
	hc := c.httpClient(base)
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

// plainClient makes requests without the bearer token.
func (c *A2AClient) plainClient() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return &http.Client{}
}

// httpClient makes requests to the agent's endpoints, with the token on
// those bound for the agent's origin (base) only: a redirect elsewhere goes
// without it.
func (c *A2AClient) httpClient(base *url.URL) *http.Client {
	hc := c.plainClient()
	if c.Token == "" {
		return hc
	}
	with := *hc
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	with.Transport = bearerTransport{token: c.Token, origin: base, next: next}
	return &with
}

// bearerTransport sends a bearer token with the requests for one origin.
type bearerTransport struct {
	token  string
	origin *url.URL
	next   http.RoundTripper
}

// RoundTrip sends r, with the token if r goes to the origin.
func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if onAgentOrigin(b.origin, r.URL) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

// onAgentOrigin reports whether u lies on the origin of the agent at base:
// the same scheme and host:port, as written (another name of the same
// machine is another origin). The one rule for where the token goes and
// which file URIs need no DownloadHosts entry.
func onAgentOrigin(base, u *url.URL) bool {
	return strings.EqualFold(u.Scheme, base.Scheme) && strings.EqualFold(u.Host, base.Host)
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
