// Package scaleout_test runs the example agent, and the composer, as two
// replicas sharing one S3 bucket (a real versitygw) and one signing key,
// behind a round-robin load balancer, with stateless MCP: the set-up
// AGENT_STORAGE_URL=s3://... and AGENT_MCP_STATELESS=true exist for.
package scaleout_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/minio/minio-go/v7"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/examples/fileagent"
	_ "github.com/agentura/agentura/fileserve/s3store" // s3:// storage
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/s3test"
)

const (
	signingKey   = "scale-out-test-signing-key-0123456789abcdef"
	callerSecret = "scale-out-test-caller-secret-0123456789abcdef"
)

// replica is one running agent.
type replica struct {
	name string
	base string // http://127.0.0.1:port
	// calls counts the requests the load balancer sent it.
	calls atomic.Int64
}

// cluster is two replicas behind a round-robin load balancer whose URL is
// every replica's AGENT_PUBLIC_URL.
type cluster struct {
	lb       *httptest.Server
	replicas []*replica
	next     atomic.Int64
	s3       *s3test.Server
	bucket   string
}

// newCluster starts versitygw, a bucket and two replicas of the example
// agent sharing both. extra adds settings to every replica.
func newCluster(t *testing.T, extra map[string]string) *cluster {
	t.Helper()
	return newClusterOf(t, fileagent.Info, fileagent.DefaultAddr, fileagent.Register, extra)
}

// newClusterOf is newCluster with the agent info names and register sets up.
func newClusterOf(t *testing.T, info agentcore.Info, defaultAddr string, register func(*agentcore.Service) error, extra map[string]string) *cluster {
	t.Helper()
	c := &cluster{s3: s3test.Start(t)}
	c.bucket = c.s3.NewBucket(t)
	c.lb = httptest.NewServer(http.HandlerFunc(c.balance))
	t.Cleanup(c.lb.Close)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, name := range []string{"A", "B"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		env := map[string]string{
			"AGENT_ADDR":            ln.Addr().String(),
			"AGENT_PUBLIC_URL":      c.lb.URL,
			"AGENT_DATA_DIR":        t.TempDir(),
			"AGENT_SIGNING_KEY":     signingKey,
			"AGENT_STORAGE_URL":     c.s3.StorageURL(c.bucket),
			"AGENT_MCP_STATELESS":   "true",
			"AGENT_AUTH":            "jwt",
			"AGENT_AUTH_JWT_SECRET": callerSecret,
			"AGENT_EMBED_MAX_BYTES": "0",
		}
		for k, v := range c.s3.Env() {
			env[k] = v
		}
		for k, v := range extra {
			env[k] = v
		}
		cfg, err := agentcore.ConfigFromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, info.Name, defaultAddr)
		if err != nil {
			t.Fatal(err)
		}
		logger := slog.New(slog.NewTextHandler(io.Discard, nil))
		svc, err := agentcore.New(info, cfg, logger)
		if err != nil {
			t.Fatalf("replica %s: %v", name, err)
		}
		t.Cleanup(func() { svc.Close() })
		if err := register(svc); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := svc.Serve(ctx, ln); err != nil {
				t.Errorf("replica %s: %v", name, err)
			}
		})
		r := &replica{name: name, base: "http://" + ln.Addr().String()}
		mcptest.WaitReady(t, r.base)
		c.replicas = append(c.replicas, r)
	}
	return c
}

// balance sends each request to the next replica in turn, as a load
// balancer without sticky sessions does.
func (c *cluster) balance(w http.ResponseWriter, r *http.Request) {
	rep := c.replicas[int(c.next.Add(1)-1)%len(c.replicas)]
	rep.calls.Add(1)
	target, _ := url.Parse(rep.base)
	httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
}

// callerToken is a bearer token for caller sub.
func callerToken(t *testing.T, sub string) string {
	t.Helper()
	return mcptest.BearerToken(t, callerSecret, sub)
}

// testPNG draws a small picture.
func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := range 48 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 5), 128, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// connect opens an MCP session as caller sub at base (the load balancer or
// one replica).
func connect(t *testing.T, base, sub string) *client.Client {
	t.Helper()
	c, _ := mcptest.Connect(t, base+"/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + callerToken(t, sub)}))
	return c
}

// via rewrites a URL handed out under the load balancer's name to reach one
// replica directly.
func via(t *testing.T, rawURL string, r *replica) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse(r.base)
	u.Host = base.Host
	return u.String()
}

