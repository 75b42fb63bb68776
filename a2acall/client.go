// Package a2acall calls skills of other agents over A2A with local files and
// brings the files they produce back as local files: the client side of
// agentura's A2A, for a tool that works with another agent (a pipeline step)
// or any Go program.
//
// It is a package of its own so that an agent that never calls a peer does
// not link a2a-go's client and the gRPC it brings: agentcore serves A2A, this
// package calls it. It knows the agents through the leaf package transfer
// (the protocol's names, the origin rule), transferclient (uploads, guarded
// downloads) and a2a-go's client, never through agentcore. The name says what it does and
// keeps clear of a2a-go's own a2aclient, which it imports.
package a2acall

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transferclient"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// DefaultInlineMaxBytes is the largest file a Client sends inline, as
// base64 bytes; a larger one is staged through the agent's uploads endpoint
// and sent by URI when the agent offers one.
const DefaultInlineMaxBytes = 1 << 20

// DefaultMaxBytes caps each received file unless Client.MaxBytes says
// otherwise: the agents' default AGENT_MAX_UPLOAD_BYTES (50 MiB), so that
// what one agent produces another takes.
const DefaultMaxBytes = 50 << 20

// File is a file another agent produced, on local disk.
type File struct {
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

// Result is what a skill of another agent returned.
type Result struct {
	// TaskID is the A2A task of the call.
	TaskID string
	// Text is the text of the result.
	Text string
	// Data is the structured content of the result, if any.
	Data map[string]any
	// Files are the produced files, in order, stored in Dir.
	Files []File
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

// Client calls skills of other agents over A2A with local files, and
// brings the files they produce back as local files. The zero value works;
// from inside an agentcore tool, set Dir to the call's WorkDir so that the
// results can be handed out with FileResponse without a copy.
type Client struct {
	// HTTPClient makes every request: agent card, JSON-RPC, uploads and
	// downloads. Default: a client without an overall timeout (the context
	// bounds a call).
	HTTPClient *http.Client
	// Token is sent as "Authorization: Bearer <Token>" to the agent (agents
	// with AGENT_AUTH=jwt), to its origin only (transfer.SameOrigin); its
	// sub owns the files of the call there.
	Token string
	// Credentials, when set, get a token by client credentials from the
	// identity provider the client is registered at (its Issuer) for an
	// agent whose card declares OAuth (AGENT_AUTH=oauth) and which takes
	// that provider's tokens; Token is then not sent to such an agent.
	// With neither Credentials nor Token nor an HTTPClient (which may sign
	// its requests itself), a call to such an agent is refused before it
	// is sent (ErrNoCredentials).
	Credentials *ClientCredentials
	// Dir receives the produced files. Empty: a new temporary folder per
	// call that brings files back (Result.Dir), which the caller
	// removes; a call that fails leaves none.
	Dir string
	// MaxBytes caps each received file. Default: DefaultMaxBytes.
	MaxBytes int64
	// InlineMaxBytes is the largest input sent inline. Default:
	// DefaultInlineMaxBytes.
	InlineMaxBytes int64
	// DownloadHosts are hosts ("host" or "host:port"), besides the agent's
	// origin, whose file URIs may be downloaded (an agent whose
	// AGENT_PUBLIC_URL names another host).
	DownloadHosts []string
	// StallTimeout is how long a file's download (its answer, then each
	// read of its body) may go without a byte before it fails with an
	// error wrapping transferclient.ErrStalled. Default:
	// transferclient.DefaultStallTimeout.
	StallTimeout time.Duration
	// MinDownloadRate is the average, in bytes a second, a file's download
	// must keep from transferclient.PaceSlack after its first byte on, or
	// it fails with an error wrapping transferclient.ErrStalled. Default:
	// transferclient.DefaultMinRate (1 KiB/s); negative: no minimum.
	MinDownloadRate int64
}

// CallSkill calls skill of the agent at agentURL (its base URL, where
// /.well-known/agent-card.json is served) with args and the local files at
// paths, as one message: a data part {"skill", "arguments"} and one file
// part per file. It follows the task over message/stream (message/send for
// an agent that does not stream) until it ends and returns its text, data
// and files. A task that fails is a *SkillError
// carrying the agent's reason. It asks for produced files in chunks as
// they are written (agentura agents send them so) and assembles them
// outside Dir, checked against their size and sha256; a stream that breaks
// is taken up with tasks/resubscribe, and the bytes it missed are fetched by
// the file's URL (docs/a2a.md, "Produced files in chunks"). A call whose ctx ends while
// the task runs cancels the task at the agent (tasks/cancel), as Send does.
func (c *Client) CallSkill(ctx context.Context, agentURL, skill string, args map[string]any, paths ...string) (*Result, error) {
	return c.Send(ctx, agentURL, Request{Skill: skill, Arguments: args, Files: paths})
}

// Request is one call of a skill, as Send makes it: what CallSkill takes,
// and what a caller that shows the task as it runs needs besides.
type Request struct {
	// Skill is the id of the skill in the agent's card.
	Skill string
	// Arguments are the skill's arguments (the data part's "arguments").
	Arguments map[string]any
	// Text, if not empty, goes as a text part after the data part: what
	// was asked for in words, for an agent that reads it.
	Text string
	// Files are local files, sent as one file part each, named by their
	// base names.
	Files []string
	// FileParams, when set, name the skill's file parameter each of Files
	// fills, by index (the part's metadata transfer.A2AKeyFileParam, read
	// by agentura agents); a file without one ("" or past the end) fills
	// the skill's first file parameter.
	FileParams []string
	// Status, if set, is told each status update of the task as it
	// arrives (from the goroutine of the call): an agentura agent's
	// progress reports are "working" updates.
	Status func(Status)
}

// Status is a status update of a task as Request.Status is told it.
type Status struct {
	// TaskID is the task's id at the agent.
	TaskID string
	// State is the task's state: "working", "input-required", ...
	State string
	// Text is the text of the update's message ("" when it has none).
	Text string
	// Progress and Total are an agentura agent's progress report
	// (metadata "progress" and "total"); 0 when the update has none.
	Progress, Total float64
}

// cancelTimeout bounds the tasks/cancel sent for a call whose context
// ended.
const cancelTimeout = 10 * time.Second

// Card reads the card of the agent at agentURL (its base URL, its A2A
// endpoint or its card URL), with the Client's token (to the agent's
// origin only).
func (c *Client) Card(ctx context.Context, agentURL string) (*a2a.AgentCard, error) {
	_, _, card, err := c.card(ctx, agentURL)
	return card, err
}

// card reads the card of the agent at agentURL and returns it with the
// agent's base URL and the HTTP client that carries the token there.
func (c *Client) card(ctx context.Context, agentURL string) (*url.URL, *http.Client, *a2a.AgentCard, error) {
	base, err := agentBase(agentURL)
	if err != nil {
		return nil, nil, nil, err
	}
	hc := transferclient.WithBearer(c.HTTPClient, c.Token, base)
	card, err := agentcard.NewResolver(hc).Resolve(ctx, base.String())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read the agent card of %s: %w", base, err)
	}
	return base, hc, card, nil
}

// Send calls a skill as CallSkill does, with what req adds: a text part,
// and the task's status updates as they arrive. When ctx ends while the
// task runs, the task is cancelled at the agent (tasks/cancel), and the
// error wraps ctx's.
func (c *Client) Send(ctx context.Context, agentURL string, req Request) (*Result, error) {
	skill, args, paths := req.Skill, req.Arguments, req.Files
	base, hc, card, err := c.card(ctx, agentURL)
	if err != nil {
		return nil, err
	}
	if c.Credentials != nil {
		if hc, err = c.withClientCredentials(ctx, hc, base, card); err != nil {
			return nil, err
		}
	} else if flow := clientCredentialsFlow(card); flow != nil && c.Token == "" && c.HTTPClient == nil && len(card.Security) > 0 {
		return nil, fmt.Errorf("call skill %s of %s: %w: its card asks for an OAuth 2.0 token (client credentials at %s); "+
			"set Client.Credentials to this caller's client at that identity provider (Issuer, client id and secret)", skill, base, ErrNoCredentials, flow.TokenURL)
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
	parts := a2a.ContentParts{a2a.DataPart{Data: map[string]any{transfer.A2AKeySkill: skill, transfer.A2AKeyArguments: args}}}
	if req.Text != "" {
		parts = append(parts, a2a.TextPart{Text: req.Text})
	}
	for i, p := range paths {
		part, err := c.filePart(ctx, hc, base, card, p)
		if err != nil {
			return nil, err
		}
		if fp, ok := part.(a2a.FilePart); ok && i < len(req.FileParams) && req.FileParams[i] != "" {
			fp.Metadata = map[string]any{transfer.A2AKeyFileParam: req.FileParams[i]}
			part = fp
		}
		parts = append(parts, part)
	}
	// The card's own endpoint, at the address the caller reached the agent
	// at; from the card the client also knows whether the agent streams (if
	// not, it sends message/send and gets the finished task).
	endpoint := sameHost(base, card.URL, transfer.A2APath)
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
	ctx, span := otel.Tracer(tracerName).Start(ctx, "a2a call "+skill, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("gen_ai.tool.name", skill), attribute.String("gen_ai.operation.name", "execute_tool")))
	defer span.End()
	msg.Metadata = traceMetadata(ctx)
	msg.Metadata[transfer.A2AKeyChunks] = true // produced files in chunks as they are written (chunks.go)
	chunks := &assemblies{max: c.maxBytes()}
	defer chunks.close()
	// A stream that breaks off (or ends before the task does) is taken up
	// again with tasks/resubscribe, a few times; after a break the ended
	// task is read with tasks/get, whose artifacts are the final word (the
	// stream may have missed some), and the chunks missed are fetched by
	// their files' URLs when the files are saved.
	events := client.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: msg})
	resumed := false
	for breaks := 0; ; breaks++ {
		var broke error
		for ev, err := range events {
			if err != nil {
				broke = err
				break
			}
			switch ev := ev.(type) {
			case *a2a.Task:
				taskID, status = string(ev.ID), ev.Status
				for _, a := range ev.Artifacts {
					track(a, false)
				}
			case *a2a.TaskStatusUpdateEvent:
				taskID, status = string(ev.TaskID), ev.Status
				if req.Status != nil {
					req.Status(statusOf(taskID, ev.Status, ev.Metadata))
				}
			case *a2a.TaskArtifactUpdateEvent:
				if !chunks.take(ev.Artifact) {
					track(ev.Artifact, ev.Append)
				}
			case *a2a.Message:
				status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: ev}
			}
		}
		if status.State.Terminal() || status.State == a2a.TaskStateInputRequired || (broke == nil && !resumed && taskID == "") {
			break
		}
		if resumed && errors.Is(broke, a2a.ErrTaskNotFound) {
			break // no longer executing: tasks/get below
		}
		if ctx.Err() != nil && taskID != "" && !status.State.Terminal() {
			span.SetStatus(codes.Error, "cancelled by the caller")
			return nil, cancelTask(ctx, client, skill, base, taskID)
		}
		if taskID == "" || ctx.Err() != nil || breaks >= maxResumes {
			if broke == nil {
				break // ended without a final state: a *SkillError below
			}
			span.SetStatus(codes.Error, "the call broke off") // the error may name URLs
			return nil, fmt.Errorf("call skill %s of %s: %w", skill, base, broke)
		}
		if breaks > 0 { // the agent may be restarting: wait a little longer each time
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(breaks) * 250 * time.Millisecond):
			}
		}
		resumed = true
		events = client.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: a2a.TaskID(taskID)})
	}
	if resumed {
		task, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: a2a.TaskID(taskID)})
		if err != nil {
			span.SetStatus(codes.Error, "the task could not be read after the stream broke")
			return nil, fmt.Errorf("call skill %s of %s: read task %s after its stream broke: %w", skill, base, taskID, err)
		}
		status = task.Status
		for _, a := range task.Artifacts {
			track(a, false)
		}
	}
	if ctx.Err() != nil && taskID != "" && !status.State.Terminal() {
		span.SetStatus(codes.Error, "cancelled by the caller")
		return nil, cancelTask(ctx, client, skill, base, taskID)
	}
	if status.State != a2a.TaskStateCompleted {
		state := cmp.Or(string(status.State), "without a result")
		span.SetStatus(codes.Error, "the task ended "+state)
		return nil, &SkillError{Agent: base.String(), Skill: skill, State: state, Message: textOf(status.Message)}
	}
	// Downloads go through the same client: the token goes with a URI on
	// the agent's origin only (signed URLs carry their own token anyway).
	return c.collect(ctx, hc, base, taskID, artifacts, status, chunks)
}

