package a2acall_test

// Produced files in chunks: a real agent (agentcore on a loopback port)
// streams a generated output as it is written, behind a real reverse proxy
// that can cut the stream; the host assembles it byte-exact.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentura/agentura/a2acall"
	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/internal/testkit/heappeak"
	"github.com/agentura/agentura/internal/testkit/testagent"
)

// chunkTestBytes is the size of the streamed output: 200 MiB, or 16 MiB
// under the race detector or -short (several times slower there);
// A2ACALL_CHUNK_TEST_BYTES sets it.
func chunkTestBytes(t *testing.T) int64 {
	if v := os.Getenv("A2ACALL_CHUNK_TEST_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			t.Fatalf("A2ACALL_CHUNK_TEST_BYTES=%q: give a positive number of bytes", v)
		}
		return n
	}
	if raceOn || testing.Short() {
		return 16 << 20
	}
	return 200 << 20
}

// generated is n deterministic, incompressible bytes.
func generated(n int64) io.Reader {
	return io.LimitReader(rand.NewChaCha8([32]byte{'a', '2', 'a'}), n)
}

type streamInput struct {
	Bytes   int64 `json:"bytes"`
	PauseAt int64 `json:"pause_at,omitempty"`
}

// gatedReader stops at pauseAt until gate is closed.
type gatedReader struct {
	r       io.Reader
	at      int64
	pauseAt int64
	gate    <-chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if g.gate != nil && g.at >= g.pauseAt {
		select {
		case <-g.gate:
			g.gate = nil
		case <-time.After(3 * time.Minute):
			return 0, errors.New("the test never opened the gate")
		}
	}
	if g.gate != nil {
		p = p[:min(int64(len(p)), g.pauseAt-g.at)]
	}
	n, err := g.r.Read(p)
	g.at += int64(n)
	return n, err
}

// chunkProxy is a reverse proxy to the agent that cuts the first
// event stream after cutAfter bytes and tells resubscribed when a
// tasks/resubscribe passes.
type chunkProxy struct {
	cutAfter     int64
	streams      atomic.Int32
	cuts         atomic.Int32
	resubscribes atomic.Int32
	resubscribed chan struct{}
	once         sync.Once
}

func (p *chunkProxy) start(t *testing.T, agent string) *httptest.Server {
	target, _ := url.Parse(agent)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && p.streams.Add(1) == 1 && p.cutAfter > 0 {
			resp.Body = &cutBody{ReadCloser: resp.Body, left: p.cutAfter, cut: func() { p.cuts.Add(1) }}
		}
		return nil
	}
	rp.ErrorLog = nil
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tasks/resubscribe"`)) {
				p.resubscribes.Add(1)
				p.once.Do(func() { close(p.resubscribed) })
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// cutBody fails after left bytes: the proxy aborts the response, and the
// caller's connection breaks mid-stream.
type cutBody struct {
	io.ReadCloser
	left int64
	cut  func()
}

func (c *cutBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.cut()
		return 0, errors.New("stream cut by the test proxy")
	}
	n, err := c.ReadCloser.Read(p[:min(int64(len(p)), c.left)])
	c.left -= int64(n)
	return n, err
}

// rangeCounter counts the Range requests of the host and their bytes.
type rangeCounter struct {
	base          http.RoundTripper
	requests      atomic.Int32
	bytes         atomic.Int64
	wholeDownload atomic.Int32
}

func (c *rangeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil && strings.HasPrefix(r.URL.Path, "/files/") {
		if r.Header.Get("Range") != "" {
			c.requests.Add(1)
			c.bytes.Add(resp.ContentLength)
		} else {
			c.wholeDownload.Add(1)
		}
	}
	return resp, err
}

