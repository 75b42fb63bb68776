// Package agentcore is the framework an agent is built on: typed tools whose
// file parameters arrive as local files, outputs handed out by signed,
// expiring URLs, and the service that serves them over MCP and A2A. The model
// never handles bytes: it names files, client middleware moves them.
//
// A program hands Main a function that registers its tools with AddTool:
//
//	func main() { os.Exit(agentcore.Main(agentcore.Info{Name: "ocr"}, ":8001", os.Args[1:], register)) }
//
// A tool resolves inputs with Call.ResolveFileAttachment and hands files out
// with Call.FileResponse. docs/authoring.md is the author's guide; Example is a
// whole agent, and package agenttest runs one inside a test.
package agentcore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/agentcore/internal/a2abind"
	"github.com/agentura/agentura/agentcore/internal/apps"
	"github.com/agentura/agentura/agentcore/internal/callers"
	"github.com/agentura/agentura/agentcore/internal/callfiles"
	"github.com/agentura/agentura/agentcore/internal/httpguard"
	"github.com/agentura/agentura/agentcore/internal/mcpbind"
	"github.com/agentura/agentura/agentcore/internal/ops"
	"github.com/agentura/agentura/agentcore/internal/tasks"
	"github.com/agentura/agentura/agentcore/internal/transport"
	"github.com/agentura/agentura/agentcore/internal/urlfetch"
	"github.com/agentura/agentura/cleanup"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/connlimit"
	"github.com/agentura/agentura/internal/lib/filehttp"
	"github.com/agentura/agentura/internal/lib/mcptrace"
	"github.com/agentura/agentura/internal/lib/pdfpreview"
	"github.com/agentura/agentura/internal/lib/quota"
	"github.com/agentura/agentura/internal/lib/revocation"
	"github.com/agentura/agentura/signing"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
)

// Info names an agent.
type Info struct {
	Name         string // machine name, e.g. "ocr-agent"
	Version      string // the agent's version
	Title        string // optional human name
	Instructions string // how a model should use the agent's tools
}

// Service is an agent: its tools, store and HTTP endpoints. Main runs one.
type Service struct {
	info     Info
	cfg      Config
	log      *slog.Logger
	store    fileserve.Store
	proxies  *httpguard.TrustedProxies // AGENT_TRUSTED_PROXIES; nil: none
	signer   *signing.Signer
	files    *filehttp.Server
	tus      *filehttp.Tus
	revoked  *revocation.List    // revoked URLs and deleted files, shared by the replicas
	resolver *transport.Resolver // the one resolver, over the transports
	sweeper  *cleanup.Sweeper
	mcp      *mcpbind.Server // the MCP binding
	registry *prometheus.Registry
	metrics  *ops.Metrics
	callers  *callers.Guard     // who calls: AGENT_AUTH
	calls    *callfiles.Folders // each call's folder, and its outputs' commit
	slots    *ops.CallSlots
	limiter  *httpguard.RateLimiter // nil: no rate limit
	quota    *quota.Store           // nil: no owner quota (AGENT_OWNER_QUOTA_BYTES 0)
	pacer    *httpguard.BodyPacer   // nil: bodies not paced
	conns    *connlimit.Limiter
	scopes   *transport.Scopes   // what each anonymous caller produced
	fileURIs *transport.FileURIs // the draft MCP file contract's files
	inline   *transport.InlinePass
	views    *apps.Views     // MCP Apps views
	a2a      *a2abind.Server // the A2A binding
	// ledger is what MCP and A2A tasks share (tasks.go), tasks the MCP
	// tasks; both nil when the store keeps no records.
	ledger *tasks.Ledger
	tasks  *tasks.MCP

	mu        sync.RWMutex
	tools     map[string]*registeredTool
	toolOrder []string

	ready *ops.Readiness // /readyz and its checks

	draining context.Context // done when shutdown begins
	drain    context.CancelFunc

	handlerOnce sync.Once
	handler     http.Handler // built once by Handler
}

