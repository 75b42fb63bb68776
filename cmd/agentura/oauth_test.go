package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/hydratest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// TestCallSignsInWithOAuth: the CLI, given only the agent's URL and its
// client id, meets the agent's 401, finds the identity provider (a real
// Hydra) through the agent's metadata, has the user sign in (the test is
// the browser: it follows the printed URL and submits the demo login
// form, which sends the code to the CLI's loopback listener), uploads a
// file with the token and saves the output; a second run signs in no more,
// the token kept in a file of its own (0600).
func TestCallSignsInWithOAuth(t *testing.T) {
	p := hydratest.Start(t)
	a := mcptest.NewAgent(t, agentBin, "AGENT_AUTH=oauth", "AGENT_OAUTH_ISSUER="+p.Issuer,
		"AGENT_FETCH_ALLOW_HOSTS="+strings.TrimPrefix(p.Issuer, "http://"))
	a.Start(t)
	a.WaitReady(t)
	p.PublicClient(t, "cli-host", "tools:call files:read files:write", a.URL)

	dir := t.TempDir()
	data := []byte(strings.Repeat("signed-in bytes\n", 200))
	writeFile(t, filepath.Join(dir, "in.txt"), data)
	tokens := filepath.Join(dir, "state", "tokens.json")
	args := []string{"call", a.URL, "archive_files", "--attach", "in.txt", "--json", `{"sources": ["in.txt"], "name": "signed"}`,
		"--inline-max", "0", "--out", "o", "--oauth-client-id", "cli-host", "--token-file", tokens}

	r := runSigningIn(t, dir, hydratest.Browser{User: "alice", Password: hydratest.Users["alice"], Deliver: true}, args...)
	if r.code != 0 {
		t.Fatalf("first call:\n%s", r)
	}
	if !strings.Contains(r.stderr, "Sign in to the agent's identity provider") {
		t.Errorf("no sign-in asked for:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "o", "signed.zip")); err != nil {
		t.Errorf("no output saved: %v\n%s", err, r)
	}
	st, err := os.Stat(tokens)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", err, st)
	}

	r = runCLIEnv(t, dir, []string{"AGENTURA_NO_BROWSER=1"}, args...)
	if r.code != 0 || strings.Contains(r.stderr, "Sign in") {
		t.Fatalf("second call, with the kept token:\n%s", r)
	}
}

// runSigningIn runs the CLI and acts as the user's browser for the sign-in
// URL it prints.
func runSigningIn(t *testing.T, dir string, b hydratest.Browser, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cliBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTURA_NO_BROWSER=1")
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if _, err := procgroup.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	signed := make(chan error, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			errb.WriteString(line + "\n")
			if u := strings.TrimSpace(line); !sent && strings.HasPrefix(u, "http") && strings.Contains(u, "/oauth2/auth?") {
				sent = true
				go func() { _, err := b.SignIn(ctx, u); signed <- err }()
			}
		}
	}()
	err := cmd.Wait()
	pw.Close()
	<-scanned
	select {
	case serr := <-signed:
		if serr != nil {
			t.Errorf("the browser step: %v", serr)
		}
	default:
	}
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run agentura %v: %v", args, err)
	}
	return r
}
