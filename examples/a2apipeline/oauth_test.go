package a2apipeline_test

import (
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/examples/a2apipeline"
	"github.com/agentura/agentura/internal/testkit/a2atest"
	"github.com/agentura/agentura/internal/testkit/hydratest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// TestForwardFilesToAnOAuthAgent: the pipeline binary forwards to a file
// agent with AGENT_AUTH=oauth, whose identity provider is a real Hydra, with
// the client credentials of PIPELINE_OAUTH_*: the call completes and the
// archive comes back. A pipeline without them fails the call saying which
// settings to give.
func TestForwardFilesToAnOAuthAgent(t *testing.T) {
	for _, k := range []string{"PIPELINE_OAUTH_ISSUER", "PIPELINE_OAUTH_CLIENT_ID", "PIPELINE_OAUTH_CLIENT_SECRET"} {
		t.Setenv(k, "") // the pipelines get only what each subtest gives, whatever the shell exported
	}
	p := hydratest.Start(t)
	fileagent := hydratest.Agent(t, p)
	clientSecret := p.ServiceClient(t, "pipeline-agent", "tools:call files:read files:write", fileagent)
	bin := mcptest.BuildBinary(t, "./cmd/a2apipeline", false)
	target := []string{"PIPELINE_AGENT_URL=" + fileagent, "PIPELINE_SKILL=archive_files"}
	msg := a2atest.Message("forward_files", map[string]any{"arguments": map[string]any{"name": "signed-in"}},
		a2atest.BytesPart("note.txt", "text/plain", []byte("forwarded with a token of the pipeline's own\n")))

	t.Run("with client credentials", func(t *testing.T) {
		pipeline := run(t, bin, append(target, "PIPELINE_OAUTH_ISSUER="+p.Issuer,
			"PIPELINE_OAUTH_CLIENT_ID=pipeline-agent", "PIPELINE_OAUTH_CLIENT_SECRET="+clientSecret)...)
		client, _ := a2atest.Connect(t, pipeline, mcptest.BearerToken(t, secret, "alice"))
		task := a2atest.Send(t, client, msg)
		if task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("forward_files: %s: %v", task.Status.State, a2atest.Text(task.Status.Message))
		}
		var names []string
		for _, a := range task.Artifacts {
			names = append(names, a.Name)
		}
		if !strings.Contains(strings.Join(names, " "), "signed-in.zip") {
			t.Errorf("artifacts %v, want signed-in.zip", names)
		}
	})

	t.Run("without them", func(t *testing.T) {
		pipeline := run(t, bin, target...)
		client, _ := a2atest.Connect(t, pipeline, mcptest.BearerToken(t, secret, "alice"))
		task := a2atest.Send(t, client, msg)
		a2atest.Failed(t, task, "PIPELINE_OAUTH_CLIENT_ID")
	})
}

// TestTargetFromEnvClientCredentials: the three PIPELINE_OAUTH_* settings
// make the target's client credentials; some without the others are an
// error naming what is missing.
func TestTargetFromEnvClientCredentials(t *testing.T) {
	t.Setenv("PIPELINE_AGENT_URL", "http://localhost:8000")
	t.Setenv("PIPELINE_SKILL", "archive_files")
	t.Setenv("PIPELINE_OAUTH_ISSUER", "https://idp.example.com")
	t.Setenv("PIPELINE_OAUTH_CLIENT_ID", "pipeline-agent")
	if _, err := a2apipeline.TargetFromEnv(); err == nil || !strings.Contains(err.Error(), "PIPELINE_OAUTH_CLIENT_SECRET is not set") {
		t.Errorf("without the secret: %v", err)
	}
	t.Setenv("PIPELINE_OAUTH_CLIENT_SECRET", "s3cret")
	target, err := a2apipeline.TargetFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if c := target.Credentials; c == nil || c.Issuer != "https://idp.example.com" || c.ClientID != "pipeline-agent" || c.ClientSecret != "s3cret" {
		t.Errorf("credentials = %+v", c)
	}
	for _, name := range []string{"PIPELINE_OAUTH_ISSUER", "PIPELINE_OAUTH_CLIENT_ID", "PIPELINE_OAUTH_CLIENT_SECRET"} {
		t.Setenv(name, "")
	}
	if target, err := a2apipeline.TargetFromEnv(); err != nil || target.Credentials != nil {
		t.Errorf("without client credentials: %+v %v", target, err)
	}
}
