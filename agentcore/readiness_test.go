package agentcore

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore/internal/ops"
	"github.com/agentura/agentura/fileserve"
)

// hangingStore is a store whose Ready hangs while hang is set, as an S3
// store does during an outage, and fails with an error that names a
// server path once it answers.
type hangingStore struct {
	*fileserve.DiskStore
	hang atomic.Bool
}

func (h *hangingStore) Ready(ctx context.Context) error {
	if h.hang.Load() {
		<-ctx.Done()
		return fmt.Errorf("s3store: S3 bucket %q is not writable: Put \"http://10.1.2.3:9000/b/tmp/ready\": %w", "b", ctx.Err())
	}
	return h.DiskStore.Ready(ctx)
}

// /readyz answers from the last probe's state within its own timeout, even
// while the store hangs, and its body names no server path or address.
func TestReadyzAnswersWhileStoreHangs(t *testing.T) {
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &hangingStore{DiskStore: disk}
	_, srv := serveTestService(t, func(c *Config) { c.Store = st })
	get := func() (int, string, time.Duration) {
		began := time.Now()
		resp, err := http.Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b), time.Since(began)
	}
	if code, body, _ := get(); code != http.StatusOK {
		t.Fatalf("/readyz with a working store: %d %s", code, body)
	}
	st.hang.Store(true)
	time.Sleep(ops.ReadyFresh + 100*time.Millisecond)
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body, took := get()
		if took > 2*time.Second {
			t.Fatalf("/readyz took %v while the store hangs; want an answer from state within %v", took, ops.ReadyWait)
		}
		if strings.Contains(body, "10.1.2.3") || strings.Contains(body, disk.Root()) {
			t.Fatalf("/readyz shows a server address or path: %s", body)
		}
		if code == http.StatusServiceUnavailable {
			if !strings.Contains(body, "did not answer") && !strings.Contains(body, "have not answered") {
				t.Errorf("/readyz does not say the store hangs: %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d %s 30s into the outage", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	st.hang.Store(false)
	deadline = time.Now().Add(30 * time.Second)
	for code, body, _ := get(); code != http.StatusOK; code, body, _ = get() {
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d %s 30s after the store came back", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
