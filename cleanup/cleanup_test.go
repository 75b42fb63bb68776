package cleanup_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentura/agentura/cleanup"
	"github.com/agentura/agentura/fileserve"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	outputTTL  = 24 * time.Hour
	stagingTTL = time.Hour
)

var defaultRules = []cleanup.Rule{
	{Area: fileserve.Outputs, TTL: outputTTL},
	{Area: fileserve.Staging, TTL: stagingTTL},
}

// quiet is a logger for tests: everything goes to t.Log.
func quiet(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func newStore(t *testing.T) *fileserve.DiskStore {
	t.Helper()
	st, err := fileserve.NewDiskStore(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func put(t *testing.T, st fileserve.Store, area fileserve.Area, owner, name string, content []byte) fileserve.Meta {
	t.Helper()
	m, err := st.Put(context.Background(), fileserve.NewFile{Area: area, Owner: owner, Name: name}, bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// boundary returns a time after which every file stored so far was created
// and before which every file stored later will be.
func boundary(t *testing.T) time.Time {
	t.Helper()
	time.Sleep(2 * time.Millisecond) // creation times are wall-clock; keep them apart
	b := time.Now()
	time.Sleep(2 * time.Millisecond)
	return b
}

func at(t time.Time) func() time.Time { return func() time.Time { return t } }

func newSweeper(t *testing.T, cfg cleanup.Config) *cleanup.Sweeper {
	t.Helper()
	if cfg.Rules == nil {
		cfg.Rules = defaultRules
	}
	if cfg.Logger == nil {
		cfg.Logger = quiet(t)
	}
	s, err := cleanup.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func exists(t *testing.T, st fileserve.Store, m fileserve.Meta) bool {
	t.Helper()
	_, err := st.Stat(context.Background(), m.Area, m.Owner, m.ID)
	if err != nil && !errors.Is(err, fileserve.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func sweep(t *testing.T, s *cleanup.Sweeper) cleanup.Stats {
	t.Helper()
	stats, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatalf("Sweep: %v (stats %+v)", err, stats)
	}
	if stats.Errors != 0 {
		t.Fatalf("Sweep reported %d errors without an error", stats.Errors)
	}
	return stats
}

func TestSweepOldOutputsGoNewStay(t *testing.T) {
	st := newStore(t)
	old1 := put(t, st, fileserve.Outputs, "alice", "a.txt", []byte("old one"))
	old2 := put(t, st, fileserve.Outputs, "bob", "b.txt", []byte("old two!"))
	b := boundary(t)
	fresh := put(t, st, fileserve.Outputs, "alice", "c.txt", []byte("fresh"))
	if !old2.Created.Before(b) || !fresh.Created.After(b) {
		t.Fatalf("test setup: created %v, %v around boundary %v", old2.Created, fresh.Created, b)
	}

	// The clock says the boundary is exactly one TTL ago.
	s := newSweeper(t, cleanup.Config{Store: st, Now: at(b.Add(outputTTL))})
	stats := sweep(t, s)
	if stats.Files != 2 || stats.Bytes != old1.Size+old2.Size {
		t.Fatalf("Sweep = %+v; want 2 files of %d bytes", stats, old1.Size+old2.Size)
	}
	if stats.Duration <= 0 {
		t.Errorf("Duration = %v", stats.Duration)
	}
	if exists(t, st, old1) || exists(t, st, old2) {
		t.Fatal("an expired output survived")
	}
	if !exists(t, st, fresh) {
		t.Fatal("a fresh output was deleted")
	}

	// Sweeping again finds nothing more to do.
	if again := sweep(t, s); again.Files != 0 {
		t.Fatalf("second Sweep deleted %d files", again.Files)
	}
}

func TestSweepStagingHasItsOwnTTL(t *testing.T) {
	st := newStore(t)
	staged := put(t, st, fileserve.Staging, "alice", "scan.pdf", []byte("%PDF-1.7 staged"))
	output := put(t, st, fileserve.Outputs, "alice", "out.txt", []byte("produced"))
	b := boundary(t)

	// Two hours later: past the staging TTL, within the output TTL.
	stats := sweep(t, newSweeper(t, cleanup.Config{Store: st, Now: at(b.Add(2 * time.Hour))}))
	if stats.Files != 1 || exists(t, st, staged) || !exists(t, st, output) {
		t.Fatalf("after 2h: stats %+v, staged kept %v, output kept %v; want only the staged file gone",
			stats, exists(t, st, staged), exists(t, st, output))
	}

	// A day and an hour later the output goes too.
	stats = sweep(t, newSweeper(t, cleanup.Config{Store: st, Now: at(b.Add(25 * time.Hour))}))
	if stats.Files != 1 || exists(t, st, output) {
		t.Fatalf("after 25h: stats %+v; want the output gone", stats)
	}
}

func TestSweepTTLZeroKeeps(t *testing.T) {
	st := newStore(t)
	kept := put(t, st, fileserve.Outputs, "alice", "forever.txt", []byte("keep me"))
	staged := put(t, st, fileserve.Staging, "alice", "in.txt", []byte("staged"))
	b := boundary(t)

	s := newSweeper(t, cleanup.Config{
		Store: st,
		Rules: []cleanup.Rule{{Area: fileserve.Outputs, TTL: 0}, {Area: fileserve.Staging, TTL: stagingTTL}},
		Now:   at(b.AddDate(100, 0, 0)),
	})
	stats := sweep(t, s)
	if stats.Files != 1 || !exists(t, st, kept) || exists(t, st, staged) {
		t.Fatalf("stats %+v; want the output kept forever and the staged file gone", stats)
	}

	// An area without a rule is not swept either.
	onlyStaging := newSweeper(t, cleanup.Config{
		Store: st,
		Rules: []cleanup.Rule{{Area: fileserve.Staging, TTL: time.Minute}},
		Now:   at(b.AddDate(100, 0, 0)),
	})
	sweep(t, onlyStaging)
	if !exists(t, st, kept) {
		t.Fatal("an output was deleted by a sweeper with no rule for outputs")
	}
}

func TestSweepRemovesEmptyOwnerFolders(t *testing.T) {
	st := newStore(t)
	put(t, st, fileserve.Outputs, "alice", "a.txt", []byte("a"))
	put(t, st, fileserve.Outputs, "bob", "b.txt", []byte("b"))
	put(t, st, fileserve.Staging, "carol", "c.txt", []byte("c"))
	b1 := boundary(t)

	outputs := filepath.Join(st.Root(), string(fileserve.Outputs))
	staging := filepath.Join(st.Root(), string(fileserve.Staging))
	if n := countEntries(t, outputs); n != 2 {
		t.Fatalf("test setup: %d owner folders in outputs; want 2", n)
	}
	// The first sweep empties the owner folders. The store keeps a folder
	// until it has been empty for as long as the TTL (so that a Put racing
	// with the sweep in another process finds it), which for files that
	// expire at the first possible moment is the next sweep.
	if stats := sweep(t, newSweeper(t, cleanup.Config{Store: st, Now: at(b1.Add(outputTTL))})); stats.Files != 3 {
		t.Fatalf("first sweep: %+v; want 3 files deleted", stats)
	}
	b2 := boundary(t)
	dave := put(t, st, fileserve.Outputs, "dave", "d.txt", []byte("d"))

	sweep(t, newSweeper(t, cleanup.Config{Store: st, Now: at(b2.Add(outputTTL))}))
	if n := countEntries(t, outputs); n != 1 {
		t.Fatalf("%d owner folders left in outputs; want only dave's", n)
	}
	if n := countEntries(t, staging); n != 0 {
		t.Fatalf("%d owner folders left in staging; want none", n)
	}
	if !exists(t, st, dave) {
		t.Fatal("dave's fresh file was deleted")
	}
	// The store still takes files for owners whose folder was removed.
	again := put(t, st, fileserve.Outputs, "alice", "a2.txt", []byte("again"))
	if !exists(t, st, again) {
		t.Fatal("cannot store for a pruned owner")
	}
}

func countEntries(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func TestSweepPrunesAbandonedTempFiles(t *testing.T) {
	st := newStore(t)
	// The remains of a write interrupted by a crash.
	abandoned := filepath.Join(st.Root(), "tmp", "add-0123456789abcdef0123456789abcdef")
	if err := os.MkdirAll(abandoned, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(abandoned, "data"), []byte("half a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := boundary(t)
	sweep(t, newSweeper(t, cleanup.Config{Store: st, Now: at(b.Add(2 * stagingTTL))}))
	if _, err := os.Stat(abandoned); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("abandoned temporary folder still there (stat: %v)", err)
	}
}

// Start returns at once and sweeps in the background: StartupDone tells
// when the start-up sweep is over.
func TestStartSweepsInBackground(t *testing.T) {
	st := newStore(t)
	old := put(t, st, fileserve.Outputs, "alice", "old.txt", []byte("old"))
	b := boundary(t)
	fresh := put(t, st, fileserve.Outputs, "alice", "new.txt", []byte("new"))

	// "@monthly" will not fire during the test: only the start-up sweep runs.
	s := newSweeper(t, cleanup.Config{Store: st, Schedule: "@monthly", Now: at(b.Add(outputTTL))})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.StartupDone():
	case <-time.After(30 * time.Second):
		t.Fatal("the start-up sweep did not end within 30s")
	}
	if exists(t, st, old) {
		t.Fatal("the start-up sweep did not delete the expired file")
	}
	if !exists(t, st, fresh) {
		t.Fatal("the start-up sweep deleted a fresh file")
	}
	s.Stop()
}

func TestScheduleFires(t *testing.T) {
	st := newStore(t)
	reg := prometheus.NewRegistry()
	// The clock runs a year ahead: every file is expired as soon as it exists.
	s := newSweeper(t, cleanup.Config{
		Store:    st,
		Schedule: "@every 1s",
		Metrics:  reg,
		Now:      func() time.Time { return time.Now().AddDate(1, 0, 0) },
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-s.StartupDone()
	if got := counter(t, reg, "agentura_sweeps_total", "result", "ok"); got != 1 {
		t.Fatalf("after Start: %v sweeps; want the start-up sweep", got)
	}
	m := put(t, st, fileserve.Outputs, "alice", "x.txt", []byte("soon gone"))
	waitFor(t, 10*time.Second, "a scheduled sweep to delete the file", func() bool { return !exists(t, st, m) })
	// The sweep counts itself once it is over, just after the deletion.
	waitFor(t, 10*time.Second, "the scheduled sweep to be counted", func() bool {
		return counter(t, reg, "agentura_sweeps_total", "result", "ok") >= 2
	})
	if got := counter(t, reg, "agentura_swept_files_total", "area", "outputs"); got != 1 {
		t.Fatalf("agentura_swept_files_total{area=outputs} = %v; want 1", got)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDownloadInFlightSurvivesSweep(t *testing.T) {
	st := newStore(t)
	content := make([]byte, 3<<20+17)
	if _, err := rand.Read(content); err != nil {
		t.Fatal(err)
	}
	m := put(t, st, fileserve.Outputs, "alice", "big.bin", content)
	b := boundary(t)

	obj, meta, err := st.Open(context.Background(), m.Area, m.Owner, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	half := make([]byte, len(content)/2)
	if _, err := io.ReadFull(obj, half); err != nil {
		t.Fatal(err)
	}

	stats := sweep(t, newSweeper(t, cleanup.Config{Store: st, Now: at(b.Add(outputTTL))}))
	if stats.Files != 1 {
		t.Fatalf("Sweep deleted %d files; want the one being downloaded", stats.Files)
	}
	if _, _, err := st.Open(context.Background(), m.Area, m.Owner, m.ID); !errors.Is(err, fileserve.ErrNotFound) {
		t.Fatalf("Open after the sweep: %v; want ErrNotFound for new downloads", err)
	}

	rest, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("reading the rest after the sweep: %v", err)
	}
	got := append(half, rest...)
	if !bytes.Equal(got, content) {
		t.Fatalf("download got %d bytes, differing from the %d stored", len(got), len(content))
	}
	sum := sha256.Sum256(got)
	if hex.EncodeToString(sum[:]) != meta.SHA256 {
		t.Fatal("downloaded content does not match the stored digest")
	}
}

func TestBadSchedule(t *testing.T) {
	st := newStore(t)
	for _, spec := range []string{
		"every 10m",
		"10m",
		"* * *",
		"61 * * * *",
		"0 0 * * * *", // seconds field: not accepted
		"@every",
		"@every 10x",
		"@every 0s",
		"@every -5m",
		"@every 500ms",
		"@fortnightly",
		"CRON_TZ=UTC",
		"CRON_TZ=Nowhere/Land 0 3 * * *",
		"0 0 30 2 *", // February 30th never comes
	} {
		_, err := cleanup.New(cleanup.Config{Store: st, Rules: defaultRules, Schedule: spec})
		if err == nil {
			t.Errorf("New accepted schedule %q", spec)
			continue
		}
		msg := err.Error()
		for _, want := range []string{`"` + spec + `"`, "@every 10m", "5-field", "*/5 * * * *"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error for %q does not mention %s: %s", spec, want, msg)
			}
		}
	}
	for _, spec := range []string{
		"", "@every 10m", "  @every 1m  ", "@every 1s", "@every 1h30m", "@hourly", "@daily", "@midnight",
		"*/5 * * * *", "0 3 * * 1-5", "CRON_TZ=UTC 0 3 * * *", "0 0 29 2 *",
	} {
		s, err := cleanup.New(cleanup.Config{Store: st, Rules: defaultRules, Schedule: spec})
		if err != nil {
			t.Errorf("New refused schedule %q: %v", spec, err)
			continue
		}
		if spec == "" && s.Schedule() != cleanup.DefaultSchedule {
			t.Errorf("empty schedule became %q; want %q", s.Schedule(), cleanup.DefaultSchedule)
		}
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	st := newStore(t)
	for name, cfg := range map[string]cleanup.Config{
		"no store":     {Rules: defaultRules},
		"no rules":     {Store: st},
		"unknown area": {Store: st, Rules: []cleanup.Rule{{Area: "tmp", TTL: time.Hour}}},
		"two rules":    {Store: st, Rules: []cleanup.Rule{{Area: fileserve.Outputs, TTL: time.Hour}, {Area: fileserve.Outputs, TTL: time.Minute}}},
		"negative TTL": {Store: st, Rules: []cleanup.Rule{{Area: fileserve.Outputs, TTL: -time.Hour}}},
	} {
		if _, err := cleanup.New(cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

func TestConcurrentSweeps(t *testing.T) {
	st := newStore(t)
	const n = 60
	var metas []fileserve.Meta
	for i := range n {
		area := fileserve.Outputs
		if i%3 == 0 {
			area = fileserve.Staging
		}
		metas = append(metas, put(t, st, area, []string{"alice", "bob", "carol"}[i%3], "f.txt", []byte(strings.Repeat("x", i+1))))
	}
	b := boundary(t)
	now := at(b.Add(outputTTL))
	// One TTL for both areas, so that the clock puts no write that starts
	// during the test before the cutoff (Prune clears tmp/ by that cutoff).
	rules := []cleanup.Rule{{Area: fileserve.Outputs, TTL: outputTTL}, {Area: fileserve.Staging, TTL: outputTTL}}
	reg := prometheus.NewRegistry()
	// Two sweepers (two replicas sharing the store) and several Sweep calls
	// on each, all at once, while new files keep arriving.
	sweepers := []*cleanup.Sweeper{
		newSweeper(t, cleanup.Config{Store: st, Rules: rules, Now: now, Metrics: reg}),
		newSweeper(t, cleanup.Config{Store: st, Rules: rules, Now: now, Metrics: reg}),
	}
	var (
		wg      sync.WaitGroup
		deleted atomic.Int64
		start   = make(chan struct{})
		errs    = make(chan error, 16)
	)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			stats, err := sweepers[i%2].Sweep(context.Background())
			if err != nil {
				errs <- err
			}
			deleted.Add(int64(stats.Files))
		}()
	}
	var fresh []fileserve.Meta
	var freshMu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		for i := range 10 {
			m, err := st.Put(context.Background(), fileserve.NewFile{Area: fileserve.Outputs, Owner: "alice", Name: "new.txt"},
				strings.NewReader(strings.Repeat("y", i+1)))
			if err != nil {
				errs <- err
				return
			}
			freshMu.Lock()
			fresh = append(fresh, m)
			freshMu.Unlock()
		}
	}()
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent sweeping: %v", err)
	}
	for _, m := range metas {
		if exists(t, st, m) {
			t.Errorf("expired file %s survived", m.ID)
		}
	}
	for _, m := range fresh {
		if !exists(t, st, m) {
			t.Errorf("file %s stored during the sweeps was deleted", m.ID)
		}
	}
	if deleted.Load() < n {
		t.Errorf("sweeps report %d deletions in all; want at least %d", deleted.Load(), n)
	}
	if got := counter(t, reg, "agentura_sweeps_total", "result", "ok"); got != 8 {
		t.Errorf("agentura_sweeps_total{result=ok} = %v; want 8", got)
	}
}

func TestMetrics(t *testing.T) {
	st := newStore(t)
	a := put(t, st, fileserve.Outputs, "alice", "a.txt", []byte("12345"))
	s1 := put(t, st, fileserve.Staging, "alice", "s.txt", []byte("123"))
	b := boundary(t)
	reg := prometheus.NewRegistry()
	s := newSweeper(t, cleanup.Config{Store: st, Metrics: reg, Now: at(b.Add(outputTTL))})

	// Every series exists, at zero, before the first sweep.
	for _, c := range []struct{ name, label, value string }{
		{"agentura_sweeps_total", "result", "ok"},
		{"agentura_sweeps_total", "result", "error"},
		{"agentura_sweeps_total", "result", "skipped"},
		{"agentura_swept_files_total", "area", "outputs"},
		{"agentura_swept_files_total", "area", "staging"},
		{"agentura_swept_bytes_total", "area", "outputs"},
	} {
		if got := counter(t, reg, c.name, c.label, c.value); got != 0 {
			t.Errorf("%s{%s=%q} = %v before any sweep; want 0", c.name, c.label, c.value, got)
		}
	}
	if n, _ := histogram(t, reg, "agentura_sweep_duration_seconds"); n != 0 {
		t.Errorf("agentura_sweep_duration_seconds counts %d sweeps before any; want 0", n)
	}
	st1 := sweep(t, s)
	if n, sum := histogram(t, reg, "agentura_sweep_duration_seconds"); n != 1 || sum != st1.Duration.Seconds() {
		t.Errorf("agentura_sweep_duration_seconds: %d sweeps, %v s in all; want 1 of %v s", n, sum, st1.Duration.Seconds())
	}
	for _, c := range []struct {
		name, label, value string
		want               float64
	}{
		{"agentura_sweeps_total", "result", "ok", 1},
		{"agentura_swept_files_total", "area", "outputs", 1},
		{"agentura_swept_files_total", "area", "staging", 1},
		{"agentura_swept_bytes_total", "area", "outputs", float64(a.Size)},
		{"agentura_swept_bytes_total", "area", "staging", float64(s1.Size)},
	} {
		if got := counter(t, reg, c.name, c.label, c.value); got != c.want {
			t.Errorf("%s{%s=%q} = %v; want %v", c.name, c.label, c.value, got, c.want)
		}
	}
	// A second sweeper on the same registry shares the counters.
	if _, err := cleanup.New(cleanup.Config{Store: st, Rules: defaultRules, Metrics: reg}); err != nil {
		t.Fatalf("second sweeper on one registry: %v", err)
	}
}

// counter reads one counter from reg; -1 if absent.
func counter(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return -1
}

// histogram returns the sample count and sum of the histogram name in reg,
// or -1 and 0 when it is not there.
func histogram(t *testing.T, reg *prometheus.Registry, name string) (int64, float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			h := mf.GetMetric()[0].GetHistogram()
			return int64(h.GetSampleCount()), h.GetSampleSum()
		}
	}
	return -1, 0
}

// hookStore wraps a store to observe and disturb it.
type hookStore struct {
	fileserve.Store
	onWalk   func(ctx context.Context, area fileserve.Area) error
	onDelete func(id string) error
}

func (h *hookStore) Walk(ctx context.Context, area fileserve.Area, fn func(fileserve.Meta) error) error {
	if h.onWalk != nil {
		if err := h.onWalk(ctx, area); err != nil {
			return err
		}
	}
	return h.Store.Walk(ctx, area, fn)
}

func (h *hookStore) Delete(ctx context.Context, area fileserve.Area, owner, id string) error {
	if h.onDelete != nil {
		if err := h.onDelete(id); err != nil {
			return err
		}
	}
	return h.Store.Delete(ctx, area, owner, id)
}

func TestSweepGoesOnPastErrors(t *testing.T) {
	disk := newStore(t)
	stuck := put(t, disk, fileserve.Outputs, "alice", "stuck.txt", []byte("stuck"))
	other := put(t, disk, fileserve.Outputs, "alice", "other.txt", []byte("other"))
	staged := put(t, disk, fileserve.Staging, "alice", "in.txt", []byte("in"))
	b := boundary(t)
	st := &hookStore{Store: disk, onDelete: func(id string) error {
		if id == stuck.ID {
			return errors.New("permission denied")
		}
		return nil
	}}
	reg := prometheus.NewRegistry()
	s := newSweeper(t, cleanup.Config{Store: st, Metrics: reg, Now: at(b.Add(outputTTL))})
	stats, err := s.Sweep(context.Background())
	if err == nil || !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), stuck.ID) {
		t.Fatalf("Sweep error = %v; want one naming the file and the cause", err)
	}
	if stats.Errors != 1 || stats.Files != 2 {
		t.Fatalf("stats %+v; want 1 error and the 2 other files deleted", stats)
	}
	if !exists(t, disk, stuck) || exists(t, disk, other) || exists(t, disk, staged) {
		t.Fatal("wrong files deleted")
	}
	if got := counter(t, reg, "agentura_sweeps_total", "result", "error"); got != 1 {
		t.Fatalf("agentura_sweeps_total{result=error} = %v; want 1", got)
	}

	// A store that cannot be listed: counted, and the other area is still swept.
	disk2 := newStore(t)
	staged2 := put(t, disk2, fileserve.Staging, "alice", "in.txt", []byte("in"))
	b2 := boundary(t)
	broken := &hookStore{Store: disk2, onWalk: func(_ context.Context, area fileserve.Area) error {
		if area == fileserve.Outputs {
			return errors.New("bucket unreachable")
		}
		return nil
	}}
	stats, err = newSweeper(t, cleanup.Config{Store: broken, Now: at(b2.Add(outputTTL))}).Sweep(context.Background())
	if err == nil || stats.Errors != 1 || stats.Files != 1 || exists(t, disk2, staged2) {
		t.Fatalf("stats %+v, err %v; want the outputs walk error counted and staging swept", stats, err)
	}
}

func TestScheduledSweepsNeverOverlapAndStopWaits(t *testing.T) {
	disk := newStore(t)
	var (
		walks     atomic.Int32
		inWalk    atomic.Int32
		maxInWalk atomic.Int32
		released  = make(chan struct{})
	)
	st := &hookStore{Store: disk, onWalk: func(ctx context.Context, area fileserve.Area) error {
		n := inWalk.Add(1)
		defer inWalk.Add(-1)
		for {
			m := maxInWalk.Load()
			if n <= m || maxInWalk.CompareAndSwap(m, n) {
				break
			}
		}
		// The start-up sweep (two walks) passes; the first scheduled sweep
		// hangs until it is cancelled.
		if walks.Add(1) > 2 {
			select {
			case <-ctx.Done():
				close(released)
				return ctx.Err()
			case <-time.After(30 * time.Second):
				return errors.New("never cancelled")
			}
		}
		return nil
	}}
	reg := prometheus.NewRegistry()
	s := newSweeper(t, cleanup.Config{Store: st, Schedule: "@every 1s", Metrics: reg})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// While the first scheduled sweep hangs, the next one due is skipped.
	waitFor(t, 10*time.Second, "a skipped sweep", func() bool {
		return counter(t, reg, "agentura_sweeps_total", "result", "skipped") >= 1
	})
	if m := maxInWalk.Load(); m != 1 {
		t.Fatalf("%d sweeps walked at once; want 1", m)
	}
	stopped := make(chan struct{})
	go func() { s.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not return")
	}
	select {
	case <-released:
	default:
		t.Fatal("Stop returned while the hanging sweep was still running")
	}
	if got := counter(t, reg, "agentura_sweeps_total", "result", "interrupted"); got != 1 {
		t.Fatalf("agentura_sweeps_total{result=interrupted} = %v; want 1", got)
	}
}

func TestContextEndStopsSchedule(t *testing.T) {
	disk := newStore(t)
	var walks atomic.Int32
	st := &hookStore{Store: disk, onWalk: func(context.Context, fileserve.Area) error { walks.Add(1); return nil }}
	s := newSweeper(t, cleanup.Config{Store: st, Schedule: "@every 1s"})
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "a scheduled sweep", func() bool { return walks.Load() >= 4 })
	cancel()
	s.Stop() // returns once the schedule has wound down
	n := walks.Load()
	time.Sleep(1500 * time.Millisecond)
	if walks.Load() != n {
		t.Fatal("sweeps went on after the context ended")
	}
}

func TestStartStopLifecycle(t *testing.T) {
	st := newStore(t)
	s := newSweeper(t, cleanup.Config{Store: st, Schedule: "@hourly"})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err == nil {
		t.Fatal("second Start succeeded")
	}
	s.Stop()
	s.Stop() // twice is fine

	stoppedFirst := newSweeper(t, cleanup.Config{Store: st})
	stoppedFirst.Stop()
	if err := stoppedFirst.Start(context.Background()); err == nil {
		t.Fatal("Start after Stop succeeded")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := newSweeper(t, cleanup.Config{Store: st}).Start(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with a done context: %v; want context.Canceled", err)
	}
}

func TestSweepHonoursContext(t *testing.T) {
	disk := newStore(t)
	for range 5 {
		put(t, disk, fileserve.Outputs, "alice", "f.txt", []byte("f"))
	}
	b := boundary(t)
	ctx, cancel := context.WithCancel(context.Background())
	deletes := 0
	st := &hookStore{Store: disk, onDelete: func(string) error {
		if deletes++; deletes == 2 {
			cancel()
		}
		return nil
	}}
	// One worker: with several, deletions already under way when the
	// context ends may still finish.
	stats, err := newSweeper(t, cleanup.Config{Store: st, Now: at(b.Add(outputTTL)), Workers: 1}).Sweep(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Sweep error = %v; want context.Canceled", err)
	}
	if stats.Files > 2 || stats.Errors != 0 {
		t.Fatalf("stats %+v; want at most 2 files and no errors counted for the cancellation", stats)
	}
}

// A sweep reports how late it deleted its most overdue file, in Stats.Lag
// and agentura_sweep_lag_seconds.
func TestSweepReportsLag(t *testing.T) {
	st := newStore(t)
	put(t, st, fileserve.Outputs, "alice", "old.txt", []byte("old"))
	b := boundary(t)
	reg := prometheus.NewRegistry()
	s := newSweeper(t, cleanup.Config{Store: st, Metrics: reg, Now: at(b.Add(outputTTL + time.Hour))})
	stats, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if stats.Files != 1 || stats.Lag < time.Hour || stats.Lag > time.Hour+time.Minute {
		t.Fatalf("swept %d files with a lag of %v; want 1 file about an hour overdue", stats.Files, stats.Lag)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "agentura_sweep_lag_seconds" {
			if v := mf.GetMetric()[0].GetGauge().GetValue(); v < 3600 {
				t.Fatalf("agentura_sweep_lag_seconds = %v; want about 3600", v)
			}
			return
		}
	}
	t.Fatal("agentura_sweep_lag_seconds is not registered")
}
