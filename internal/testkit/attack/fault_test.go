package attack

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/s3test"
)

// faultagentBinary builds testdata/faultagent (the example agent plus
// two_outputs, which blocks between its two outputs) once.
func faultagentBinary(t *testing.T) string {
	return binary(t, "github.com/agentura/agentura/internal/testkit/attack/testdata/faultagent")
}

// faultEnv is a fresh data folder for the fault agent, the file its
// blocked tool writes, and the agent's environment.
func faultEnv(t *testing.T, more ...string) (data, mark string, env []string) {
	data, mark = t.TempDir(), filepath.Join(t.TempDir(), "blocked")
	env = append([]string{"AGENT_DATA_DIR=" + data, "AGENT_MCP_STATELESS=true", "AGENT_SIGNING_KEY=" + signingKey, "FAULT_MARK=" + mark}, more...)
	return data, mark, env
}

// restartClean starts bin again on the data folder of a killed agent and
// checks that area holds no file and tmp/ nothing; the caller stops it.
func restartClean(t *testing.T, bin, data, area string, env []string) *mcptest.Agent {
	t.Helper()
	b := mcptest.StartAgent(t, bin, env...)
	if n := diskFiles(data, area); n != 0 {
		t.Errorf("after the restart: %d %s files of the killed agent are still stored", n, area)
	}
	if left := tmpEntries(data); len(left) != 0 {
		t.Errorf("after the restart: tmp/ still holds %v", left)
	}
	return b
}

// callAsync posts a tools/call to a and returns at once; the answer (or the
// broken connection of a killed agent) is discarded.
func callAsync(a *mcptest.Agent, tool string, args map[string]any) {
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	go func() {
		req, _ := http.NewRequest(http.MethodPost, a.URL+"/mcp", bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
}

// waitFile waits until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within 30s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// diskFiles counts the committed files (meta.json) of area in the disk
// store at data.
func diskFiles(data, area string) int {
	metas, _ := filepath.Glob(filepath.Join(data, area, "*", "*", "meta.json"))
	return len(metas)
}

// tmpEntries lists what is in the disk store's tmp/.
func tmpEntries(data string) []string {
	entries, _ := os.ReadDir(filepath.Join(data, "tmp"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// bucketKeys lists the keys of bucket with prefix, and the multipart
// uploads not completed.
func bucketKeys(t *testing.T, c *minio.Client, bucket, prefix string) (keys []string, uploads int) {
	t.Helper()
	ctx := context.Background()
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	for u := range c.ListIncompleteUploads(ctx, bucket, "", true) {
		if u.Err == nil {
			uploads++
		}
	}
	return keys, uploads
}

// A crash between two outputs of one call: the first is stored when the
// agent is killed; after the restart neither is visible, and the remains
// of the second (a temporary folder on disk) are gone at once, not after
// the staging TTL.
func TestKillBetweenOutputsDisk(t *testing.T) {
	bin := faultagentBinary(t)
	data, mark, env := faultEnv(t)
	a := mcptest.StartAgent(t, bin, env...)
	callAsync(a, "two_outputs", map[string]any{"first_bytes": 100_000, "second_bytes": 300_000, "block": true})
	waitFile(t, mark)
	if n := diskFiles(data, "outputs"); n != 1 {
		t.Fatalf("before the kill: %d outputs committed, want the first one", n)
	}
	if len(tmpEntries(data)) == 0 {
		t.Fatal("before the kill: the second output is not being written in tmp/")
	}
	a.Kill(t)

	b := restartClean(t, bin, data, "outputs", env)
	defer b.Stop(t)
	// The restarted agent works, and its own outputs stay.
	res := call(t, b, "", "two_outputs", map[string]any{"first_bytes": 10, "second_bytes": 20})
	if res.isError || len(res.files()) != 2 {
		t.Fatalf("two_outputs after the restart: %s", trunc(res.text))
	}
	if n := diskFiles(data, "outputs"); n != 2 {
		t.Errorf("a finished call has %d outputs stored, want 2", n)
	}
}

// Replicas sharing one volume: one is killed between two outputs while the
// other runs on; the survivor's sweeper rolls the dead one's call back and
// removes its temporary files within a sweep or two, without a restart.
func TestKillBetweenOutputsReplica(t *testing.T) {
	bin := faultagentBinary(t)
	data, mark, env := faultEnv(t)
	a := mcptest.StartAgent(t, bin, env...)
	b := mcptest.StartAgent(t, bin, append(env, "AGENT_CLEANUP_SCHEDULE=@every 1s")...)
	defer b.Stop(t)
	callAsync(a, "two_outputs", map[string]any{"first_bytes": 100_000, "second_bytes": 300_000, "block": true})
	waitFile(t, mark)
	if n := diskFiles(data, "outputs"); n != 1 {
		t.Fatalf("before the kill: %d outputs committed, want the first one", n)
	}
	a.Kill(t)
	waitFor(t, "the survivor reaping the killed replica's call", func() bool {
		return diskFiles(data, "outputs") == 0 && len(tmpEntries(data)) == 0
	})
}

// The same crash on S3, with the second output in the middle of a
// multipart upload: after the restart neither output is visible.
func TestKillBetweenOutputsS3(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	bin := faultagentBinary(t)
	_, mark, env := faultEnv(t, "AGENT_STORAGE_URL="+srv.StorageURL(bucket))
	for k, v := range srv.Env() {
		env = append(env, k+"="+v)
	}
	a := mcptest.StartAgent(t, bin, env...)
	callAsync(a, "two_outputs", map[string]any{"first_bytes": 100_000, "second_bytes": 9 << 20, "block": true})
	waitFile(t, mark)
	keys, _ := bucketKeys(t, srv.Client(), bucket, "outputs/")
	if metas := countSuffix(keys, "/meta.json"); metas != 1 {
		t.Fatalf("before the kill: %d outputs committed (%v), want the first one", metas, keys)
	}
	waitFor(t, "the second output's multipart upload", func() bool { _, up := bucketKeys(t, srv.Client(), bucket, ""); return up == 1 })
	a.Kill(t)

	// Restarted with a short output TTL, longer than the first output's
	// age: the start-up sweep alone would keep it.
	b := mcptest.StartAgent(t, bin, append(env, "AGENT_OUTPUT_TTL=5s", "AGENT_CLEANUP_SCHEDULE=@every 1s")...)
	defer b.Stop(t)
	keys, _ = bucketKeys(t, srv.Client(), bucket, "outputs/")
	if metas := countSuffix(keys, "/meta.json"); metas != 0 {
		t.Errorf("after the restart: %d outputs of the killed call are still stored: %v", metas, keys)
	}
	if len(keys) != 0 {
		t.Errorf("after the restart: the bucket still holds %v", keys)
	}
	// The multipart upload the kill cut is aborted by the sweeper once
	// older than the TTL (S3 keeps no owner for it).
	waitFor(t, "the sweeper aborting the cut multipart upload", func() bool { _, up := bucketKeys(t, srv.Client(), bucket, ""); return up == 0 })
}

func countSuffix(keys []string, suffix string) int {
	n := 0
	for _, k := range keys {
		if strings.HasSuffix(k, suffix) {
			n++
		}
	}
	return n
}
