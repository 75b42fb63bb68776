// Package a2apipeline is an example agent that works with another agent
// over A2A: its one tool, forward_files, sends the files it is given to a
// skill of another agent (configured, not chosen by the caller) and hands
// out the files that came back as its own. It is the shape of a pipeline
// step such as "make these scans searchable with the OCR agent, then merge
// them with the composer", written with a2acall.Client: the tool sees
// local files going out and local files coming back.
package a2apipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/agentura/agentura/a2acall"
	"github.com/agentura/agentura/agentcore"
)

// Info names the agent.
var Info = agentcore.Info{
	Name:         "a2apipeline",
	Title:        "A2A pipeline example agent",
	Version:      "0.1.0",
	Instructions: "forward_files hands files to another agent's skill and returns what it produced.",
}

// DefaultAddr is where the agent listens unless AGENT_ADDR says otherwise.
const DefaultAddr = ":8003"

// Target is the skill of another agent that forward_files calls.
type Target struct {
	// AgentURL is the other agent's base URL (PIPELINE_AGENT_URL).
	AgentURL string
	// Skill is the skill to call (PIPELINE_SKILL).
	Skill string
	// Token is the bearer token for an agent with AGENT_AUTH=jwt
	// (PIPELINE_AGENT_TOKEN); its sub owns the files over there.
	Token string
	// Credentials sign in to an agent with AGENT_AUTH=oauth by client
	// credentials (PIPELINE_OAUTH_ISSUER, PIPELINE_OAUTH_CLIENT_ID,
	// PIPELINE_OAUTH_CLIENT_SECRET): this agent's own client at that
	// agent's identity provider, whose client id owns the files over there.
	// Nil: Token alone.
	Credentials *a2acall.ClientCredentials
	// HTTPClient makes the requests; nil: a default client.
	HTTPClient *http.Client
}

// TargetFromEnv reads the target from PIPELINE_AGENT_URL, PIPELINE_SKILL,
// PIPELINE_AGENT_TOKEN and, for an agent with AGENT_AUTH=oauth, the client
// credentials PIPELINE_OAUTH_ISSUER, PIPELINE_OAUTH_CLIENT_ID and
// PIPELINE_OAUTH_CLIENT_SECRET (all three, or none).
func TargetFromEnv() (Target, error) {
	env := func(name string) string { return strings.TrimSpace(os.Getenv(name)) }
	t := Target{AgentURL: env("PIPELINE_AGENT_URL"), Skill: env("PIPELINE_SKILL"), Token: env("PIPELINE_AGENT_TOKEN")}
	var errs []error
	if t.AgentURL == "" {
		errs = append(errs, errors.New("PIPELINE_AGENT_URL is not set: give the base URL of the agent to forward to, e.g. http://localhost:8000"))
	}
	if t.Skill == "" {
		errs = append(errs, errors.New("PIPELINE_SKILL is not set: name the skill of that agent to call, e.g. archive_files"))
	}
	creds := map[string]string{}
	for _, name := range oauthSettings {
		if v := env(name); v != "" {
			creds[name] = v
		}
	}
	if len(creds) > 0 {
		for _, name := range oauthSettings {
			if creds[name] == "" {
				errs = append(errs, fmt.Errorf("%s is not set: the client credentials for an agent with AGENT_AUTH=oauth need all of %s", name, strings.Join(oauthSettings, ", ")))
			}
		}
		t.Credentials = &a2acall.ClientCredentials{Issuer: creds["PIPELINE_OAUTH_ISSUER"],
			ClientID: creds["PIPELINE_OAUTH_CLIENT_ID"], ClientSecret: creds["PIPELINE_OAUTH_CLIENT_SECRET"]}
	}
	return t, errors.Join(errs...)
}

// oauthSettings are the client credentials' settings, given all or none.
var oauthSettings = []string{"PIPELINE_OAUTH_ISSUER", "PIPELINE_OAUTH_CLIENT_ID", "PIPELINE_OAUTH_CLIENT_SECRET"}

// ForwardInput are the arguments of forward_files.
type ForwardInput struct {
	Sources   []agentcore.FileAttachment `json:"sources" jsonschema:"the files to hand to the other agent's skill"`
	Arguments map[string]any             `json:"arguments,omitempty" jsonschema:"further arguments of that skill"`
}

// Register adds forward_files, calling target, to svc.
func Register(svc *agentcore.Service, target Target) error {
	if target.AgentURL == "" || target.Skill == "" {
		return errors.New("a2apipeline: the target needs an agent URL and a skill")
	}
	agentcore.AddTool(svc, agentcore.Tool{
		Name:        "forward_files",
		Description: fmt.Sprintf("Send files to the skill %s of the agent at %s over A2A, and return the files it produced.", target.Skill, target.AgentURL),
	}, func(ctx context.Context, call *agentcore.Call, in ForwardInput) (*agentcore.Result, error) {
		return forward(ctx, call, target, in)
	})
	return nil
}

func forward(ctx context.Context, call *agentcore.Call, target Target, in ForwardInput) (*agentcore.Result, error) {
	if len(in.Sources) == 0 {
		return nil, errors.New("sources is empty: give at least one file")
	}
	paths := make([]string, len(in.Sources))
	for i, src := range in.Sources {
		f, err := call.ResolveFileAttachment(ctx, src)
		if err != nil {
			return nil, err
		}
		paths[i] = f.Path
	}
	dir, err := call.WorkDir()
	if err != nil {
		return nil, err
	}
	// Received files land in the call's folder: FileResponse moves them
	// into the store instead of copying.
	client := &a2acall.Client{HTTPClient: target.HTTPClient, Token: target.Token, Credentials: target.Credentials, Dir: dir}
	got, err := client.CallSkill(ctx, target.AgentURL, target.Skill, in.Arguments, paths...)
	if errors.Is(err, a2acall.ErrNoCredentials) {
		return nil, fmt.Errorf("%w (this agent's: set %s)", err, strings.Join(oauthSettings, ", "))
	}
	if err != nil {
		return nil, err
	}
	firstLine, _, _ := strings.Cut(got.Text, "\n")
	text := fmt.Sprintf("%s answered: %s", target.Skill, firstLine)
	if len(got.Files) == 0 {
		return &agentcore.Result{Text: text, Data: got.Data}, nil
	}
	outputs := make([]agentcore.Output, len(got.Files))
	for i, f := range got.Files {
		// The type is detected here again: the other agent's word is not
		// what this agent serves its own downloads under.
		outputs[i] = agentcore.OutputFile(f.Name, f.Path)
	}
	res, err := call.FileResponse(ctx, outputs...)
	if err != nil {
		return nil, err
	}
	res.Text = text
	return res, nil
}
