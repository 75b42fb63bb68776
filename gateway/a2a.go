package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/a2acall"
	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
)

// A2A agents beside MCP ones. An agent is taken for an A2A agent when its
// URL is its card (…/.well-known/agent-card.json) or its A2A endpoint
// (…/a2a), or when its URL answers, but not as an MCP endpoint, and the
// base of that URL serves a card. Each skill of its card is one tool of
// the shape a2aSchema describes; a call sends the message, the arguments
// and the named files (as file parts, through a2acall) and waits for the
// task. The files the task produced are registered and saved as an MCP
// agent's are (finish), its status updates are the host call's progress,
// and a host that cancels its call cancels the task (tasks/cancel). An
// agent whose card asks for a user's OAuth token is signed in to as an MCP
// agent is (auth.go), its token sent to its origin only.

// a2aPeer is what the gateway keeps of an A2A agent.
type a2aPeer struct {
	// url is where a2acall finds the card: the configured URL, or the
	// base of an MCP URL that turned out to be an A2A agent's.
	url string
	// signsIn is set (under the agent's mu) once its card asked for a
	// user's OAuth token: its calls then carry the token of the agent's
	// sign-in (auth.go), to its origin only.
	signsIn bool
}

// a2aSkillMeta is the key, in the _meta of the tool the gateway makes of
// a skill, of the skill's id (which a tool name may not be able to hold).
const a2aSkillMeta = "agentura/a2a-skill"

// errIsA2A is the "session" error of an A2A agent: it has none, its
// skills are called through a2acall.
var errIsA2A = errors.New("an A2A agent: called over A2A, without an MCP session")

// a2aURL reports whether raw names an A2A agent's card or endpoint.
func a2aURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	p := strings.TrimRight(u.Path, "/")
	return strings.HasSuffix(p, transfer.AgentCardPath) || strings.HasSuffix(p, transfer.A2APath)
}

// peerOf returns the agent's A2A side, nil for an MCP agent.
func (a *agent) peerOf() *a2aPeer {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.peer
}

// a2aClient is the a2acall client of one call (or card reading) of the
// agent a: its token to its origin only, its headers, the gateway's caps.
func (g *Gateway) a2aClient(a *agent) *a2acall.Client {
	c := &a2acall.Client{
		Token:         a.cfg.Token,
		MaxBytes:      g.cfg.MaxDownloadBytes,
		DownloadHosts: a.cfg.AllowHosts,
	}
	if c.MaxBytes <= 0 { // --max-download's default, as for MCP agents
		c.MaxBytes = client.DefaultMaxDownloadBytes
	}
	// 0: the default; negative: every file through the agent's uploads (1
	// byte inline at most), as for MCP agents.
	c.InlineMaxBytes = max(cmp.Or(g.cfg.InlineMaxBytes, client.DefaultInlineMaxBytes), 1)
	if len(a.cfg.Headers) > 0 {
		// To the agent's host alone, not with downloads from an --allow-host.
		u, _ := url.Parse(a.cfg.URL)
		c.HTTPClient = &http.Client{Transport: headerTransport{headers: a.cfg.Headers, host: u.Host}}
	}
	a.mu.Lock()
	p, o := a.peer, a.oauth
	a.mu.Unlock()
	if o != nil && p != nil && p.signsIn {
		if origin, err := a2aOrigin(p); err == nil {
			c.HTTPClient, c.Token = o.HTTPClient(c.HTTPClient, origin), ""
		}
	}
	return c
}

// probeCard reports whether the agent, whose URL answered but not as an
// MCP endpoint, serves an A2A card at the URL's base; if so it is an A2A
// agent from now on.
func (g *Gateway) probeCard(ctx context.Context, a *agent) bool {
	if a.base == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	card, err := g.a2aClient(a).Card(ctx, a.base)
	if err == nil && (card.Name == "" || card.URL == "") {
		err = errors.New("the JSON there has no name and url: no agent card")
	}
	if err != nil {
		g.log.Debug("no A2A card either", "agent", a.what, "err", err)
		return false
	}
	return true
}