// TestTwoReplicas: a file produced through one replica downloads through
// either, a URL handed out by one is an input to the other, an upload
// staged on one is an input to the other, and the owner comes from each
// request's token, not from an MCP session that only one replica knows.
func TestTwoReplicas(t *testing.T) {
	c := newCluster(t, nil)
	A, B := c.replicas[0], c.replicas[1]
	alice := connect(t, c.lb.URL, "alice")
	pic := testPNG(t)

	// A sequence of calls through the load balancer, which alternates
	// replicas on every request.
	res := mcptest.CallTool(t, alice, "archive_files", map[string]any{
		"sources": []any{map[string]any{"name": "scan.png", "content": "data:image/png;base64," + base64.StdEncoding.EncodeToString(pic)}},
		"name":    "bundle",
	})
	mcptest.MustSucceed(t, "archive_files", res)
	files := mcptest.Structured[struct{ Files []mcptest.File }](t, res).Files
	if len(files) != 2 {
		t.Fatalf("archive_files produced %d files, want 2: %s", len(files), mcptest.Text(res))
	}
	zipFile := files[0]
	if !strings.HasPrefix(zipFile.DownloadURL, c.lb.URL+"/files/") {
		t.Fatalf("download URL %s is not under the public URL %s", zipFile.DownloadURL, c.lb.URL)
	}

	// The file downloads through both replicas, alike.
	var zipBytes []byte
	for _, r := range []*replica{A, B} {
		resp, body := mcptest.Get(t, via(t, zipFile.DownloadURL, r), nil)
		if resp.StatusCode != http.StatusOK || int64(len(body)) != zipFile.SizeBytes {
			t.Fatalf("download through %s: %s, %d bytes (want %d): %.200s", r.name, resp.Status, len(body), zipFile.SizeBytes, body)
		}
		if zipBytes != nil && !bytes.Equal(body, zipBytes) {
			t.Fatalf("replica %s serves other bytes than replica A", r.name)
		}
		zipBytes = body
		if et := resp.Header.Get("ETag"); et != `"`+sha256Hex(body)+`"` {
			t.Errorf("ETag through %s = %s", r.name, et)
		}
	}
	// Range and conditional requests are answered from S3 too.
	resp, part := mcptest.Get(t, via(t, zipFile.DownloadURL, B), http.Header{"Range": {"bytes=10-29"}})
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, zipBytes[10:30]) {
		t.Errorf("Range through B: %s, %q", resp.Status, part)
	}
	resp, _ = mcptest.Get(t, via(t, zipFile.DownloadURL, A), http.Header{"If-None-Match": {`"` + sha256Hex(zipBytes) + `"`}})
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match through A: %s, want 304", resp.Status)
	}

	// The URL one replica handed out is an input of the next call, which
	// the other replica serves (read from the bucket, not fetched).
	for i := range 4 {
		res = mcptest.CallTool(t, alice, "inspect_file", map[string]any{"source": map[string]any{"name": "bundle.zip", "content": zipFile.DownloadURL}})
		mcptest.MustSucceed(t, fmt.Sprintf("inspect_file #%d", i), res)
		got := mcptest.Structured[map[string]any](t, res)
		if got["sha256"] != sha256Hex(zipBytes) {
			t.Fatalf("inspect_file #%d saw sha256 %v, want %s", i, got["sha256"], sha256Hex(zipBytes))
		}
	}
	for _, r := range []*replica{A, B} {
		if r.calls.Load() < 3 {
			t.Errorf("replica %s served %d requests; the sequence did not alternate", r.name, r.calls.Load())
		}
	}

	// A staged upload on A is an input of a call on B.
	req, _ := http.NewRequest(http.MethodPost, A.base+"/uploads", bytes.NewReader(pic))
	req.Header.Set("X-Filename", "staged.png")
	req.Header.Set("Authorization", "Bearer "+callerToken(t, "alice"))
	up, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var staged struct{ URL string }
	json.NewDecoder(up.Body).Decode(&staged)
	up.Body.Close()
	if up.StatusCode != http.StatusCreated {
		t.Fatalf("upload to A: %s", up.Status)
	}
	aliceOnB := connect(t, B.base, "alice")
	res = mcptest.CallTool(t, aliceOnB, "inspect_file", map[string]any{"source": map[string]any{"name": "staged.png", "content": staged.URL}})
	mcptest.MustSucceed(t, "inspect_file of a staged upload on the other replica", res)
	if got := mcptest.Structured[map[string]any](t, res); got["sha256"] != sha256Hex(pic) || got["mime_type"] != "image/png" {
		t.Errorf("staged upload seen by B: %v", got)
	}

	// Owner scoping comes from each request's token: bob, also through the
	// load balancer, cannot use alice's URL.
	bob := connect(t, c.lb.URL, "bob")
	for range 2 { // once per replica
		res = mcptest.CallTool(t, bob, "inspect_file", map[string]any{"source": map[string]any{"name": "bundle.zip", "content": zipFile.DownloadURL}})
		if !res.IsError || !strings.Contains(mcptest.Text(res), "another caller") {
			t.Errorf("bob used alice's file: isError=%v %s", res.IsError, mcptest.Text(res))
		}
	}
}

