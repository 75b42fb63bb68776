package agentcore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore/internal/ops"
	"github.com/agentura/agentura/internal/lib/quota"
)

// E18: a tool that writes far more than its owner may keep is stopped while
// it writes, with an error saying why; a tool whose output fits is not
// counted twice (work folder and stored file), and nothing stays reserved
// once calls end.
func TestWorkFolderCountsAgainstTheQuota(t *testing.T) {
	const limit = 4 << 20
	svc := newTestService(t, func(c *Config) { c.OwnerQuotaBytes = limit })
	chunk := make([]byte, 256<<10)
	var written int64
	AddTool(svc, Tool{Name: "flood"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		dir, err := call.WorkDir()
		if err != nil {
			return nil, err
		}
		f, err := os.Create(filepath.Join(dir, "big.bin"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if _, err := f.Write(chunk); err != nil {
				return nil, err
			}
			written += int64(len(chunk))
			time.Sleep(5 * time.Millisecond) // ~50 MB/s: the meter sees it pass the quota
		}
		return TextResult("wrote for a minute"), nil
	})
	AddTool(svc, Tool{Name: "fits"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		dir, err := call.WorkDir()
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, "three.bin")
		if err := os.WriteFile(p, make([]byte, 3<<20), 0o600); err != nil {
			return nil, err
		}
		time.Sleep(3 * ops.WorkMeterInterval) // reserved as a work folder first
		return call.FileResponse(ctx, OutputFile("three.bin", p))
	})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := svc.Invoke(ctx, "flood", "alice", []byte(`{}`))
	if err == nil || !errors.Is(err, quota.ErrExceeded) || !strings.Contains(err.Error(), "work folder") {
		t.Fatalf("a call writing past the quota: %v; want the work folder's quota error", err)
	}
	if written > 4*limit {
		t.Errorf("the call wrote %d bytes before it was stopped, over four times the %d quota", written, limit)
	}
	if _, err := svc.Invoke(ctx, "fits", "alice", []byte(`{}`)); err != nil {
		t.Fatalf("a 3 MiB output under a 4 MiB quota, after a stopped call: %v", err)
	}
	used, err := svc.quota.Used(ctx, "alice")
	if err != nil || used != 3<<20 {
		t.Errorf("alice uses %d bytes (%v), want the 3 MiB output alone: a work folder's reservation is left", used, err)
	}
}
