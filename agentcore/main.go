package agentcore

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentura/agentura/agentcore/internal/ops"
	"github.com/agentura/agentura/internal/lib/otelsetup"
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

// WithSettings has Main read the agent's own settings before register runs.
func WithSettings(vars ...*settings.Var) Option {
	return func(o *mainOptions) { o.settings = append(o.settings, vars...) }
}

// WithFlags adds the agent's own flags to Main's flag set.
func WithFlags(add func(*flag.FlagSet)) Option {
	return func(o *mainOptions) { o.flags = append(o.flags, add) }
}

// BeforeServe runs hook right before serving; its error stops the program.
func BeforeServe(hook func(context.Context, *Service) error) Option {
	return func(o *mainOptions) { o.before = append(o.before, hook) }
}

// Main runs an agent program: settings from the environment and flags, then
// register, then serving until SIGINT or SIGTERM (--stdio: MCP over stdio),
// exporting spans when OTEL_* asks (docs/observability.md). defaultAddr is
// the address without AGENT_ADDR; it returns the exit code.
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
		return ops.RunHealthcheck(run.cfg.Addr)
	}
	var level slog.Level
	level.UnmarshalText([]byte(run.cfg.LogLevel)) // checked by the settings
	// Logs go to stderr: with --stdio, stdout carries the protocol.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	tracing, err := otelsetup.Start(context.Background(), info.Name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: bad configuration:\n  %v\n", info.Name, err)
		return 2
	}
	defer func() {
		// The spans and metrics still buffered go out before the process ends.
		ctx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
		defer cancel()
		if err := tracing.Shutdown(ctx); err != nil {
			logger.Warn("telemetry lost at stop", "err", err)
		}
	}()
	if tracing.Enabled() {
		logger.Info("tracing on: spans exported over OTLP (OTEL_* variables)")
	}
	if tracing.MetricsEnabled() {
		logger.Info("OTLP metrics on: the MCP operation durations exported (OTEL_* variables)")
	}
	ln, err := run.listen(logger)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", info.Name, err)
		return 1
	}
	defer ln.Close()
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
	serve := svc.Serve
	if run.stdio {
		serve = svc.serveStdio
	}
	if err := serve(ctx, ln); err != nil {
		logger.Error("agent stopped with an error", "err", err)
		return 1
	}
	return 0
}

// tracingFlushTimeout bounds how long a stopping agent waits for its
// collector to take the spans still buffered.
const tracingFlushTimeout = 5 * time.Second

// errBadFlags is a command line the flag set refused (it said why).
var errBadFlags = errors.New("bad command line")

// mainRun is what the command line and the environment ask Main to do.
type mainRun struct {
	cfg           Config
	stdio, health bool
	publicURLSet  bool // AGENT_PUBLIC_URL was given, not derived from the port
}

// listen binds the HTTP server's listener before the service is built, so
// that the download URLs it hands out carry the port actually bound: with
// AGENT_ADDR=127.0.0.1:0 the kernel picks it. Under --stdio the HTTP server
// only serves downloads and uploads to this one host, so when AGENT_ADDR
// cannot be bound (a second copy of the agent started by a desktop host) it
// falls back to a free loopback port and says so — unless AGENT_PUBLIC_URL
// was given, which names where downloads are served and would then be
// wrong.
func (run *mainRun) listen(logger *slog.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", run.cfg.Addr)
	if err != nil && run.stdio && !run.publicURLSet {
		fallback, ferr := net.Listen("tcp", "127.0.0.1:0")
		if ferr != nil {
			return nil, &ConfigError{Var: "AGENT_ADDR", Value: run.cfg.Addr, Err: errors.Join(err, ferr)}
		}
		logger.Warn("--stdio: AGENT_ADDR cannot be listened on; serving downloads on a free loopback port instead",
			"addr", run.cfg.Addr, "err", err, "downloads", fallback.Addr().String())
		ln, err = fallback, nil
	}
	if err != nil {
		return nil, &ConfigError{Var: "AGENT_ADDR", Value: run.cfg.Addr, Err: err}
	}
	if !run.publicURLSet {
		run.cfg.PublicURL = "http://localhost:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	}
	return ln, nil
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
	if v, ok := lookup("AGENT_PUBLIC_URL"); ok && v != "" {
		run.publicURLSet = true
	}
	return run, err
}