// watchFolder records every name other than a hidden temporary one that
// appears in dir, with its size when first seen, until stop.
func watchFolder(dir string, stop <-chan struct{}) func() map[string]int64 {
	seen := map[string]int64{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".part-") {
					continue
				}
				if _, ok := seen[e.Name()]; !ok {
					info, _ := e.Info()
					if info != nil {
						seen[e.Name()] = info.Size()
					}
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() map[string]int64 { <-done; return seen }
}

func serveStreamingAgent(t *testing.T, size int64, gate <-chan struct{}) *testagent.Agent {
	a := testagent.Start(t, testagent.Options{MaxUploadBytes: size + 1<<20})
	agentcore.AddTool(a.Service, agentcore.Tool{Name: "stream_blob", Description: "streams a generated file as it is written"},
		func(ctx context.Context, call *agentcore.Call, in streamInput) (*agentcore.Result, error) {
			r := &gatedReader{r: generated(in.Bytes), pauseAt: in.PauseAt}
			if in.PauseAt > 0 {
				r.gate = gate
			}
			return call.FileResponse(ctx, agentcore.OutputReader("blob.bin", r))
		})
	return a
}

func wantSum(size int64) string {
	h := sha256.New()
	io.Copy(h, generated(size))
	return hex.EncodeToString(h.Sum(nil))
}

func fileSum(t *testing.T, path string) string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil))
}

// chunkRun is what callChunked saw.
type chunkRun struct {
	proxy   *chunkProxy
	counter *rangeCounter
	took    time.Duration
	peak    uint64 // the heap's growth during the call
	agent   string // the agent's base URL
	taskID  string
}

// callChunked calls stream_blob for size generated bytes through the proxy
// (which cuts the first stream after cutAfter bytes, unless 0; the tool
// waits at pauseAt, unless 0, until a tasks/resubscribe passed) and checks
// what every run must give: one file, byte-exact, the only one that ever
// showed in the output folder, and no assembly left behind.
func callChunked(t *testing.T, size, cutAfter, pauseAt int64) *chunkRun {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	run := &chunkRun{proxy: &chunkProxy{cutAfter: cutAfter, resubscribed: make(chan struct{})}, counter: &rangeCounter{base: http.DefaultTransport}}
	agent := serveStreamingAgent(t, size, run.proxy.resubscribed)
	srv := run.proxy.start(t, agent.Base)
	out := t.TempDir()
	host, _ := url.Parse(agent.Base)
	c := &a2acall.Client{Dir: out, MaxBytes: size, DownloadHosts: []string{host.Host}, HTTPClient: &http.Client{Transport: run.counter}}
	args := map[string]any{"bytes": size}
	if pauseAt > 0 {
		args["pause_at"] = pauseAt
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	stop := make(chan struct{})
	seen := watchFolder(out, stop)
	var res *a2acall.Result
	var err error
	start := time.Now()
	run.peak = heappeak.Measure(func() { res, err = c.CallSkill(ctx, srv.URL, "stream_blob", args) })
	run.took = time.Since(start)
	close(stop)
	if err != nil {
		t.Fatalf("CallSkill: %v", err)
	}
	if len(res.Files) != 1 || res.Files[0].Size != size {
		t.Fatalf("files = %+v, want one of %d bytes", res.Files, size)
	}
	if got, want := fileSum(t, res.Files[0].Path), wantSum(size); got != want {
		t.Errorf("sha256 %s, want %s", got, want)
	}
	checkFolder(t, seen(), size)
	checkNoTemp(t, tmp)
	run.agent, run.taskID = agent.Base, res.TaskID
	return run
}

// storedTask is the task as tasks/get answers it, raw.
func storedTask(t *testing.T, agent, id string) []byte {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"` + id + `"}}`
	resp, err := http.Post(agent+"/a2a", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("tasks/get: %d %s %v", resp.StatusCode, data, err)
	}
	return data
}

// TestChunkedArtifact: the output streams in chunks as the tool writes it
// and arrives byte-exact, with no download of the file, and the heap of
// both sides (one process here) stays far below the file's size.
func TestChunkedArtifact(t *testing.T) {
	size := chunkTestBytes(t)
	run := callChunked(t, size, 0, 0)
	if n := run.counter.wholeDownload.Load() + run.counter.requests.Load(); n != 0 {
		t.Errorf("%d downloads of the file; every byte should have come in chunks", n)
	}
	// The task keeps the file's artifact (its URL, size, sha256), no chunk.
	task := storedTask(t, run.agent, run.taskID)
	if len(task) > 16<<10 || bytes.Contains(task, []byte(`"bytes":"`)) || !bytes.Contains(task, []byte(`"uri"`)) {
		t.Errorf("tasks/get answers %d bytes; want the file's artifact with its uri and no bytes: %.2000s", len(task), task)
	}
	t.Logf("%d MiB in chunks in %s (%.1f MiB/s); heap grew at most %.1f MiB", size>>20, run.took.Round(time.Millisecond), float64(size>>20)/run.took.Seconds(), float64(run.peak)/(1<<20))
	if limit := uint64(64 << 20); run.peak > limit {
		t.Errorf("the heap grew by %d bytes while %d bytes streamed; want under %d (nothing holds the whole file)", run.peak, size, limit)
	}
}