// New builds a service from cfg (see LoadConfig); nothing listens until Run.
func New(info Info, cfg Config, logger *slog.Logger) (_ *Service, err error) {
	if info.Name == "" {
		return nil, errors.New("agentcore: Info.Name is required")
	}
	if err := cfg.normalize(info.Name, ""); err != nil {
		return nil, err
	}
	if u, err := url.Parse(cfg.PublicURL); err == nil && u.Port() == "0" {
		return nil, &ConfigError{Var: "AGENT_PUBLIC_URL", Value: cfg.PublicURL, Err: errors.New(
			"port 0 lets the system pick a port, and URLs handed out need the one picked: start the agent with agentcore.Main, " +
				"which puts the bound port into the URLs, or listen first and set PublicURL to the listener's address")}
	}
	logger = cmp.Or(logger, slog.Default())
	// Whether spans name files is the process's, as its tracer provider
	// is: the agent's setting decides it.
	mcptrace.SetFileNames(cfg.TraceFileNames)
	s := &Service{
		info:     info,
		cfg:      cfg,
		log:      logger.With("agent", info.Name),
		registry: prometheus.NewRegistry(),
		tools:    map[string]*registeredTool{},
	}
	s.draining, s.drain = context.WithCancel(context.Background())
	s.metrics = ops.NewMetrics(s.registry)
	if s.proxies, err = httpguard.ParseTrustedProxies(cfg.TrustedProxies); err != nil {
		return nil, &ConfigError{Var: "AGENT_TRUSTED_PROXIES", Value: strings.Join(cfg.TrustedProxies, ","), Err: err}
	}
	s.slots = ops.NewCallSlots(cfg.MaxConcurrentCalls, cfg.QueueTimeout, s.metrics)
	s.limiter = httpguard.NewRateLimiter(cfg.RateLimit, cfg.RateBurst, s.metrics.Refused.WithLabelValues("rate_limit"), callers.VerifiedCallerID)
	s.pacer = httpguard.NewBodyPacer(cfg.BodyTimeout, cfg.MinBodyRate, s.metrics.Refused.WithLabelValues("slow_body"))
	var exempt func(netip.Addr) bool // the trusted proxies are not capped
	if s.proxies != nil {
		exempt = s.proxies.Trusts
	}
	s.conns = ops.NewConnLimiter(cfg.Limits, exempt, s.registry)

	store, scratch, redirect, err := cfg.openStore()
	if err != nil {
		return nil, err
	}
	// Every read for a caller goes through live: a file past its TTL is
	// gone there at once, whether or not the sweeper has deleted it yet.
	live := fileserve.NewTTLStore(store, cfg.areaTTL, nil)
	if s.store, err = ops.Instrument(live, s.registry); err != nil {
		return nil, err
	}
	if s.store, s.quota, err = ops.WithQuota(s.store, cfg.Limits, cfg.areaTTL, s.registry, s.metrics.Refused); err != nil {
		return nil, err
	}
	s.revoked = s.newRevocations()
	deleted := func(ctx context.Context, id string) { s.revoked.FileDeleted(ctx, id) }
	if s.calls, err = callfiles.Open(filepath.Join(scratch, "calls"), s.store, journalRecords(store), deleted); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.calls.Close() // a service that failed to start holds nothing
		}
	}()
	if cfg.Store == nil {
		// A store the program handed in may be shared with other services
		// of the process: its temporary files are left to Prune.
		s.calls.TagTemp(store, s.log)
	}

	keys, err := s.loadKeys()
	if err != nil {
		return nil, err
	}
	if s.signer, err = signing.NewSigner(cfg.PublicURL, keys); err != nil {
		return nil, err
	}
	s.ready = ops.NewReadiness(s.store, s.signer, func() (bool, time.Time) { return s.sweeper.StartupSweep() }, s.log)
	// The URL inputs' fetcher, which also reaches the identity provider.
	fetch := urlfetch.New(cfg.FetchAllowHosts, cfg.FetchTimeout).WithPeers(cfg.PeerURLs)
	if s.callers, err = callers.New(cfg.Access, cfg.PublicURL, fetch, s.log); err != nil {
		return nil, err
	}
	if o := s.callers.OAuth(); o != nil {
		s.ready.Add("identity_provider", o.Ready)
	}
	accel, _ := store.(fileserve.LocalPath) // the wrappers in front hide it
	s.files, err = filehttp.NewServer(filehttp.Config{
		Store:          s.store,
		Signer:         s.signer,
		PublicURL:      cfg.PublicURL,
		URLTTL:         cfg.URLTTL,
		MaxUploadBytes: cfg.MaxUploadBytes,
		Owner:          s.callers.Owner,
		Redirect:       redirect,
		Small:          live.SmallReader(),
		Logger:         s.log,
		Metrics:        s.registry,
		Revocations:    s.revoked,
		OwnerVerified:  s.callers.Authenticated(), // a bearer's sub (jwt or oauth) names the caller
		WriteTimeout:   cfg.WriteTimeout,
		AccelRedirect:  cfg.AccelRedirect,
		Accel:          accel,
		Previews:       pdfpreview.New(pdfpreview.Config{Logger: s.log}),
	})
	if err != nil {
		if cfg.AccelRedirect != "" {
			return nil, &ConfigError{Var: "AGENT_ACCEL_REDIRECT", Value: cfg.AccelRedirect, Err: err}
		}
		return nil, err
	}
	if s.tus, err = s.files.Tus(filehttp.TusConfig{Dir: filepath.Join(scratch, "tus"), TTL: cfg.StagingTTL}); err != nil {
		return nil, &ConfigError{Var: "AGENT_DATA_DIR", Value: scratch, Err: err}
	}
	records, _ := fileserve.As[fileserve.RecordStore](s.store)
	s.scopes = transport.NewScopes(records)
	s.fileURIs = transport.NewFileURIs(transport.FileURIConfig{PublicURL: cfg.PublicURL, Store: s.store, Files: s.files, Signer: s.signer,
		Presign: redirect, Records: records, Scopes: s.scopes, Authenticated: s.callers.Authenticated(), MaxUploadBytes: cfg.MaxUploadBytes,
		URLTTL: cfg.URLTTL, StagingTTL: cfg.StagingTTL, OutputTTL: cfg.OutputTTL, Tools: s.toolInfos, Log: s.log})
	s.resolver = transport.NewResolver(transport.Standard(transport.URL{Files: s.files, Fetch: fetch}, s.fileURIs,
		transport.NewPath(cfg.InputRoots, cfg.DataDir, cfg.SigningKeyFile)), cfg.MaxUploadBytes)
	s.inline = &transport.InlinePass{Store: s.store, Files: s.files, MaxUploadBytes: cfg.MaxUploadBytes, Owner: s.callers.Owner, Tool: s.toolInfo}
	s.sweeper, err = cleanup.New(cleanup.Config{
		// The store itself, not its instrumented wrapper: the sweeper uses
		// its expiry index (fileserve.ExpiryIndex) when it has one.
		Store:       store,
		BeforeSweep: func(context.Context) { s.calls.Reap() },
		AfterSweep: func(ctx context.Context) {
			if s.ledger != nil {
				s.ledger.Recharge(ctx)
			}
		},
		Rules: []cleanup.Rule{
			{Area: fileserve.Outputs, TTL: cfg.OutputTTL},
			{Area: fileserve.Staging, TTL: cfg.StagingTTL},
		},
		Records: []cleanup.RecordRule{
			{Kind: tasks.A2AKind, TTL: cfg.OutputTTL}, {Kind: tasks.MCPKind, TTL: cfg.OutputTTL},
			{Kind: tasks.CancelKind, TTL: cfg.OutputTTL}, {Kind: tasks.EndKind, TTL: cfg.OutputTTL}, {Kind: tasks.LeaseKind, TTL: tasks.LeaseSweep},
			{Kind: transport.ScopeRecordKind, TTL: cfg.OutputTTL}, {Kind: revocation.Kind, TTL: cfg.revocationTTL()},
			{Kind: transport.TicketRecordKind, TTL: cfg.StagingTTL},
		},
		Expirers: []cleanup.Expirer{{Name: "tus", TTL: cfg.StagingTTL, Expire: s.tus.Expire}},
		Schedule: cfg.CleanupSchedule,
		Logger:   s.log,
		Metrics:  s.registry,
	})
	if err != nil {
		return nil, &ConfigError{Var: "AGENT_CLEANUP_SCHEDULE", Value: cfg.CleanupSchedule, Err: err}
	}
	s.openTasks()
	s.mcp = mcpbind.New(mcpbind.Config{Name: info.Name, Title: info.Title, Version: info.Version, Instructions: info.Instructions,
		Log: s.log, Runner: runner{s}, Store: s.store, Files: s.files, Signer: s.signer, Handout: s.resolver.Handout,
		FileURIs: s.fileURIs, Scopes: s.scopes, Inline: s.inline, Callers: s.callers, Tasks: s.tasks,
		PublicURL: cfg.PublicURL, OutputTTL: cfg.OutputTTL, EmbedMaxBytes: cfg.EmbedMaxBytes, ResourceMaxBytes: cfg.ResourceMaxBytes,
		Stateless: cfg.MCPStateless, Draining: s.draining})
	s.a2a = a2abind.New(a2abind.Config{Name: info.Name, Title: info.Title, Version: info.Version, Instructions: info.Instructions,
		Log: s.log, Registry: s.registry, Runner: runner{s}, Store: s.store, Callers: s.callers, Inline: s.inline, Ledger: s.ledger,
		PublicURL: cfg.PublicURL, URLTTL: cfg.URLTTL, OutputTTL: cfg.OutputTTL, A2AStatusInterval: cfg.A2AStatusInterval, EmbedMaxBytes: cfg.EmbedMaxBytes})
	s.views = apps.New(apps.Config{MCP: s.mcp.SDK(), PublicURL: cfg.PublicURL, Signer: s.signer, URLTTL: cfg.URLTTL, MaxUploadBytes: cfg.MaxUploadBytes,
		Grant: s.fileURIs.GrantUploads, Adopt: s.fileURIs.AdoptUpload, Domain: uiDomain(cfg.UIDomain, cfg.PublicURL)})
	return s, nil
}

