package attack

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// loadStats counts the outcomes of transfers under load.
type loadStats struct {
	ok, refused, corrupt, failed atomic.Int64
	mu                           sync.Mutex
	failures                     []string
}

func (s *loadStats) fail(format string, args ...any) {
	s.failed.Add(1)
	s.mu.Lock()
	if len(s.failures) < 10 {
		s.failures = append(s.failures, fmt.Sprintf(format, args...))
	}
	s.mu.Unlock()
}

// cleanRefusal reports whether an HTTP status is a refusal a client can act
// on: the file is gone (swept), or the agent is busy.
func cleanRefusal(status int) bool {
	return status == http.StatusNotFound || status == http.StatusGone || status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests
}

var loadClient = &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 600}}

// fetch downloads url and checks it against want: ok, refused or corrupt.
func (s *loadStats) fetch(url string, want []byte) {
	resp, err := loadClient.Get(url)
	if err != nil {
		s.fail("download: %v", err)
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	switch {
	case cleanRefusal(resp.StatusCode):
		s.refused.Add(1)
	case resp.StatusCode != http.StatusOK || err != nil:
		s.fail("download: %d %v %.200s", resp.StatusCode, err, b)
	case !bytes.Equal(b, want):
		s.corrupt.Add(1)
	default:
		s.ok.Add(1)
	}
}

// tool runs a stateless tools/call and returns its result, or ok=false
// after counting a refusal or failure.
func (s *loadStats) tool(a *mcptest.Agent, name string, args map[string]any) (map[string]any, bool) {
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, a.URL+"/mcp", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := loadClient.Do(req)
	if err != nil {
		s.fail("%s: %v", name, err)
		return nil, false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if cleanRefusal(resp.StatusCode) {
		s.refused.Add(1)
		return nil, false
	}
	var out struct {
		Result struct {
			IsError bool             `json:"isError"`
			Content []map[string]any `json:"content"`
			Data    map[string]any   `json:"structuredContent"`
		} `json:"result"`
	}
	if i := bytes.LastIndex(b, []byte("data: ")); i >= 0 {
		b = b[i+len("data: "):]
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil {
		s.fail("%s: %d %.200s", name, resp.StatusCode, b)
		return nil, false
	}
	if out.Result.IsError {
		text := fmt.Sprint(out.Result.Content)
		if strings.Contains(text, "not found") || strings.Contains(text, "expired") || strings.Contains(text, "no longer") {
			s.refused.Add(1)
		} else {
			s.fail("%s: tool error %.300s", name, text)
		}
		return nil, false
	}
	return out.Result.Data, true
}

// upload stages want and returns its URL, or "" after counting.
func (s *loadStats) upload(a *mcptest.Agent, name string, want []byte) string {
	req, _ := http.NewRequest(http.MethodPost, a.URL+"/uploads", bytes.NewReader(want))
	req.Header.Set("X-Filename", name)
	resp, err := loadClient.Do(req)
	if err != nil {
		s.fail("upload: %v", err)
		return ""
	}
	defer resp.Body.Close()
	var u struct {
		URL string `json:"url"`
	}
	b, _ := io.ReadAll(resp.Body)
	switch {
	case cleanRefusal(resp.StatusCode):
		s.refused.Add(1)
	case resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &u) != nil || u.URL == "":
		s.fail("upload: %d %.200s", resp.StatusCode, b)
	}
	return u.URL
}

// transfer is one of the load's transfers: kind 0 uploads and downloads,
// 1 uploads and has a tool read the upload, 2 has a tool make two outputs
// and downloads them.
func (s *loadStats) transfer(a *mcptest.Agent, i int) {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	switch i % 3 {
	case 0, 1:
		want := make([]byte, 1+r.IntN(96<<10))
		for j := range want {
			want[j] = byte(r.Uint32())
		}
		url := s.upload(a, fmt.Sprintf("f%d.bin", i), want)
		if url == "" {
			return
		}
		pause(r, i)
		if i%3 == 0 {
			s.fetch(url, want)
			return
		}
		data, ok := s.tool(a, "inspect_file", map[string]any{"source": map[string]any{"name": "f.bin", "content": url}})
		if !ok {
			return
		}
		sum := sha256.Sum256(want)
		if data["sha256"] != hex.EncodeToString(sum[:]) {
			s.corrupt.Add(1)
			return
		}
		s.ok.Add(1)
	case 2:
		first, second := 1+r.IntN(64<<10), 1+r.IntN(64<<10)
		data, ok := s.tool(a, "two_outputs", map[string]any{"first_bytes": first, "second_bytes": second})
		if !ok {
			return
		}
		pause(r, i)
		files, _ := data["files"].([]any)
		if len(files) != 2 {
			s.fail("two_outputs: %v", data)
			return
		}
		for k, f := range files {
			want := bytes.Repeat([]byte{'a'}, first)
			if k == 1 {
				want = bytes.Repeat([]byte{'b'}, second)
			}
			s.fetch(fmt.Sprint(f.(map[string]any)["download_url"]), want)
		}
	}
}

// pause waits between a transfer's steps: up to 2 s, during which the
// sweeper may delete the file or delete it while it is read on a slow
// machine; and one transfer in five (of each kind: i%3 goes round over the
// multiples of 5) waits past the 3 s TTL for sure, so that
// a fast run meets expired and swept files too (on a quiet machine all 500
// once ended within their TTL, and the test proved nothing of refusals).
func pause(r *rand.Rand, i int) {
	d := time.Duration(r.IntN(2000)) * time.Millisecond
	if i%5 == 0 {
		d = 3500*time.Millisecond + time.Duration(r.IntN(1500))*time.Millisecond
	}
	time.Sleep(d)
}

// 500 concurrent transfers (uploads, downloads, tool calls) while the
// sweeper runs every second with TTLs of three seconds, some waiting past
// the TTL between their steps: 0 corrupt bytes and no failure other than
// clean refusals (the file expired or was swept: 404, or the agent is busy:
// 503/429). A file is refused from the moment it expires, so the TTL must
// leave the transfers of a slow machine a chance to finish first.
func TestTransfersWhileSweeping(t *testing.T) {
	n := 500
	a := mcptest.StartAgent(t, faultagentBinary(t), "AGENT_SIGNING_KEY="+signingKey, "AGENT_MCP_STATELESS=true",
		"AGENT_CLEANUP_SCHEDULE=@every 1s", "AGENT_STAGING_TTL=3s", "AGENT_OUTPUT_TTL=3s",
		"AGENT_RATE_LIMIT=0", "AGENT_MAX_CLIENT_CONNECTIONS=0") // 500 transfers from one address: the sweeper, not the rate limit or the connection cap, is under test
	defer a.Stop(t)
	var st loadStats
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); st.transfer(a, i) }()
	}
	wg.Wait()
	t.Logf("%d transfers in %v: %d ok, %d refused cleanly, %d corrupt, %d failed", n, time.Since(start).Round(time.Millisecond),
		st.ok.Load(), st.refused.Load(), st.corrupt.Load(), st.failed.Load())
	if st.corrupt.Load() != 0 || st.failed.Load() != 0 {
		t.Errorf("%d corrupt, %d failed: %v", st.corrupt.Load(), st.failed.Load(), st.failures)
	}
	// Many transfers outlive their 3 s TTL when the agent is slow (under
	// -race on two busy cores): a few of each kind prove both paths ran. TestSweeperKeepsUpUnderLoad reads every
	// file within its TTL.
	if st.ok.Load() < int64(n)/50 || st.refused.Load() == 0 {
		t.Errorf("%d transfers succeeded and %d met a swept file: the load proves little", st.ok.Load(), st.refused.Load())
	}
	if !strings.Contains(a.Logs(), "cleanup") {
		t.Error("the sweeper did not run")
	}
}

