// Package cleanup deletes stored files once they have outlived the time to
// live of their area: outputs after AGENT_OUTPUT_TTL, staged inputs after
// AGENT_STAGING_TTL.
//
// It sweeps any [fileserve.Store], not only the one an agent opens: agentcore
// runs a Sweeper over the agents' store, and a service beside the agents
// that shares that store, or a program with a store of its own (disk, S3 or
// its own implementation), runs one the same way.
//
// A [Sweeper] walks each area of its store, deletes the files whose
// creation lies further back than the area's TTL, and then lets the store
// prune what is left empty or abandoned (owner folders without files,
// temporary files of interrupted writes). [Sweeper.Start] sweeps once right
// away, in the background (a restarted agent serves while it sweeps: a
// file past its TTL is never served, whether or not it is deleted yet), and
// then on a robfig/cron schedule (AGENT_CLEANUP_SCHEDULE). How late the
// sweeper deletes files is its lag, a metric and a warning.
//
// Sweeping is idempotent and needs no coordination: several sweepers, in one
// process or in several replicas sharing a store, may run at once. A file
// being downloaded while it is swept stays readable to its end (the Store
// contract guarantees it); new requests for it get 404.
package cleanup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"

	"github.com/agentura/agentura/fileserve"
)

// DefaultSchedule is the schedule used when Config.Schedule is empty; it is
// the default of AGENT_CLEANUP_SCHEDULE.
const DefaultSchedule = "@every 10m"

// MinInterval is the shortest "@every" interval a schedule may name; robfig/cron
// cannot fire more often and would silently round a shorter one up.
const MinInterval = time.Second

// Rule says how long files of one area are kept.
type Rule struct {
	// Area is the store area the rule applies to.
	Area fileserve.Area
	// TTL is the age, counted from Meta.Created, after which a file is
	// deleted. 0 keeps the area's files forever (the area is not swept).
	TTL time.Duration
}

// Config configures a [Sweeper]. Store and Rules are required.
type Config struct {
	// Store holds the files to sweep.
	Store fileserve.Store
	// Rules name the areas to sweep and their TTLs; each area at most once.
	Rules []Rule
	// Expirers are swept with the rules: things kept beside the store, such
	// as unfinished resumable uploads, each with its own TTL.
	Expirers []Expirer
	// Schedule is a robfig/cron spec: a descriptor ("@every 10m", "@hourly",
	// "@daily") or a standard 5-field spec ("*/5 * * * *"), optionally
	// preceded by "CRON_TZ=<zone> ". Empty means DefaultSchedule. New
	// validates it.
	Schedule string
	// Logger receives one line per sweep that deleted something or failed,
	// and debug lines otherwise. nil means slog.Default().
	Logger *slog.Logger
	// Metrics, when not nil, receives the counters agentura_sweeps_total{result},
	// agentura_swept_files_total{area} and agentura_swept_bytes_total{area},
	// the histogram agentura_sweep_duration_seconds and the gauge
	// agentura_sweep_lag_seconds. Sweepers sharing a registry share them.
	Metrics prometheus.Registerer
	// Now returns the current time, against which ages are measured.
	// nil means time.Now; tests pass a fake clock.
	Now func() time.Time
	// Records name kinds of records ([fileserve.RecordStore]) to expire, and
	// how long after its last write a record is kept; on a store without
	// records they do nothing.
	Records []RecordRule
	// Workers is how many deletions run at once; 0 means DefaultWorkers.
	Workers int
	// FullPruneEvery is how often a sweep of a store with an expiry index
	// ([fileserve.ExpiryIndex]) also runs the store's full Prune, which
	// reads every file (and indexes files of an older layout); the sweeps
	// in between only tidy. The first sweep always runs it. 0 means
	// DefaultFullPruneEvery.
	FullPruneEvery time.Duration
	// BeforeSweep, when not nil, runs at the start of every sweep: the
	// owner of the store reaps there what it alone can tell is abandoned
	// (agentcore: the unfinished calls and temporary files of processes
	// that stopped), before the areas are swept.
	BeforeSweep func(context.Context)
	// AfterSweep, when not nil, runs at the end of every sweep, once the
	// areas, records and expirers are swept: the owner of the store
	// re-counts there what depended on what went (agentcore: the task
	// records each owner's quota is charged for).
	AfterSweep func(context.Context)
}