// a2aTools reads the card of the A2A agent a and makes a tool of each
// skill. When the card cannot be read, it is read again in the background
// until it can, and the host is then given the tools.
func (g *Gateway) a2aTools(ctx context.Context, a *agent, p *a2aPeer) ([]*mcp.Tool, error) {
	cctx, cancel := context.WithTimeout(ctx, g.connectTimeout())
	card, err := g.a2aClient(a).Card(cctx, p.url)
	cancel()
	if err != nil {
		a.mu.Lock()
		first := a.down == nil
		a.down = err
		a.mu.Unlock()
		if first {
			g.log.Warn("agent not reachable; the gateway keeps trying", "agent", a.what, "err", err)
		}
		g.retryLater(a, false) // cardAnswers
		return nil, err
	}
	a.mu.Lock()
	if a.down != nil {
		g.log.Info("agent reachable", "agent", a.what)
	}
	a.down = nil
	if a.cfg.Name == "" {
		a.given = card.Name
	}
	a.mu.Unlock()
	if asksForSignIn(card) {
		// As for an MCP agent, the sign-in begins as the gateway meets the
		// agent; the tools are listed meanwhile (the card is public).
		if o, origin, err := g.a2aSignIn(a, p); err != nil {
			g.log.Warn("no sign-in to the agent", "agent", a.what, "err", err)
		} else if o != nil {
			g.startSignIn(ctx, a, o, origin)
		}
	}
	schemas := skillSchemas(card)
	tools := make([]*mcp.Tool, 0, len(card.Skills))
	for _, s := range card.Skills {
		tools = append(tools, skillTool(s, schemas[s.ID]))
	}
	return tools, nil
}

// cardAnswers reports whether the card of the A2A agent a can be read
// again (retryLater's attempt, which lists the tools anew when it can).
func (g *Gateway) cardAnswers(a *agent, p *a2aPeer) bool {
	ctx, cancel := context.WithTimeout(g.bg, g.connectTimeout())
	defer cancel()
	_, err := g.a2aClient(a).Card(ctx, p.url)
	return err == nil
}

// a2aSchema is the input schema of a tool made of an A2A skill: a skill's
// card describes its inputs in words, so every skill takes the same shape.
// The files are marked x-file, so that client.HostSchema shows them to the
// host as file names, like the file fields of an MCP agent's tools.
func a2aSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"message": map[string]any{
				"type":        "string",
				"description": "what to ask of the skill, in words (sent as a text part)",
			},
			"arguments": map[string]any{
				"type":        "object",
				"description": `the skill's arguments as its description and examples name them (sent as the "arguments" of the data part)`,
			},
			"files": map[string]any{
				"type":        "array",
				"description": "the files to send (one file part each)",
				"items":       map[string]any{"type": "string", transfer.KeywordFile: true, "description": "a file"},
			},
		},
		"additionalProperties": false,
	}
}

// a2aInput is a call's arguments, in a2aSchema's shape.
type a2aInput struct {
	Message   string         `json:"message"`
	Arguments map[string]any `json:"arguments"`
	Files     []string       `json:"files"`
}

// a2aFilesMeta is the key, in the _meta of the tool made of a skill whose
// card publishes its input schema, of the skill's file parameters: the
// top-level arguments that take files, as skillFiles reads them.
const a2aFilesMeta = "agentura/a2a-file-params"

// skillSchemas reads the input schemas an agentura agent's card publishes
// (the extension transfer.A2ASkillSchemasExtension), by skill id; nil for
// a card without them.
func skillSchemas(card *a2a.AgentCard) map[string]any {
	for _, e := range card.Capabilities.Extensions {
		if e.URI == transfer.A2ASkillSchemasExtension {
			return e.Params
		}
	}
	return nil
}

// skillFiles returns the file parameters of a skill's input schema (its
// top-level properties marked x-mcp-file, on themselves or on their items)
// and whether the schema can be used: every file it marks is such a
// parameter, which goes as file parts. A file deeper in the arguments
// (inside an object or an array of objects) could not, so the skill then
// keeps the generic shape.
func skillFiles(schema map[string]any) ([]mcpfile.Param, bool) {
	if schema == nil {
		return nil, false
	}
	params := mcpfile.Params(schema, nil)
	props, _ := schema["properties"].(map[string]any)
	rest := maps.Clone(schema)
	others := maps.Clone(props)
	for _, p := range params {
		delete(others, p.Name)
	}
	rest["properties"] = others
	return params, !fileMarked(rest, 0)
}

// fileMarked reports whether a schema node, or one below it, is marked
// x-file or x-mcp-file.
func fileMarked(v any, depth int) bool {
	if depth > 64 {
		return true // too deep to judge: taken for one
	}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if (k == transfer.KeywordFile || k == transfer.KeywordMCPFile) && x != nil && x != false {
				return true
			}
			if fileMarked(x, depth+1) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if fileMarked(x, depth+1) {
				return true
			}
		}
	}
	return false
}