// TestRedirect: with AGENT_S3_REDIRECT a download is a 302 to a presigned
// URL of the S3 server, which serves the file with the agent's headers.
func TestRedirect(t *testing.T) {
	c := newCluster(t, map[string]string{"AGENT_S3_REDIRECT": "true"})
	alice := connect(t, c.lb.URL, "alice")
	res := mcptest.CallTool(t, alice, "archive_files", map[string]any{
		"sources": []any{map[string]any{"name": "notes.txt", "content": "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte("hello from S3\n"))}},
	})
	mcptest.MustSucceed(t, "archive_files", res)
	f := mcptest.Structured[struct{ Files []mcptest.File }](t, res).Files[0]
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(via(t, f.DownloadURL, c.replicas[1]))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "http://"+c.s3.Endpoint+"/"+c.bucket+"/") {
		t.Fatalf("GET with redirect: %s to %q, want 302 to the S3 server", resp.Status, loc)
	}
	resp, body := mcptest.Get(t, loc, nil)
	if resp.StatusCode != http.StatusOK || int64(len(body)) != f.SizeBytes {
		t.Fatalf("presigned GET: %s, %d bytes", resp.Status, len(body))
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, `filename="bundle.zip"`) {
		t.Errorf("presigned GET Content-Disposition = %q", cd)
	}
	if ct := resp.Header.Get("Content-Type"); ct != f.MIMEType {
		t.Errorf("presigned GET Content-Type = %q, want %q", ct, f.MIMEType)
	}
	// A tampered token still gets 403 from the agent, never a redirect.
	resp, _ = mcptest.Get(t, strings.Replace(via(t, f.DownloadURL, c.replicas[0]), "token=", "token=x", 1), nil)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("tampered token: %s, want 403", resp.Status)
	}
	// HEAD is answered by the agent itself.
	resp, err = noFollow.Head(via(t, f.DownloadURL, c.replicas[0]))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength != f.SizeBytes {
		t.Errorf("HEAD with redirect on: %s, length %d", resp.Status, resp.ContentLength)
	}
}

// TestUploadCapOnS3: an upload over AGENT_MAX_UPLOAD_BYTES is refused while
// it streams into the bucket, and leaves neither object nor unfinished
// multipart upload behind.
func TestUploadCapOnS3(t *testing.T) {
	c := newCluster(t, map[string]string{"AGENT_MAX_UPLOAD_BYTES": "2097152"})
	for _, size := range []int{3 << 20, 12 << 20} { // within the read-ahead, and across parts
		req, _ := http.NewRequest(http.MethodPost, c.replicas[0].base+"/uploads", io.LimitReader(zeroReader{}, int64(size)))
		req.Header.Set("X-Filename", "big.bin")
		req.Header.Set("Authorization", "Bearer "+callerToken(t, "alice"))
		req.ContentLength = -1 // streamed, so the cap is met mid-stream rather than by the declared length
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%d byte upload: %s, want 413", size, resp.Status)
		}
	}
	ctx := context.Background()
	for obj := range c.s3.Client().ListObjectsIter(ctx, c.bucket, minio.ListObjectsOptions{Recursive: true}) {
		t.Errorf("the bucket holds %s (%v) after refused uploads", obj.Key, obj.Err)
	}
	for up := range c.s3.Client().ListIncompleteUploads(ctx, c.bucket, "", true) {
		t.Errorf("unfinished upload %s (%v) after refused uploads", up.Key, up.Err)
	}
}

// zeroReader reads as endless zeros.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
