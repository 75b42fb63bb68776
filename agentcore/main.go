package agentcore

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// envVars are the settings that flags of the same name in kebab case mirror
// (AGENT_DATA_DIR → --data-dir). A flag wins over the environment.
var envVars = []string{
	"AGENT_ADDR", "AGENT_PUBLIC_URL", "AGENT_DATA_DIR", "AGENT_SIGNING_KEY", "AGENT_SIGNING_KEY_FILE",
	"AGENT_URL_TTL", "AGENT_OUTPUT_TTL", "AGENT_STAGING_TTL", "AGENT_CLEANUP_SCHEDULE",
	"AGENT_MAX_UPLOAD_BYTES", "AGENT_EMBED_MAX_BYTES", "AGENT_INPUT_ROOTS", "AGENT_FETCH_ALLOW_HOSTS",
	"AGENT_FETCH_TIMEOUT", "AGENT_PEER_URLS", "AGENT_AUTH", "AGENT_AUTH_JWT_SECRET", "AGENT_AUTH_JWT_PUBLIC_KEY_FILE",
	"AGENT_STORAGE_URL", "AGENT_S3_REDIRECT", "AGENT_MCP_STATELESS", "AGENT_SHUTDOWN_TIMEOUT", "AGENT_LOG_LEVEL",
	"AGENT_A2A_STATUS_INTERVAL", "AGENT_TRUSTED_PROXIES",
}

// FlagName is the command-line flag mirroring an AGENT_* variable.
func FlagName(env string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(env, "AGENT_")), "_", "-")
}

// Main runs an agent program: configuration from the environment and
// mirroring flags, --stdio for MCP over stdin/stdout, the service built and
// its tools registered by register, served until SIGINT or SIGTERM. It
// returns the process exit code; a cmd's main is os.Exit(agentcore.Main(...)).
func Main(info Info, defaultAddr string, args []string, register func(*Service) error) int {
	fs := flag.NewFlagSet(info.Name, flag.ContinueOnError)
	stdio := fs.Bool("stdio", false, "serve MCP over stdin/stdout (the HTTP server for /files/ keeps running)")
	health := fs.Bool("healthcheck", false, "ask the agent running on AGENT_ADDR for /readyz; exit 0 when ready (for Docker HEALTHCHECK)")
	values := map[string]*string{}
	for _, env := range envVars {
		values[env] = fs.String(FlagName(env), "", "overrides "+env)
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	lookup := func(name string) (string, bool) {
		if v := values[name]; v != nil && *v != "" {
			return *v, true
		}
		return os.LookupEnv(name)
	}
	cfg, err := ConfigFromLookup(lookup, info.Name, defaultAddr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: bad configuration:\n  %s\n", info.Name, strings.ReplaceAll(err.Error(), "\n", "\n  "))
		return 2
	}
	if *health {
		return runHealthcheck(cfg.Addr)
	}
	var level slog.Level
	level.UnmarshalText([]byte(cfg.LogLevel)) // checked by ConfigFromLookup
	// Logs go to stderr: with --stdio, stdout carries the protocol.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	svc, err := New(info, cfg, logger)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", info.Name, err)
		return 1
	}
	defer svc.Close()
	if err := register(svc); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", info.Name, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *stdio {
		err = svc.RunStdio(ctx)
	} else {
		err = svc.Run(ctx)
	}
	if err != nil {
		logger.Error("agent stopped with an error", "err", err)
		return 1
	}
	return 0
}