// openTasks sets up the tasks of a store that keeps records: the ledger
// both protocols share and the MCP tasks.
func (s *Service) openTasks() {
	rs, ok := fileserve.As[fileserve.RecordStore](s.store)
	if !ok {
		return
	}
	reserver, _ := fileserve.As[quota.Reserver](s.store)
	s.ledger = tasks.NewLedger(rs, reserver, s.cfg.TaskLease, s.cfg.TasksPerOwner, s.log, tasks.MCPKind, tasks.A2AKind)
	produced := func(ctx context.Context, scope string, stored []fileserve.Meta) { s.mcp.Produced(ctx, scope, stored) }
	s.tasks = tasks.NewMCP(s.ledger, s.cfg.OutputTTL, runner{s}, s.discardStored, produced, s.log)
}

// closeTasks ends the tasks running here failed, and waits for them.
func (s *Service) closeTasks() {
	if s.ledger != nil {
		s.ledger.Close(tasks.ErrShutdown)
	}
}

// discardStored deletes outputs nobody will take.
func (s *Service) discardStored(ctx context.Context, metas []fileserve.Meta) {
	for _, m := range metas {
		_ = s.store.Delete(context.WithoutCancel(ctx), m.Area, m.Owner, m.ID)
	}
}

// loadKeys returns the URL signing keys: from AGENT_SIGNING_KEY, from
// AGENT_SIGNING_KEY_FILE, or generated once and kept in the data folder so
// that URLs outlive a restart.
func (s *Service) loadKeys() ([]signing.Key, error) {
	switch {
	case len(s.cfg.SigningKeys) > 0:
		keys, err := signing.ParseKeys(strings.Join(s.cfg.SigningKeys, ","))
		if err != nil {
			return nil, &ConfigError{Var: "AGENT_SIGNING_KEY", Value: "(hidden)", Err: err}
		}
		return keys, nil
	case s.cfg.SigningKeyFile != "":
		keys, err := signing.LoadKeyFile(s.cfg.SigningKeyFile)
		if err != nil {
			return nil, &ConfigError{Var: "AGENT_SIGNING_KEY_FILE", Value: s.cfg.SigningKeyFile, Err: err}
		}
		return keys, nil
	}
	path := filepath.Join(s.cfg.DataDir, "signing.key")
	keys, created, err := signing.LoadOrCreateKeyFile(path)
	if err != nil {
		return nil, &ConfigError{Var: "AGENT_DATA_DIR", Value: s.cfg.DataDir, Err: err}
	}
	if created {
		s.log.Warn("generated a URL signing key and kept it in the data folder; set AGENT_SIGNING_KEY (or _FILE) to manage it yourself, and share it between replicas", "file", path)
	}
	return keys, nil
}

