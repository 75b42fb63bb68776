package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentura/agentura/client"
)

// common are the flags both commands share: how to reach the agent.
type common struct {
	stdio bool
	token string
	// oauthClientID and tokenFile sign in to agents with AGENT_AUTH=oauth
	// (client.SignIn).
	oauthClientID string
	tokenFile     string
	baseURL       string
	output        string
	timeout       time.Duration
	verbose       bool
	maxMessage    sizeFlag // the cap on one JSON-RPC message (client.LimitMessages)
	command       []string // after "--", with --stdio
}

func (c *common) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.stdio, "stdio", false, "talk to a stdio agent started from the command after --")
	fs.StringVar(&c.token, "token", os.Getenv("AGENTURA_TOKEN"), "bearer token for agents with AGENT_AUTH=jwt (default $AGENTURA_TOKEN)")
	fs.StringVar(&c.oauthClientID, "oauth-client-id", os.Getenv("AGENTURA_OAUTH_CLIENT_ID"), "for agents with AGENT_AUTH=oauth: this host's "+
		"client id at the agent's identity provider (a public client for the redirect http://127.0.0.1/callback); the sign-in opens "+
		"in the browser and its tokens are kept in --token-file (default $AGENTURA_OAUTH_CLIENT_ID)")
	fs.StringVar(&c.tokenFile, "token-file", cmp.Or(os.Getenv("AGENTURA_TOKEN_FILE"), client.DefaultTokenFile()), "where OAuth tokens are kept, mode 0600 "+
		"(default $AGENTURA_TOKEN_FILE, else in the user's config folder)")
	fs.StringVar(&c.baseURL, "base-url", "", "the agent's HTTP base for /uploads and /files (default: the URL without /mcp; needed with --stdio for large files)")
	fs.StringVar(&c.output, "output", "text", "text, or json for scripts")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up on the whole command after this long")
	fs.BoolVar(&c.verbose, "v", false, "log transfers and the stdio agent's stderr")
	fs.Var(&c.maxMessage, "max-message", maxMessageHelp)
}

// maxMessageHelp is the help of --max-message, a flag of every command
// that talks to agents.
const maxMessageHelp = "largest JSON-RPC message an agent may send (its tool list, a tool's result): a larger one is refused, naming the agent (default 32MiB)"

func (c *common) check() error {
	if c.output != "text" && c.output != "json" {
		return fmt.Errorf("--output %q: use text or json", c.output)
	}
	if c.stdio && len(c.command) == 0 {
		return errors.New("--stdio needs the agent's command after --, e.g. -- fileagent --stdio")
	}
	if !c.stdio && len(c.command) > 0 {
		return errors.New("a command after -- is only used with --stdio")
	}
	if c.timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	return nil
}

// parse parses args into fs (which holds c's flags) and checks them. names
// are the positional arguments after the agent's URL ("tool" for call);
// with --stdio there is no URL. It returns the URL ("" with --stdio) and the
// other positional arguments; on a usage error it prints why and the usage.
func (c *common) parse(fs *flag.FlagSet, args []string, names []string, stderr io.Writer) (rawURL string, rest []string, ok bool) {
	pos, cmd, err := parseInterspersed(fs, args)
	if err != nil {
		return "", nil, false // the flag package has said why
	}
	c.command = cmd
	if !c.stdio {
		names = append([]string{"the agent's URL"}, names...)
	}
	if err := c.check(); err != nil || len(pos) != len(names) {
		err = cmp.Or(err, fmt.Errorf("want %d argument(s) (%s), got %d", len(names), strings.Join(names, ", "), len(pos)))
		fmt.Fprintf(stderr, "agentura %s: %v\n", fs.Name(), err)
		fs.Usage()
		return "", nil, false
	}
	if c.stdio {
		return "", pos, true
	}
	return pos[0], pos[1:], true
}

// parseInterspersed parses flags that may come before, between or after the
// positional arguments, up to a "--" that starts the stdio command.
func parseInterspersed(fs *flag.FlagSet, args []string) (positional, command []string, err error) {
	if i := slices.Index(args, "--"); i >= 0 {
		args, command = args[:i], args[i+1:]
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, command, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// newFlagSet makes a flag set whose errors and help go to stderr and do not exit.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// sizeFlag is a byte count written as 1048576, 512KiB, 10MiB, 1GiB (or KB/MB/GB, also powers of 1024).
type sizeFlag int64

func (s *sizeFlag) String() string { return strconv.FormatInt(int64(*s), 10) }

func (s *sizeFlag) Set(v string) error {
	t := strings.ToUpper(strings.TrimSpace(v))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a size such as 1048576, 512KiB or 10MiB", v)
	}
	*s = sizeFlag(n * mult)
	return nil
}

// defaultInline is the inline threshold shown in the help.
const defaultInline = client.DefaultInlineMaxBytes