// DefaultWorkers is the default of Config.Workers: deletions are mostly
// waiting on the file system or the S3 server, so a few run at once.
const DefaultWorkers = 8

// DefaultFullPruneEvery is the default of Config.FullPruneEvery.
const DefaultFullPruneEvery = time.Hour

// Expirer is something kept beside the store that a sweep expires.
type Expirer struct {
	// Name labels what it expires in logs and metrics (the area label).
	Name string
	// TTL is the age after which its things are removed; 0 never sweeps it.
	TTL time.Duration
	// Expire removes what was made before cutoff and reports how many
	// things and bytes it removed.
	Expire func(ctx context.Context, cutoff time.Time) (files int, bytes int64, err error)
}

// Stats summarise one sweep.
type Stats struct {
	// Examined is the number of files the sweep looked at: every file of
	// the areas it walked, and each expired file a store's expiry index
	// listed.
	Examined int
	// Files is the number of files deleted.
	Files int
	// Bytes is the total size of the files deleted.
	Bytes int64
	// Records is the number of records deleted.
	Records int
	// Errors counts failed walks, deletions and prunes; the sweep goes on
	// past each of them.
	Errors int
	// Duration is how long the sweep took (wall clock).
	Duration time.Duration
	// Lag is how long after its expiry the most overdue file of the sweep
	// was deleted; 0 when it deleted none.
	Lag time.Duration
}

// Sweeper deletes expired files of a store, on demand ([Sweeper.Sweep]) or on
// a schedule ([Sweeper.Start]). It is safe for concurrent use.
type Sweeper struct {
	store       fileserve.Store
	rules       []Rule
	records     []RecordRule
	spec        string
	log         *slog.Logger
	now         func() time.Time
	metrics     *metrics // nil: no metrics
	workers     int
	fullEvery   time.Duration
	beforeSweep func(context.Context)
	afterSweep  func(context.Context)
	expirers    []Expirer
	lagWarn     time.Duration // a lag beyond it is logged as a warning

	// busy is held by the sweep Start runs and by each scheduled one: a
	// scheduled sweep due while the start-up sweep runs is skipped.
	busy      sync.Mutex
	startup   chan struct{} // closed when the start-up sweep has ended
	startedAt time.Time     // when Start began the start-up sweep; guarded by mu

	pruneMu  sync.Mutex
	lastFull map[fileserve.Area]time.Time // when each area was last fully pruned

	mu      sync.Mutex
	state   runState
	cancel  context.CancelFunc // cancels the context of scheduled sweeps
	running sync.WaitGroup     // the start-up sweep and the scheduler
}

type runState int

const (
	idle runState = iota
	started
	stopped
)

