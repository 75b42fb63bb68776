package agentcore

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/settings"
)

// env is a lookup over a map.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

// TestMainFlags: every setting has its flag, a flag wins over the
// environment, a boolean flag works alone, and an agent's own settings and
// flags ride along.
func TestMainFlags(t *testing.T) {
	var own struct {
		Pages int
		Fast  bool
	}
	var extra string
	opts := mainOptions{}
	for _, opt := range []Option{
		WithSettings(
			settings.Int(&own.Pages, "AGENT_T_PAGES", 50, "most pages").Positive(),
			settings.Bool(&own.Fast, "AGENT_T_FAST", "go fast"),
		),
		WithFlags(func(fs *flag.FlagSet) { fs.StringVar(&extra, "greeting", "", "what to say") }),
	} {
		opt(&opts)
	}
	args := []string{"--mcp-stateless", "--url-ttl", "2h", "--t-fast", "--greeting=hi", "--stdio"}
	run, err := parseMain(Info{Name: "t"}, ":8001", args, env(map[string]string{
		"AGENT_URL_TTL": "3h", "AGENT_OUTPUT_TTL": "5h", "AGENT_T_PAGES": "7",
	}), opts, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := run.cfg
	if !c.MCPStateless || c.URLTTL != 2*time.Hour || c.OutputTTL != 5*time.Hour || c.Addr != ":8001" || !run.stdio {
		t.Errorf("framework settings = stateless %v, url ttl %v, output ttl %v, addr %q, stdio %v; want true, 2h (flag over env), 5h (env), :8001, true",
			c.MCPStateless, c.URLTTL, c.OutputTTL, c.Addr, run.stdio)
	}
	if own.Pages != 7 || !own.Fast || extra != "hi" {
		t.Errorf("agent's own: pages %d, fast %v, greeting %q; want 7, true, hi", own.Pages, own.Fast, extra)
	}

	// Every declared setting with a flag is on the command line.
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var c2 Config
	c2.Settings("t", "").Flags(fs, env(nil))
	for _, v := range c2.Settings("t", "") {
		if v.Flag == "" {
			if strings.HasPrefix(v.Env, "AGENT_") {
				t.Errorf("%s has no flag", v.Env)
			}
			continue
		}
		if fs.Lookup(v.Flag) == nil || v.Flag != settings.FlagName(v.Env) {
			t.Errorf("%s: no flag --%s", v.Env, settings.FlagName(v.Env))
		}
	}

	// Bad values: a flag's is refused naming the flag, the environment's
	// naming the variable, the agent's own like the framework's.
	if _, err := parseMain(Info{Name: "t"}, "", []string{"--url-ttl", "soon"}, env(nil), opts, io.Discard); !errors.Is(err, errBadFlags) {
		t.Errorf("--url-ttl soon: %v; want the flag refused", err)
	}
	_, err = parseMain(Info{Name: "t"}, "", nil, env(map[string]string{"AGENT_T_PAGES": "0", "AGENT_AUTH": "basic"}), opts, io.Discard)
	for _, name := range []string{"AGENT_T_PAGES", "AGENT_AUTH"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("bad AGENT_T_PAGES and AGENT_AUTH: %v; want both named", err)
		}
	}
}
