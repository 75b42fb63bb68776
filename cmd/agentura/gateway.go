package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/gateway"
)

// gatewayUsage is the synopsis of `agentura gateway`.
const gatewayUsage = "agentura gateway [flags] [AGENT_URL]...\n\n" +
	"An MCP server for any MCP host (Claude Desktop, VS Code, Goose, ...) that fronts the agents:\n" +
	"their tools take file names or paths under --root, and produced files are saved in --out.\n" +
	"AGENT_URL is an MCP endpoint (http://localhost:8001/mcp; a bare base gets /mcp) or an A2A agent's\n" +
	"card (http://localhost:9000/.well-known/agent-card.json), whose skills become tools; stdio agents,\n" +
	"tokens and headers per agent go in --config (JSON or YAML, see docs/gateway.md)."

// gatewayFlags are the flags of `agentura gateway`.
type gatewayFlags struct {
	config      string
	roots       listFlag
	out         string
	listen      string
	token       string
	oauthClient string
	tokenFile   string
	allowHosts  listFlag
	inlineMax   sizeFlag
	maxDownload sizeFlag
	maxMessage  sizeFlag
	allowURIs   bool
	verbose     bool
	inlineSet   bool // --inline-max is on the command line
}

func runGateway(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, listen, err := parseGatewayArgs(args, stderr)
	if errors.Is(err, errUsage) {
		return exitUsage
	}
	if err := serveGateway(ctx, cfg, listen, stderr); err != nil {
		fmt.Fprintf(stderr, "agentura gateway: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// errUsage is parseGatewayArgs' error once it has told the user why.
var errUsage = errors.New("usage")

// parseGatewayArgs reads the flags, the configuration file and the URLs of
// `agentura gateway` into a configuration and the --listen address.
func parseGatewayArgs(args []string, stderr io.Writer) (gateway.Config, string, error) {
	f := gatewayFlags{inlineMax: defaultInline}
	fs := newFlagSet("gateway", gatewayUsage, stderr)
	fs.StringVar(&f.config, "config", "", "configuration file (JSON or YAML): agents (url or command, token, headers), roots, out")
	fs.Var(&f.roots, "root", "a folder whose files may be named, by a path relative to it or an absolute path (repeatable; default: the current directory)")
	fs.StringVar(&f.out, "out", "", "folder under which each run saves produced files in a folder of its own, sub-folders kept, nothing overwritten (default ./"+gateway.DefaultOut+")")
	fs.StringVar(&f.listen, "listen", "", "serve streamable HTTP at http://ADDR/mcp (a loopback address such as 127.0.0.1:8090) instead of stdio")
	fs.StringVar(&f.token, "token", os.Getenv("AGENTURA_TOKEN"), "bearer token for agents with AGENT_AUTH=jwt that have none in --config (default $AGENTURA_TOKEN)")
	fs.StringVar(&f.oauthClient, "oauth-client-id", os.Getenv("AGENTURA_OAUTH_CLIENT_ID"), "for agents with AGENT_AUTH=oauth: the gateway's client id at "+
		"their identity provider; the sign-in URL is printed on stderr and opened in the browser (default $AGENTURA_OAUTH_CLIENT_ID)")
	fs.StringVar(&f.tokenFile, "token-file", os.Getenv("AGENTURA_TOKEN_FILE"), "where OAuth tokens are kept, mode 0600 (default $AGENTURA_TOKEN_FILE, else in the user's config folder)")
	fs.Var(&f.allowHosts, "allow-host", "a host (host or host:port) besides an agent's own that produced files may be fetched from (repeatable)")
	fs.Var(&f.inlineMax, "inline-max", "largest file sent inline as a data URI; larger ones go through /uploads (0: all; inline_max_bytes in --config)")
	fs.Var(&f.maxDownload, "max-download", "largest produced file fetched (default 1GiB)")
	fs.Var(&f.maxMessage, "max-message", maxMessageHelp+"; max_message_bytes in --config")
	fs.BoolVar(&f.allowURIs, "allow-file-uris", false, "pass data: URIs and http(s) URLs the model writes where a file name goes on to the agent (default: refused)")
	fs.BoolVar(&f.verbose, "v", false, "log calls and transfers to stderr")
	urls, _, err := parseInterspersed(fs, args)
	if err != nil {
		return gateway.Config{}, "", errUsage
	}
	fs.Visit(func(fl *flag.Flag) { f.inlineSet = f.inlineSet || fl.Name == "inline-max" })
	cfg, err := f.gatewayConfig(urls, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agentura gateway: %v\n", err)
		fs.Usage()
		return cfg, "", errUsage
	}
	return cfg, f.listen, nil
}

// gatewayConfig merges the configuration file, the flags and the URLs.
func (f *gatewayFlags) gatewayConfig(urls []string, stderr io.Writer) (gateway.Config, error) {
	var cfg gateway.Config
	if f.config != "" {
		var err error
		if cfg, err = gateway.LoadConfig(f.config); err != nil {
			return cfg, err
		}
	}
	for _, u := range urls {
		cfg.Agents = append(cfg.Agents, gateway.Agent{URL: u})
	}
	for i := range cfg.Agents {
		cfg.Agents[i].AllowHosts = append(cfg.Agents[i].AllowHosts, f.allowHosts...)
	}
	if len(f.roots) > 0 {
		cfg.Roots = f.roots
	}
	cfg.Out = cmp.Or(f.out, cfg.Out)
	cfg.Token = cmp.Or(f.token, cfg.Token)
	cfg.OAuthClientID = cmp.Or(f.oauthClient, cfg.OAuthClientID)
	cfg.TokenFile = cmp.Or(f.tokenFile, cfg.TokenFile)
	// A flag given wins over the file; 0 means every file through /uploads
	// in both (gateway.InlineMax).
	if f.inlineSet {
		cfg.InlineMaxBytes = gateway.InlineMax(int64(f.inlineMax))
	}
	if f.maxDownload > 0 {
		cfg.MaxDownloadBytes = int64(f.maxDownload)
	}
	if f.maxMessage > 0 {
		cfg.MaxMessageBytes = int64(f.maxMessage)
	}
	cfg.AllowFileURIs = cfg.AllowFileURIs || f.allowURIs
	cfg.Logger = stderrLogger(f.verbose, stderr)
	if len(cfg.Agents) == 0 {
		return cfg, errors.New("no agents: give an agent's MCP URL (http://localhost:8001/mcp) or a --config file naming agents")
	}
	return cfg, nil
}

// serveGateway connects to the agents and serves the host on stdio, or on
// streamable HTTP at listen, until ctx ends or the host goes.
func serveGateway(ctx context.Context, cfg gateway.Config, listen string, stderr io.Writer) error {
	if listen != "" {
		if err := checkLoopback(listen); err != nil {
			return err
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	g, err := gateway.New(cctx, cfg)
	cancel()
	if err != nil {
		return err
	}
	defer g.Close()
	if listen == "" {
		err := g.Server().Run(ctx, &mcp.StdioTransport{})
		if ctx.Err() != nil || errors.Is(err, io.EOF) {
			return nil // interrupted, or the host closed stdin: done
		}
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", g.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "agentura gateway: serving MCP at http://%s/mcp\n", ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// checkLoopback refuses a --listen address other than a loopback one: the
// gateway reads files under its roots for whoever connects.
func checkLoopback(listen string) error {
	host, _, err := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return fmt.Errorf("--listen %q: give a loopback address such as 127.0.0.1:8090: the gateway reads files under its roots for whoever connects", listen)
	}
	return nil
}
