package agentcore

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/fileserve/s3store"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestInstrumentStore: files and bytes added by Put and Adopt are counted
// per area; a failed Put is not; a second wrapper on the same registry
// shares the counters.
func TestInstrumentStore(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := instrumentStore(disk, reg)
	if err != nil {
		t.Fatal(err)
	}
	st.Put(ctx, fileserve.NewFile{Area: fileserve.Outputs, Owner: "o", Name: "a"}, bytes.NewReader(make([]byte, 100)))
	st.Put(ctx, fileserve.NewFile{Area: fileserve.Outputs, Owner: "o", Name: "b"}, bytes.NewReader(make([]byte, 50)))
	st.Put(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: "o", Name: "c", MaxBytes: 10}, bytes.NewReader(make([]byte, 50))) // fails: not counted
	src := filepath.Join(t.TempDir(), "d")
	if err := os.WriteFile(src, make([]byte, 7), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Adopt(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: "o"}, src); err != nil {
		t.Fatal(err)
	}
	if _, err := instrumentStore(disk, reg); err != nil {
		t.Fatalf("second wrapper on one registry: %v", err)
	}
	w := st.(*instrumented)
	for _, c := range []struct {
		got, want float64
		what      string
	}{
		{value(t, w.files.WithLabelValues("outputs")), 2, "outputs files"},
		{value(t, w.bytes.WithLabelValues("outputs")), 150, "outputs bytes"},
		{value(t, w.files.WithLabelValues("staging")), 1, "staging files"},
		{value(t, w.bytes.WithLabelValues("staging")), 7, "staging bytes"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

// value reads a counter.
func value(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestConfigStore: a store handed over in Config.Store is used as it is:
// files land in it, and since it is a fileserve.LocalRoot the call folders
// lie under its root, so outputs are adopted by rename.
func TestConfigStore(t *testing.T) {
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc := newTestService(t, func(c *Config) { c.Store = disk })
	if !strings.HasPrefix(svc.calls.dir, filepath.Join(disk.Root(), "calls")+string(filepath.Separator)) {
		t.Errorf("call folder %s is not under the store's root %s", svc.calls.dir, disk.Root())
	}
	call := svc.newCall("t", "alice", "")
	defer call.end()
	work, err := call.WorkDir()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "r.txt")
	if err := os.WriteFile(out, []byte("result"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := call.FileResponse(context.Background(), OutputFile("r.txt", out))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := disk.Stat(context.Background(), fileserve.Outputs, "alice", res.stored[0].ID); err != nil {
		t.Errorf("the output is not in the given store: %v", err)
	}
}

// TestConfigStoreConflicts: a storage URL other than the default beside
// Config.Store, AGENT_S3_REDIRECT with a store that cannot presign, or
// AGENT_ACCEL_REDIRECT with one whose files are not on a local disk, stops
// New with the variable named; an S3 store (a fileserve.Presigner) takes
// redirects, and its call folders lie in the data folder.
func TestConfigStoreConflicts(t *testing.T) {
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit    func(*Config)
		wantVar string
	}{
		{func(c *Config) { c.Store, c.StorageURL = disk, "file://"+t.TempDir() }, "AGENT_STORAGE_URL"},
		{func(c *Config) { c.Store, c.S3Redirect = disk, true }, "AGENT_S3_REDIRECT"},
		// X-Accel-Redirect names files on a local disk: a store whose files lie elsewhere cannot.
		{func(c *Config) { c.Store, c.AccelRedirect = struct{ fileserve.Store }{disk}, "/internal-files/" }, "AGENT_ACCEL_REDIRECT"},
		{func(c *Config) { c.Store, c.AccelRedirect = disk, "internal-files" }, "AGENT_ACCEL_REDIRECT"},
	} {
		cfg := Config{DataDir: t.TempDir(), PublicURL: "http://agent.test"}
		tc.edit(&cfg)
		_, err := New(Info{Name: "x"}, cfg, slog.New(slog.DiscardHandler))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Var != tc.wantVar {
			t.Errorf("err = %v, want a ConfigError on %s", err, tc.wantVar)
		}
	}
	s3, err := s3store.New(s3store.Config{Bucket: "files", Endpoint: "127.0.0.1:9", Insecure: true, PathStyle: true, AccessKey: "k", SecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	svc := newTestService(t, func(c *Config) { c.Store, c.S3Redirect, c.DataDir = s3, true, dataDir })
	if !strings.HasPrefix(svc.calls.dir, filepath.Join(dataDir, "calls")) {
		t.Errorf("call folder %s is not in the data folder %s", svc.calls.dir, dataDir)
	}
}
