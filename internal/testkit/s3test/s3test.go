// Package s3test starts a real S3-compatible server for tests: versitygw
// serving a temporary folder on loopback. Tests that need S3 fail (never
// skip) when versitygw is not installed, naming the command that installs
// it.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/requiretool"
)

// Server is a running versitygw.
type Server struct {
	// Endpoint is the host:port of its S3 API (plain HTTP).
	Endpoint string
	// AccessKey and SecretKey are the root account's credentials.
	AccessKey, SecretKey string
	// Root is the folder it serves; each sub-folder is a bucket.
	Root string

	client *minio.Client
	bin    string
	cmd    *exec.Cmd
	done   chan error // cmd.Wait's result
}

// Binary returns the path of the versitygw command: on PATH, or where
// .ci/setup.d/20-versitygw.sh installs it ($(go env GOPATH)/bin).
func Binary() (string, error) {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := procgroup.Output(exec.Command("go", "env", "GOPATH")); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "versitygw")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", errors.New("versitygw, the S3 server these tests run against, is not installed: run `make deps` " +
		"(it runs .ci/setup.d/20-versitygw.sh: go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)")
}

// Start runs versitygw on a free loopback port, serving a new temporary
// folder, until the test ends. When versitygw is missing or the folder's
// file system lacks user extended attributes, the test is skipped, or failed
// under AGENTURA_REQUIRE_TOOLS=1 (CI); see internal/testkit/requiretool.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := Binary()
	if err != nil {
		requiretool.Missing(tb, err.Error())
	}
	root := tb.TempDir()
	if err := checkXattr(root); err != nil {
		requiretool.Missing(tb, fmt.Sprintf("versitygw needs user extended attributes, which the file system of %s lacks (%v); point TMPDIR at a folder on ext4, xfs or tmpfs", root, err))
	}
	s := &Server{Endpoint: freeAddr(tb), AccessKey: "agentura-test", SecretKey: "agentura-test-secret-" + randomHex(8), Root: root, bin: bin}
	s.client, err = minio.New(s.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
	if err != nil {
		tb.Fatal(err)
	}
	s.run(tb)
	return s
}

// run starts versitygw and waits until it answers; it is stopped when the
// test ends.
func (s *Server) run(tb testing.TB) {
	tb.Helper()
	cmd := exec.Command(s.bin, "--port", s.Endpoint, "--access", s.AccessKey, "--secret", s.SecretKey, "posix", s.Root)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	g, err := procgroup.Start(tb, cmd)
	if err != nil {
		tb.Fatalf("start versitygw: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	s.cmd, s.done = cmd, done
	tb.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			g.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := s.client.ListBuckets(ctx)
		cancel()
		if err == nil {
			return
		}
		select {
		case werr := <-done:
			done <- werr
			tb.Fatalf("versitygw exited at start-up (%v): %s", werr, out.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("versitygw did not answer on %s within 20s: %v; its output: %s", s.Endpoint, err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill kills the server with SIGKILL (an outage, as in a crash) and waits
// until it is gone; Restart brings it back.
func (s *Server) Kill(tb testing.TB) {
	tb.Helper()
	s.cmd.Process.Kill()
	werr := <-s.done
	s.done <- werr // for the cleanup
}

// Restart starts the server again after Kill, on the same address and
// folder: what it held before is there again.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.run(tb)
}

// NewBucket creates a bucket with a fresh name and returns the name.
func (s *Server) NewBucket(tb testing.TB) string {
	tb.Helper()
	name := "test-" + randomHex(6)
	if err := s.client.MakeBucket(context.Background(), name, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		tb.Fatalf("create bucket %s: %v", name, err)
	}
	return name
}

// StorageURL is the AGENT_STORAGE_URL of bucket on this server; the
// credentials go in the AWS_* variables of Env.
func (s *Server) StorageURL(bucket string) string {
	return "s3://" + bucket + "?endpoint=" + s.Endpoint + "&secure=false&path_style=true&region=us-east-1"
}

// Env returns the AWS_* variables that carry the credentials.
func (s *Server) Env() map[string]string {
	return map[string]string{"AWS_ACCESS_KEY_ID": s.AccessKey, "AWS_SECRET_ACCESS_KEY": s.SecretKey}
}

// LookupEnv looks the variables of Env up, as os.LookupEnv would in an
// environment holding only them: the fileserve.Env of OpenStore.
func (s *Server) LookupEnv(name string) (string, bool) {
	v, ok := s.Env()[name]
	return v, ok
}

// Client returns a client of the server, for looking behind a store's back.
func (s *Server) Client() *minio.Client { return s.client }

func freeAddr(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
