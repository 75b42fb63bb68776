package agentcore

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/fileserve/s3store"
)

// TestConfigStore: a store handed over in Config.Store is used as it is:
// files land in it, and since it is a fileserve.LocalRoot the call folders
// lie under its root, so outputs are adopted by rename.
func TestConfigStore(t *testing.T) {
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc := newTestService(t, func(c *Config) { c.Store = disk })
	if !strings.HasPrefix(svc.calls.Dir(), filepath.Join(disk.Root(), "calls")+string(filepath.Separator)) {
		t.Errorf("call folder %s is not under the store's root %s", svc.calls.Dir(), disk.Root())
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
	if !strings.HasPrefix(svc.calls.Dir(), filepath.Join(dataDir, "calls")) {
		t.Errorf("call folder %s is not in the data folder %s", svc.calls.Dir(), dataDir)
	}
}