// TestChunkedArtifactResumes: the proxy cuts the stream early; the host
// resubscribes, takes the later chunks (the tool waits for the
// resubscription at 60 %), fetches the range it missed from the file's URL,
// and the file is byte-exact, with no partial file ever in the folder.
func TestChunkedArtifactResumes(t *testing.T) {
	size := chunkTestBytes(t)
	run := callChunked(t, size, size/10, size*6/10)
	proxy, counter := run.proxy, run.counter
	if proxy.cuts.Load() != 1 || proxy.resubscribes.Load() < 1 {
		t.Errorf("cuts %d, resubscribes %d; want the stream cut once and taken up again", proxy.cuts.Load(), proxy.resubscribes.Load())
	}
	ranged := counter.bytes.Load()
	if counter.requests.Load() == 0 || ranged <= 0 || ranged >= size*6/10 || counter.wholeDownload.Load() != 0 {
		t.Errorf("%d Range requests for %d bytes, %d whole downloads; want only the gap fetched, less than the %d bytes before the pause",
			counter.requests.Load(), ranged, counter.wholeDownload.Load(), size*6/10)
	}
	t.Logf("stream cut once; %d resubscription(s); %d Range request(s) filled %.1f MiB of %d MiB; %s; heap grew at most %.1f MiB",
		proxy.resubscribes.Load(), counter.requests.Load(), float64(ranged)/(1<<20), size>>20, run.took.Round(time.Millisecond), float64(run.peak)/(1<<20))
}

// TestChunksCallerGetsSmallBytesParts: a file moved in from WorkDir is not
// sent in chunks; to a caller that takes chunks its bytes part is sent only
// up to a chunk's size, since a2a-go's SSE reader takes lines up to 64 KiB
// (with AGENT_EMBED_MAX_BYTES at its default, 64 KiB, a 60 KiB file broke
// the stream: "bufio.Scanner: token too long"). Neither needs a resume.
func TestChunksCallerGetsSmallBytesParts(t *testing.T) {
	agent := testagent.Start(t, testagent.Options{EmbedMaxBytes: 64 << 10})
	agentcore.AddTool(agent.Service, agentcore.Tool{Name: "workdir_blob", Description: "writes a file in WorkDir and hands it out"},
		func(ctx context.Context, call *agentcore.Call, in streamInput) (*agentcore.Result, error) {
			dir, err := call.WorkDir()
			if err != nil {
				return nil, err
			}
			p := filepath.Join(dir, "w.bin")
			data, _ := io.ReadAll(generated(in.Bytes))
			if err := os.WriteFile(p, data, 0o600); err != nil {
				return nil, err
			}
			return call.FileResponse(ctx, agentcore.OutputFile("w.bin", p))
		})
	proxy := &chunkProxy{resubscribed: make(chan struct{})}
	srv := proxy.start(t, agent.Base)
	host, _ := url.Parse(agent.Base)
	for _, size := range []int64{1 << 10, 60 << 10} {
		c := &a2acall.Client{Dir: t.TempDir(), DownloadHosts: []string{host.Host}}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		res, err := c.CallSkill(ctx, srv.URL, "workdir_blob", map[string]any{"bytes": size})
		cancel()
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		if len(res.Files) != 1 || fileSum(t, res.Files[0].Path) != wantSum(size) {
			t.Errorf("%d bytes: files %+v, not byte-exact", size, res.Files)
		}
	}
	if n := proxy.resubscribes.Load(); n != 0 {
		t.Errorf("%d resubscriptions; the streams should not have broken", n)
	}
}

// checkFolder: the only file that ever showed in the output folder is the
// whole one.
func checkFolder(t *testing.T, seen map[string]int64, size int64) {
	t.Helper()
	for name, n := range seen {
		if name != "blob.bin" || n != size {
			t.Errorf("the output folder showed %s at %d bytes; only blob.bin, whole (%d bytes), may appear", name, n, size)
		}
	}
}

// checkNoTemp: no chunk assembly is left in the temporary folder.
func checkNoTemp(t *testing.T, tmp string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(tmp, "a2a-chunks-*"))
	if len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