// maxResumes is how many times CallSkill takes up a broken stream.
const maxResumes = 5

// cancelTask cancels the task of a call whose context ended, so that it
// does not run on for no one, and returns the call's error: ctx's, with
// what became of the task.
func cancelTask(ctx context.Context, client *a2aclient.Client, skill string, base *url.URL, taskID string) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	if _, err := client.CancelTask(cctx, &a2a.TaskIDParams{ID: a2a.TaskID(taskID)}); err != nil {
		return fmt.Errorf("call skill %s of %s: %w; cancelling its task %s at the agent failed: %v", skill, base, context.Cause(ctx), taskID, err)
	}
	return fmt.Errorf("call skill %s of %s: %w; its task %s was cancelled at the agent", skill, base, context.Cause(ctx), taskID)
}

// statusOf is a status update as Request.Status is told it.
func statusOf(taskID string, st a2a.TaskStatus, meta map[string]any) Status {
	s := Status{TaskID: taskID, State: string(st.State), Text: textOf(st.Message)}
	s.Progress, _ = meta["progress"].(float64)
	s.Total, _ = meta["total"].(float64)
	return s
}

// agentBase is the base URL of an agent given by its base URL, its A2A
// endpoint or its card URL.
func agentBase(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("agent URL %q: give the agent's http(s) base URL, e.g. http://localhost:8001", raw)
	}
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(p, transfer.AgentCardPath)
	p = strings.TrimSuffix(p, transfer.A2APath)
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
		if ext.URI == transfer.A2AUploadsExtension {
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

// tracerName is the tracer of a2acall's spans.
const tracerName = "github.com/agentura/agentura/a2acall"

// traceMetadata is the message metadata that carries the trace of ctx to
// the agent: the W3C traceparent, tracestate and baggage, as MCP carries
// them in params._meta; empty without a trace.
func traceMetadata(ctx context.Context) map[string]any {
	md := map[string]any{}
	if trace.SpanContextFromContext(ctx).IsValid() {
		fields := propagation.MapCarrier{}
		propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}).Inject(ctx, fields)
		for k, v := range fields {
			md[k] = v
		}
	}
	return md
}