// skillTool is the tool of an A2A skill: its id made fit for a tool name,
// its description with its examples, read-only when tagged so. Its input
// schema is the one the card publishes for the skill (schema, from
// skillSchemas), whose files the host gives by name, where it is usable
// (skillFiles); the generic shape a2aSchema otherwise.
func skillTool(s a2a.AgentSkill, schema any) *mcp.Tool {
	name := cmp.Or(strings.Trim(unsafeName.ReplaceAllString(s.ID, "_"), "_"), "skill")
	desc := s.Description
	if len(s.Examples) > 0 {
		desc = strings.TrimSpace(desc + "\n\nExamples: " + strings.Join(s.Examples, "; "))
	}
	t := &mcp.Tool{Name: name, Title: s.Name, Meta: mcp.Meta{a2aSkillMeta: s.ID}}
	m, _ := schema.(map[string]any)
	if files, ok := skillFiles(m); ok {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = f.Name
		}
		t.InputSchema, t.Meta[a2aFilesMeta] = m, names
	} else {
		desc = strings.TrimSpace(desc + `

(An A2A skill: give "files" by name, "arguments" as the skill names them, and "message" for what to ask in words.)`)
		t.InputSchema = a2aSchema()
	}
	t.Description = desc
	for _, tag := range s.Tags {
		if tag == "read-only" {
			t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
		}
	}
	return t
}

// callA2A calls the skill of an A2A agent that r names: the files resolved
// as for an MCP agent's tool (with the same refusals: nothing is sent when
// a name is wrong), the task's status updates sent as progress, its files
// registered and saved in Out (finish).
func (g *Gateway) callA2A(ctx context.Context, req *mcp.CallToolRequest, r route, p *a2aPeer, prog *callProgress) *mcp.CallToolResult {
	tool := req.Params.Name
	in, fail := g.a2aRequest(ctx, req, r)
	if fail != nil {
		return fail
	}
	if o, origin, err := g.a2aSignedIn(r.agent, p); err != nil {
		return toolError(fmt.Sprintf("%s: no sign-in to the agent %s: %s. Nothing was sent to the agent.", tool, r.agent.label(), scrub(err.Error())))
	} else if o != nil && g.startSignIn(ctx, r.agent, o, origin) {
		return toolError(fmt.Sprintf("%s: the agent %s signs its callers in with OAuth, and %s; call the tool again once you have signed in. Nothing was sent to the agent.", tool, r.agent.label(), errSigningIn))
	}
	skill, _ := r.tool.Meta[a2aSkillMeta].(string)
	res, err := g.a2aClient(r.agent).Send(ctx, p.url, a2acall.Request{
		Skill: skill, Arguments: in.Arguments, Text: in.Text, Files: in.Files, FileParams: in.FileParams,
		Status: func(s a2acall.Status) {
			if a2a.TaskState(s.State).Terminal() || s.Text == "" {
				return
			}
			msg := scrub(s.Text)
			if s.Total > 0 {
				msg = fmt.Sprintf("%s (%g of %g)", msg, s.Progress, s.Total)
			}
			prog.send(msg, true)
		},
	})
	if err != nil {
		var se *a2acall.SkillError
		switch {
		case ctx.Err() != nil:
			return toolError(fmt.Sprintf("%s: cancelled: %s", tool, scrub(err.Error())))
		case errors.As(err, &se):
			return toolError(fmt.Sprintf("%s: the agent %s's task ended %s: %s", tool, r.agent.label(), se.State, scrub(se.Message)))
		case errors.Is(err, a2acall.ErrNoCredentials):
			return toolError(fmt.Sprintf("%s: the agent %s signs its callers in with OAuth: give the gateway's client id at its identity provider (--oauth-client-id, $AGENTURA_OAUTH_CLIENT_ID or oauth_client_id in the configuration file) and the gateway signs you in with your browser. Nothing was sent to the agent.", tool, r.agent.label()))
		}
		// Short, and without the agent's URL where the reason is a common one.
		return toolError(fmt.Sprintf("%s: the call to the agent %s failed (%s); call the tool again once it answers.", tool, r.agent.label(), downReason(err)))
	}
	if res.Dir != "" {
		defer os.RemoveAll(res.Dir) // the registry holds copies now
	}
	out := g.a2aResult(ctx, res, tool)
	g.finish(ctx, out, tool)
	return out
}