// AddReadinessCheck adds a check to /readyz; its error says what to install.
func (s *Service) AddReadinessCheck(name string, fn func(context.Context) error) {
	s.ready.Add(name, fn)
}

// Close releases what New took; call it once the service stopped serving.
func (s *Service) Close() error {
	s.closeTasks()
	s.calls.Close()
	s.callers.Close()
	return nil
}

// AgentCard returns the agent's A2A card: one skill per tool.
func (s *Service) AgentCard() *a2a.AgentCard { return s.a2a.Card() }

// Config returns the service's settings, defaults filled in.
func (s *Service) Config() Config { return s.cfg }

// MCPServer returns the underlying MCP server, to add prompts or resources.
func (s *Service) MCPServer() *mcp.Server { return s.mcp.SDK() }

// Registry returns the Prometheus registry of /metrics, for own metrics.
func (s *Service) Registry() *prometheus.Registry { return s.registry }

// Logger returns the service's logger.
func (s *Service) Logger() *slog.Logger { return s.log }

// Run serves HTTP on cfg.Addr until ctx is done, then shuts down gracefully.
func (s *Service) Run(ctx context.Context) error { return s.listenAnd(ctx, s.Serve) }

// listenAnd listens on cfg.Addr and serves there with serve.
func (s *Service) listenAnd(ctx context.Context, serve func(context.Context, net.Listener) error) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return &ConfigError{Var: "AGENT_ADDR", Value: s.cfg.Addr, Err: err}
	}
	return serve(ctx, ln)
}

