package agentcore

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/agentura/agentura/settings"
)

// An Option changes what Main does: WithSettings, WithFlags, BeforeServe.
type Option func(*mainOptions)

// mainOptions is what the options of Main set.
type mainOptions struct {
	settings settings.List
	flags    []func(*flag.FlagSet)
	before   []func(context.Context, *Service) error
}

// WithSettings gives Main the agent's own settings (see package settings):
// they get flags beside the framework's, are read from the environment and
// their flags the same way, and a bad value stops start-up with the
// framework's message. Their fields hold their values, defaults filled,
// before register runs.
func WithSettings(vars ...*settings.Var) Option {
	return func(o *mainOptions) { o.settings = append(o.settings, vars...) }
}

// WithFlags lets the agent add flags of its own to Main's flag set; they are
// parsed before register runs.
func WithFlags(add func(*flag.FlagSet)) Option {
	return func(o *mainOptions) { o.flags = append(o.flags, add) }
}

// BeforeServe runs hook once the service is built and its tools registered,
// right before it serves; an error stops the program.
func BeforeServe(hook func(context.Context, *Service) error) Option {
	return func(o *mainOptions) { o.before = append(o.before, hook) }
}

// Main runs an agent program: configuration from the environment and
// mirroring flags (AGENT_DATA_DIR → --data-dir; a flag wins), --stdio for
// MCP over stdin/stdout, the service built and its tools registered by
// register, served until SIGINT or SIGTERM. defaultAddr is the listen
// address when AGENT_ADDR is unset ("" for DefaultAddr). It returns the
// process exit code; a cmd's main is os.Exit(agentcore.Main(...)).
func Main(info Info, defaultAddr string, args []string, register func(*Service) error, opts ...Option) int {
	var o mainOptions
	for _, opt := range opts {
		opt(&o)
	}
	run, err := parseMain(info, defaultAddr, args, os.LookupEnv, o, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		if !errors.Is(err, errBadFlags) {
			fmt.Fprintf(os.Stderr, "%s: bad configuration:\n  %s\n", info.Name, strings.ReplaceAll(err.Error(), "\n", "\n  "))
		}
		return 2
	}
	if run.health {
		return runHealthcheck(run.cfg.Addr)
	}
	var level slog.Level
	level.UnmarshalText([]byte(run.cfg.LogLevel)) // checked by the settings
	// Logs go to stderr: with --stdio, stdout carries the protocol.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	svc, err := New(info, run.cfg, logger)
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
	for _, hook := range o.before {
		if err := hook(ctx, svc); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", info.Name, err)
			return 1
		}
	}
	if run.stdio {
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

// errBadFlags is a command line the flag set refused (it said why).
var errBadFlags = errors.New("bad command line")

// mainRun is what the command line and the environment ask Main to do.
type mainRun struct {
	cfg           Config
	stdio, health bool
}

// parseMain reads the command line and the settings (through lookup, where
// flags win) of the framework and of o; flag errors and help go to output.
func parseMain(info Info, defaultAddr string, args []string, lookup func(string) (string, bool), o mainOptions, output io.Writer) (mainRun, error) {
	var run mainRun
	fs := flag.NewFlagSet(info.Name, flag.ContinueOnError)
	fs.SetOutput(output)
	fs.BoolVar(&run.stdio, "stdio", false, "serve MCP over stdin/stdout (the HTTP server for /files/ keeps running)")
	fs.BoolVar(&run.health, "healthcheck", false, "ask the agent running on AGENT_ADDR for /readyz; exit 0 when ready (for Docker HEALTHCHECK)")
	// The framework's flags check their text against fields of their own;
	// ConfigFromLookup below reads it again, with the environment's.
	var scratch Config
	lookup = append(scratch.Settings(info.Name, defaultAddr), o.settings...).Flags(fs, lookup)
	for _, add := range o.flags {
		add(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return run, err
		}
		return run, errBadFlags
	}
	cfg, err := ConfigFromLookup(lookup, info.Name, defaultAddr)
	if own := o.settings.Load(lookup); own != nil {
		err = errors.Join(err, own)
	} else {
		o.settings.Defaults()
		err = errors.Join(err, o.settings.Check())
	}
	run.cfg = cfg
	return run, err
}
