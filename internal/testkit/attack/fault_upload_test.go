package attack

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/s3test"
)

// startUpload opens a POST /uploads to a that announces length bytes and
// sends the first sent of them; the caller sends the rest or drops it.
func startUpload(t *testing.T, a *mcptest.Agent, length, sent int64) net.Conn {
	t.Helper()
	u, _ := url.Parse(a.URL)
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /uploads HTTP/1.1\r\nHost: %s\r\nX-Filename: slow.bin\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", u.Host, length)
	if _, err := io.CopyN(conn, zeros{}, sent); err != nil {
		t.Fatal(err)
	}
	return conn
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// waitFor polls cond until it holds or 30 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill -9 in the middle of a slow upload: nothing is staged after the
// restart, and the temporary file of the dead process is gone at start-up.
func TestKillMidUpload(t *testing.T) {
	bin := fileagentBinary(t)
	data := t.TempDir()
	env := []string{"AGENT_DATA_DIR=" + data, "AGENT_SIGNING_KEY=" + signingKey, "AGENT_MAX_UPLOAD_BYTES=64000000"}
	a := mcptest.StartAgent(t, bin, env...)
	startUpload(t, a, 32<<20, 3<<20)
	waitFor(t, "the upload writing into tmp/", func() bool {
		got, _ := filepath.Glob(filepath.Join(data, "tmp", "*", "data"))
		return len(got) == 1
	})
	a.Kill(t)
	restartClean(t, bin, data, "staging", env).Stop(t)
}

// The S3 server killed in the middle of a multipart upload: the upload
// fails with a clear error, nothing is visible, and once S3 is back the
// upload left behind is aborted by the sweeper and uploads work again,
// without restarting the agent.
func TestS3KilledMidMultipart(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	env := []string{"AGENT_STORAGE_URL=" + srv.StorageURL(bucket), "AGENT_SIGNING_KEY=" + signingKey,
		"AGENT_MAX_UPLOAD_BYTES=64000000", "AGENT_CLEANUP_SCHEDULE=@every 1s", "AGENT_STAGING_TTL=3s"}
	for k, v := range srv.Env() {
		env = append(env, k+"="+v)
	}
	a := mcptest.StartAgent(t, fileagentBinary(t), env...)
	defer a.Stop(t)
	c := srv.Client()
	conn := startUpload(t, a, 24<<20, 12<<20)
	waitFor(t, "a multipart upload in progress", func() bool { _, up := bucketKeys(t, c, bucket, ""); return up == 1 })

	srv.Kill(t)
	io.CopyN(conn, zeros{}, 12<<20) // the rest; the agent fails on its next part
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to the upload once S3 was down: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode < 500 || !strings.Contains(string(body), "could not store") {
		t.Errorf("upload with S3 down: %d %s; want a 5xx that says it could not store the upload", resp.StatusCode, body)
	}
	if l := leaks(string(body)); len(l) > 0 || strings.Contains(string(body), srv.SecretKey) {
		t.Errorf("the error shows %v: %s", l, body)
	}

	srv.Restart(t)
	waitFor(t, "the sweeper aborting the multipart upload left behind", func() bool {
		keys, up := bucketKeys(t, c, bucket, "staging/")
		return up == 0 && len(keys) == 0
	})
	if r, u := upload(t, a, "", "after.bin", make([]byte, 2<<20)); r.status != http.StatusCreated || u == "" {
		t.Errorf("upload once S3 is back: %s", r)
	}
}