// Serve is Run on a listener of the caller's. A service serves once.
func (s *Service) Serve(ctx context.Context, ln net.Listener) error {
	ops.FitMemoryLimit(s.log)
	if err := s.sweeper.Start(ctx); err != nil {
		ln.Close()
		return fmt.Errorf("start cleanup: %w", err)
	}
	defer s.sweeper.Stop()
	revCtx, stopRevocations := context.WithCancel(ctx)
	defer stopRevocations()
	go s.revoked.Run(revCtx)        // revocations and deletions of the other replicas
	go s.proxies.Run(revCtx, s.log) // the host names of AGENT_TRUSTED_PROXIES, looked up in the background

	server, ln := ops.HTTPServer(s.Handler(), s.cfg.Limits, s.conns, s.log, ln)
	errc := make(chan error, 1)
	go func() { errc <- server.Serve(ln) }()
	s.log.Info("agent serving", "addr", ln.Addr().String(), "public_url", s.cfg.PublicURL,
		"tools", len(s.Tools()), "auth", s.cfg.Auth, "mcp_stateless", s.cfg.MCPStateless)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down: letting requests in flight finish", "timeout", s.cfg.ShutdownTimeout)
	s.drain()
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := server.Shutdown(sctx); err != nil {
		server.Close()
		s.closeTasks()
		return fmt.Errorf("shutdown: %w", err)
	}
	// Tasks in flight finish like requests, or end failed.
	if s.ledger != nil && !s.ledger.Wait(sctx) {
		s.log.Warn("tasks still running at shutdown end failed; their callers call again")
	}
	s.closeTasks()
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	s.log.Info("stopped")
	return nil
}

// RunStdio is Run plus MCP over stdin/stdout; it also ends when stdin closes.
func (s *Service) RunStdio(ctx context.Context) error { return s.listenAnd(ctx, s.serveStdio) }

// serveStdio is RunStdio with the HTTP server on ln.
func (s *Service) serveStdio(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	httpErr := make(chan error, 1)
	go func() {
		err := s.Serve(ctx, ln)
		if err != nil {
			cancel() // without downloads, the agent is of no use: stop stdio too
		}
		httpErr <- err
	}()
	err := s.mcp.RunStdio(ctx)
	cancel()
	if herr := <-httpErr; herr != nil {
		return fmt.Errorf("HTTP server: %w", herr)
	}
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