// parser accepts what AGENT_CLEANUP_SCHEDULE documents: descriptors and
// standard 5-field specs (no seconds field).
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// New checks cfg and returns a Sweeper. It fails on a missing store, an
// unknown, repeated or negative rule, or a schedule that is not valid, never
// fires, or fires more often than MinInterval.
func New(cfg Config) (*Sweeper, error) {
	if cfg.Store == nil {
		return nil, errors.New("cleanup: Config.Store is required")
	}
	if len(cfg.Rules) == 0 {
		return nil, errors.New("cleanup: Config.Rules is empty: name each area to sweep and its TTL")
	}
	seen := make(map[fileserve.Area]bool, len(cfg.Rules))
	for _, r := range cfg.Rules {
		if !r.Area.Valid() {
			return nil, fmt.Errorf("cleanup: rule for unknown area %q; areas are %q and %q", r.Area, fileserve.Outputs, fileserve.Staging)
		}
		if seen[r.Area] {
			return nil, fmt.Errorf("cleanup: two rules for area %q", r.Area)
		}
		seen[r.Area] = true
		if r.TTL < 0 {
			return nil, fmt.Errorf("cleanup: TTL of area %q is %v; it must be positive, or 0 to keep files forever", r.Area, r.TTL)
		}
	}
	spec := cmp.Or(strings.TrimSpace(cfg.Schedule), DefaultSchedule)
	if err := CheckSchedule(spec); err != nil {
		return nil, err
	}
	sched, _ := parse(spec) // checked
	s := &Sweeper{
		lagWarn: lagWarnAfter(sched),
		startup: make(chan struct{}),
		store:   cfg.Store,
		rules:   append([]Rule(nil), cfg.Rules...),
		spec:    spec,
		log:     cmp.Or(cfg.Logger, slog.Default()),
		now:     cfg.Now,

		beforeSweep: cfg.BeforeSweep,
		afterSweep:  cfg.AfterSweep,
		expirers:    append([]Expirer(nil), cfg.Expirers...),
	}
	for _, e := range s.expirers {
		if e.Name == "" || e.Expire == nil || e.TTL < 0 {
			return nil, fmt.Errorf("cleanup: expirer %q needs a name, an Expire function and a TTL of 0 or more", e.Name)
		}
	}
	if s.now == nil {
		s.now = time.Now
	}
	if cfg.Workers < 0 || cfg.FullPruneEvery < 0 {
		return nil, fmt.Errorf("cleanup: Workers (%d) and FullPruneEvery (%v) must not be negative; 0 means the default", cfg.Workers, cfg.FullPruneEvery)
	}
	s.workers, s.fullEvery = cmp.Or(cfg.Workers, DefaultWorkers), cmp.Or(cfg.FullPruneEvery, DefaultFullPruneEvery)
	var err error
	if s.records, err = checkRecordRules(cfg.Records); err != nil {
		return nil, err
	}
	s.lastFull = map[fileserve.Area]time.Time{}
	if cfg.Metrics != nil {
		if s.metrics, err = newMetrics(cfg.Metrics, s.rules); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// lagWarnAfter is the lag beyond which a sweep is logged as a warning: two
// periods of the schedule (a file expiring right after a sweep waits one),
// and at least minLagWarn.
func lagWarnAfter(sched cron.Schedule) time.Duration {
	first := sched.Next(time.Now())
	return max(2*sched.Next(first).Sub(first), minLagWarn)
}

// minLagWarn is the least lag that is worth a warning.
const minLagWarn = 10 * time.Second

// Schedule returns the cron spec the sweeper runs on.
func (s *Sweeper) Schedule() string { return s.spec }

// scheduleHelp says which schedules are accepted; every schedule error ends with it.
const scheduleHelp = `use a descriptor such as "@every 10m", "@hourly", "@daily", "@weekly" or "@monthly", ` +
	`or a standard 5-field cron spec "minute hour day-of-month month day-of-week" such as "*/5 * * * *" or "0 3 * * *"`

// CheckSchedule reports whether spec is a schedule the sweeper can run on;
// its error names the spec and the accepted forms.
func CheckSchedule(spec string) error {
	bad := func(why string) error {
		return fmt.Errorf("cleanup: schedule %q is not valid (%s); %s", spec, why, scheduleHelp)
	}
	sched, err := parse(spec)
	if err != nil {
		return bad(err.Error())
	}
	if rest, ok := strings.CutPrefix(spec, "@every "); ok {
		// cron.Every rounds anything below a second (zero and negative
		// intervals included) up to one second without a word.
		if d, err := time.ParseDuration(rest); err == nil && d < MinInterval {
			return bad(fmt.Sprintf("the interval must be at least %v", MinInterval))
		}
	}
	if sched.Next(time.Now()).IsZero() {
		return bad("it never fires")
	}
	return nil
}

// parse parses spec with robfig/cron, turning its panics into errors:
// v3.0.1 indexes out of range on "CRON_TZ=<zone>" with nothing after it.
func parse(spec string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return parser.Parse(spec)
}

// Sweep makes one pass over the store: for each rule with a TTL, it deletes
// the area's files created before now-TTL, then prunes the area. Failures to
// walk, delete or prune are logged, counted in Stats.Errors and skipped; the
// error returned then names how many there were and the first. When ctx ends
// the sweep stops early with an error wrapping ctx.Err(); what it deleted so
// far is in Stats.
//
// Sweep may run concurrently with itself and with sweepers of other processes
// on the same store: a file deleted by someone else in the meantime is simply
// gone (and may be counted by both).
func (s *Sweeper) Sweep(ctx context.Context) (Stats, error) {
	return s.sweep(ctx, triggerCall)
}

// sweep is Sweep, its span saying what started it: a sweep of the
// start-up or the schedule is the root of a trace of its own.
func (s *Sweeper) sweep(ctx context.Context, trigger string) (st Stats, err error) {
	ctx, span := startSweep(ctx, trigger)
	defer func() { endSweep(span, st, err) }()
	began := time.Now()
	now := s.now()
	var first error
	fail := func(err error) {
		st.Errors++
		first = cmp.Or(first, err)
	}
	if s.beforeSweep != nil {
		s.beforeSweep(ctx)
	}
	for _, r := range s.rules {
		if r.TTL == 0 || ctx.Err() != nil {
			continue
		}
		s.sweepArea(ctx, r, now.Add(-r.TTL), &st, fail)
	}
	s.sweepRecords(ctx, now, &st, fail)
	for _, e := range s.expirers {
		if e.TTL == 0 || ctx.Err() != nil {
			continue
		}
		files, bytes, err := e.Expire(ctx, now.Add(-e.TTL))
		if err != nil && ctx.Err() == nil {
			fail(fmt.Errorf("expire %s: %w", e.Name, err))
		}
		st.Files += files
		st.Bytes += bytes
		if s.metrics != nil {
			s.metrics.files.WithLabelValues(e.Name).Add(float64(files))
			s.metrics.bytes.WithLabelValues(e.Name).Add(float64(bytes))
		}
	}
	if s.afterSweep != nil && ctx.Err() == nil {
		s.afterSweep(ctx)
	}
	st.Duration = time.Since(began)

	result := "ok"
	switch {
	case ctx.Err() != nil:
		result = "interrupted"
		err = fmt.Errorf("cleanup: sweep interrupted after deleting %d files: %w", st.Files, ctx.Err())
	case st.Errors > 0:
		result = "error"
		err = fmt.Errorf("cleanup: sweep met %d errors (the next sweep tries again); first: %w", st.Errors, first)
	}
	if s.metrics != nil {
		s.metrics.sweeps.WithLabelValues(result).Inc()
		s.metrics.duration.Observe(st.Duration.Seconds())
		s.metrics.lag.Set(st.Lag.Seconds())
	}
	attrs := []any{"files", st.Files, "bytes", st.Bytes, "records", st.Records, "errors", st.Errors, "duration", st.Duration, "lag", st.Lag}
	if st.Lag > s.lagWarn {
		s.log.WarnContext(ctx, "cleanup: the sweeper lags: it deleted files long after they expired (they were not served meanwhile, but held disk and quota); "+
			"sweep more often (AGENT_CLEANUP_SCHEDULE) or give the store faster disks", "lag", st.Lag, "warn_after", s.lagWarn, "duration", st.Duration)
	}
	switch {
	case st.Errors > 0:
		s.log.WarnContext(ctx, "cleanup: sweep done with errors", append(attrs, "err", first)...)
	case ctx.Err() != nil:
		s.log.InfoContext(ctx, "cleanup: sweep interrupted", append(attrs, "err", ctx.Err())...)
	case st.Files > 0 || st.Records > 0:
		s.log.InfoContext(ctx, "cleanup: sweep done", attrs...)
	default:
		s.log.DebugContext(ctx, "cleanup: sweep done", attrs...)
	}
	return st, err
}

// Start sweeps once right away, in the background, and then on the
// schedule, until ctx ends or Stop is called; it returns at once, so that a
// starting agent serves while it sweeps a large store ([Sweeper.StartupDone]
// tells when the start-up sweep is over). Sweeps never overlap: a scheduled
// sweep due while the previous one (or the start-up sweep) still runs is
// skipped. A failing sweep is logged and does not stop the schedule, so
// Start fails only if ctx has ended, or the sweeper was started or stopped
// before: a Sweeper starts once.
func (s *Sweeper) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case started:
		return errors.New("cleanup: the sweeper was already started; a Sweeper starts once")
	case stopped:
		return errors.New("cleanup: the sweeper was stopped; make a new one with New")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cleanup: start: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	s.state, s.cancel = started, cancel
	logger := cronLogger{log: s.log, skipped: s.skipped}
	c := cron.New(
		cron.WithParser(parser),
		cron.WithLogger(logger),
		cron.WithChain(cron.Recover(logger), cron.SkipIfStillRunning(logger)),
	)
	if _, err := c.AddFunc(s.spec, func() { s.scheduled(runCtx) }); err != nil {
		// Unreachable: New validated the spec with the same parser.
		s.state = stopped
		cancel()
		return fmt.Errorf("cleanup: schedule %q: %w", s.spec, err)
	}
	s.startedAt = time.Now()
	s.busy.Lock() // before the schedule starts: the start-up sweep goes first
	s.running.Add(2)
	go func() {
		defer s.running.Done()
		defer close(s.startup)
		defer s.busy.Unlock()
		s.sweep(runCtx, triggerStartup) // logs and counts its own outcome; a failure does not stop the schedule
	}()
	c.Start()
	go func() {
		defer s.running.Done()
		<-runCtx.Done()
		<-c.Stop().Done() // waits for a scheduled sweep in progress
	}()
	s.log.InfoContext(ctx, "cleanup: sweeper started", "schedule", s.spec, "rules", s.describeRules())
	return nil
}

// StartupSweep reports whether the start-up sweep is running, and since
// when.
func (s *Sweeper) StartupSweep() (running bool, since time.Time) {
	s.mu.Lock()
	since = s.startedAt
	s.mu.Unlock()
	if since.IsZero() {
		return false, since
	}
	select {
	case <-s.startup:
		return false, since
	default:
		return true, since
	}
}

// StartupDone is closed once the sweep Start runs first has ended (done,
// or cut short by Stop). Before Start it is open.
func (s *Sweeper) StartupDone() <-chan struct{} { return s.startup }

// scheduled is the job the cron runs; it is skipped while the start-up
// sweep runs.
func (s *Sweeper) scheduled(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	if !s.busy.TryLock() {
		cronLogger{log: s.log, skipped: s.skipped}.Info("skip")
		return
	}
	defer s.busy.Unlock()
	s.sweep(ctx, triggerSchedule) // logs and counts its own outcome
}

// Stop stops the schedule and waits until no sweep started by Start is
// running; a sweep in progress is asked to end early (a partial sweep does no
// harm: the next one finishes the job). Stop may be called more than once,
// and before Start, after which Start fails.
func (s *Sweeper) Stop() {
	s.mu.Lock()
	s.state = stopped
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
	s.running.Wait()
}

func (s *Sweeper) skipped() {
	if s.metrics != nil {
		s.metrics.sweeps.WithLabelValues("skipped").Inc()
	}
}

func (s *Sweeper) describeRules() string {
	var rules []string
	for _, r := range s.rules {
		ttl := r.TTL.String()
		if r.TTL == 0 {
			ttl = "forever"
		}
		rules = append(rules, fmt.Sprintf("%s=%s", r.Area, ttl))
	}
	return strings.Join(rules, ", ")
}

// cronLogger adapts slog to robfig/cron's Logger. The scheduler's chatter
// goes to debug; a skipped run (SkipIfStillRunning logs "skip") is a warning
// and counted; a recovered panic is an error.
type cronLogger struct {
	log     *slog.Logger
	skipped func()
}

// Info implements cron.Logger.
func (l cronLogger) Info(msg string, keysAndValues ...any) {
	if msg == "skip" {
		l.log.Warn("cleanup: the previous sweep is still running; skipping this scheduled one")
		l.skipped()
		return
	}
	l.log.Debug("cleanup: cron "+msg, keysAndValues...)
}

// Error implements cron.Logger.
func (l cronLogger) Error(err error, msg string, keysAndValues ...any) {
	l.log.Error("cleanup: cron "+msg, append([]any{"err", err}, keysAndValues...)...)
}