// a2aRequest reads the host's arguments of a call to the skill of route
// r into what a2acall sends, the named files resolved (as for an MCP
// agent's tool, with the same refusals); or returns the error to answer,
// nothing sent. A skill with a published schema (a2aFilesMeta) takes its
// own arguments, each file parameter's names going as file parts that name
// the parameter; any other takes a2aSchema's shape.
func (g *Gateway) a2aRequest(ctx context.Context, req *mcp.CallToolRequest, r route) (*a2acall.Request, *mcp.CallToolResult) {
	tool := req.Params.Name
	raw := req.Params.Arguments
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	out := &a2acall.Request{}
	add := func(what, name, param string) *mcp.CallToolResult {
		e, err := g.a2aFile(ctx, name)
		if err != nil {
			return toolError(g.argumentError(tool, fmt.Errorf("argument %s: %w", what, err)))
		}
		out.Files = append(out.Files, e.Path) // the registry's copy, named as the conversation knows it
		out.FileParams = append(out.FileParams, param)
		return nil
	}
	if _, typed := r.tool.Meta[a2aFilesMeta]; typed {
		if err := json.Unmarshal(raw, &out.Arguments); err != nil {
			return nil, toolError(fmt.Sprintf("%s: the arguments are not a JSON object: %v. Nothing was sent to the agent.", tool, err))
		}
		if out.Arguments == nil {
			out.Arguments = map[string]any{}
		}
		schema, _ := r.tool.InputSchema.(map[string]any)
		files, _ := skillFiles(schema)
		for _, f := range files {
			v, given := out.Arguments[f.Name]
			if !given || v == nil {
				continue
			}
			delete(out.Arguments, f.Name) // sent as file parts instead
			names, isList := v.([]any)
			if !f.Array || !isList {
				names = []any{v}
			}
			for i, n := range names {
				what := f.Name
				if f.Array {
					what = fmt.Sprintf("%s[%d]", f.Name, i)
				}
				name, ok := n.(string)
				if !ok {
					return nil, toolError(g.argumentError(tool, fmt.Errorf("argument %s: %v is not a file name; give the name of a file (a string)", what, n)))
				}
				if fail := add(what, name, f.Name); fail != nil {
					return nil, fail
				}
			}
		}
		return out, nil
	}
	var in a2aInput
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, toolError(fmt.Sprintf(`%s: the arguments do not fit this A2A skill's shape {"message": "...", "arguments": {...}, "files": ["name", ...]}: %v. Nothing was sent to the agent.`, tool, err))
	}
	out.Arguments, out.Text = in.Arguments, in.Message
	for i, name := range in.Files {
		if fail := add(fmt.Sprintf("files[%d]", i), name, ""); fail != nil {
			return nil, fail
		}
	}
	return out, nil
}

// a2aFile is the registry entry of a file named in a call to an A2A
// agent: a registry name, else a file under a root (resolve), as for an
// MCP agent's tool. A data: URI or a URL is refused: an A2A skill gets
// files by name only.
func (g *Gateway) a2aFile(ctx context.Context, name string) (client.Entry, error) {
	if l := strings.ToLower(strings.TrimSpace(name)); strings.HasPrefix(l, "data:") || strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
		what := "a data: URI"
		if !strings.HasPrefix(l, "data:") {
			what = "the URL " + transfer.Redact(name)
		}
		return client.Entry{}, fmt.Errorf("%s is written where a file name goes: name a file instead — a file of this conversation (list_files) or a path under %s", what, g.roots)
	}
	e, err := g.reg.Lookup(name)
	if err != nil && errors.Is(err, client.ErrNotFound) {
		return g.resolve(ctx, name)
	}
	return e, err
}

// a2aResult is the MCP result of a finished A2A task, as client.Collect
// makes one of an MCP agent's: its text, its data as structured content,
// each produced file registered and named on a "Tool produced" line (and
// in _meta, transfer.MetaProduced), ready for finish.
func (g *Gateway) a2aResult(ctx context.Context, res *a2acall.Result, tool string) *mcp.CallToolResult {
	out := &mcp.CallToolResult{Meta: mcp.Meta{}}
	if res.Text != "" {
		out.Content = append(out.Content, &mcp.TextContent{Text: res.Text})
	}
	if res.Data != nil {
		out.StructuredContent = res.Data
	}
	var lines, names []string
	renamed := map[string]string{} // the agent's name of a file → its registry name
	for _, f := range res.Files {
		e, err := g.reg.AddFile(ctx, f.Path, f.Name, client.ToolSource(tool))
		if err != nil {
			g.log.Warn("produced file not registered", "name", f.Name, "err", err)
			lines = append(lines, fmt.Sprintf("%s%s, but the gateway could not keep it (%v)", transfer.ProducedPrefix, f.Name, err))
			continue
		}
		lines = append(lines, transfer.ProducedPrefix+e.Describe())
		names = append(names, e.Name)
		renamed[f.Name] = e.Name
	}
	client.ScrubProduced(out, renamed) // the agent's lines and URLs of its copies
	if len(lines) > 0 {
		out.Content = append(out.Content, &mcp.TextContent{Text: strings.Join(lines, "\n")})
		out.Meta[transfer.MetaProduced] = names
	}
	if len(out.Content) == 0 {
		out.Content = []mcp.Content{&mcp.TextContent{Text: "done"}}
	}
	return out
}