// SIGTERM under load: calls in flight finish (their outputs complete and
// kept) or fail cleanly (a call blocked past the shutdown timeout leaves no
// output), nothing partial stays, and the restarted agent finds nothing to
// roll back.
func TestSIGTERMUnderLoad(t *testing.T) {
	bin := faultagentBinary(t)
	data, mark, env := faultEnv(t, "AGENT_SHUTDOWN_TIMEOUT=3s")
	a := mcptest.StartAgent(t, bin, env...)
	callAsync(a, "two_outputs", map[string]any{"first_bytes": 1000, "second_bytes": 1000, "block": true})
	waitFile(t, mark)

	var st loadStats
	var wg sync.WaitGroup
	var calls atomic.Int64
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if data, ok := st.tool(a, "two_outputs", map[string]any{"first_bytes": 200_000 + i, "second_bytes": 300_000 + i}); ok {
				if files, _ := data["files"].([]any); len(files) == 2 {
					calls.Add(1)
				}
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	a.Cmd.Process.Signal(syscall.SIGTERM)
	wg.Wait()
	select {
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not exit within 30s of SIGTERM")
	case <-a.Exited():
	}
	// A call that got no answer failed at the connection (reset or refused
	// once the listener closed): it never started or was cut; either way
	// it must leave nothing.
	for _, f := range st.failures {
		if !strings.Contains(f, "connection re") && !strings.Contains(f, "EOF") {
			t.Errorf("a call failed otherwise than cleanly: %s", f)
		}
	}
	// Every output kept belongs to a call that answered, and is whole; the
	// blocked call's first output is gone.
	checkOutputs := func(when string) {
		metas, _ := filepath.Glob(filepath.Join(data, "outputs", "*", "*", "meta.json"))
		if len(metas) != int(2*calls.Load()) {
			t.Errorf("%s: %d outputs stored, want %d (two per answered call)", when, len(metas), 2*calls.Load())
		}
		for _, m := range metas {
			var meta struct{ Size int64 }
			b, _ := os.ReadFile(m)
			json.Unmarshal(b, &meta)
			if fi, err := os.Stat(filepath.Join(filepath.Dir(m), "data")); err != nil || fi.Size() != meta.Size {
				t.Errorf("%s: partial output %s", when, m)
			}
		}
	}
	checkOutputs("after SIGTERM")
	t.Logf("%d calls answered across SIGTERM, %d cut at the connection; exit: %v", calls.Load(), st.failed.Load(), a.ExitErr())

	// The restart finds the remains of the call cut at the shutdown timeout
	// (its temporary file) and removes them; the answered calls' outputs stay.
	b := mcptest.StartAgent(t, bin, env...)
	b.Stop(t)
	checkOutputs("after the restart")
	if left := tmpEntries(data); len(left) != 0 {
		t.Errorf("tmp/ holds %v after the restart", left)
	}
}
