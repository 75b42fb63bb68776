package limitstest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

const mib = 1 << 20

// inlineEnv runs the test agent for inline files of up to 64 MiB, MCP
// stateless (plain POSTs, no session).
var inlineEnv = []string{"AGENT_MAX_UPLOAD_BYTES=67108864", "AGENT_MCP_STATELESS=true", "AGENT_RATE_LIMIT=0"}

// payload is n pseudo-random bytes, the same for a seed, streamed.
func payload(n int64, seed uint64) io.Reader {
	return io.LimitReader(rand.NewChaCha8([32]byte{byte(seed)}), n)
}

// inlineBody streams an MCP tools/call of compose_page (or an A2A
// message/send to echo_file when a2a) carrying n bytes inline as base64.
func inlineBody(n int64, seed uint64, a2a bool) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		var head, tail string
		if a2a {
			head = `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[` +
				`{"kind":"data","data":{"skill":"echo_file","arguments":{}}},{"kind":"file","file":{"name":"in.bin","mimeType":"application/octet-stream","bytes":"`
			tail = `"}}]}}}`
		} else {
			head = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"compose_page","arguments":{"markdown":"# page","embeds":[{"name":"big.bin","content":"data:application/octet-stream;name=big.bin;base64,`
			tail = `"}]}}}`
		}
		io.WriteString(pw, head)
		enc := base64.NewEncoder(base64.StdEncoding, pw)
		io.Copy(enc, payload(n, seed))
		enc.Close()
		io.WriteString(pw, tail)
		pw.Close()
	}()
	return pr
}

// post sends an inline call to the agent and returns the answer's body.
func post(t testing.TB, a *mcptest.Agent, n int64, seed uint64, a2a bool) string {
	path := "/mcp"
	if a2a {
		path = "/a2a"
	}
	req, err := http.NewRequest(http.MethodPost, a.URL+path, inlineBody(n, seed, a2a))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("POST %s: %v", path, err)
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || strings.Contains(string(b), `"isError":true`) || strings.Contains(string(b), `"failed"`) {
		t.Errorf("POST %s: %s %.400s", path, resp.Status, b)
	}
	return string(b)
}

// fileURL finds the download URL of the file a tool handed back.
var fileURL = regexp.MustCompile(`http://[^"\s]*/files/[0-9a-f-]{32,36}/(images/big|echo-in)\.bin\?token=[^"\s]+`)

// peakRSS reads VmHWM of the agent process, in bytes.
func peakRSS(t testing.TB, a *mcptest.Agent) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", a.Cmd.Process.Pid))
	if err != nil {
		t.Fatalf("peak RSS needs /proc/<pid>/status (Linux): %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// The peak RSS of the agent stays bounded with large inline files: they are
// decoded into staged files as they arrive (targets of issue 13).
func TestInlinePeakRSS(t *testing.T) {
	for _, c := range []struct {
		name     string
		size     int64
		parallel int
		a2a      bool
		limit    int64
	}{
		{"one 50 MiB MCP input", 50 * mib, 1, false, 128 * mib},
		{"four concurrent 40 MiB MCP inputs", 40 * mib, 4, false, 192 * mib},
		{"one 16 MiB A2A bytes part", 16 * mib, 1, true, 128 * mib},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := mcptest.StartAgent(t, plainBin, inlineEnv...) // without -race: its memory is what is measured
			t.Cleanup(func() { a.Stop(t) })
			before := peakRSS(t, a)
			var wg sync.WaitGroup
			for i := range c.parallel {
				wg.Go(func() {
					out := post(t, a, c.size, uint64(i), c.a2a)
					// The file came through whole: download what the tool handed back.
					u := fileURL.FindString(strings.ReplaceAll(out, `\u0026`, "&"))
					if u == "" {
						t.Errorf("no file URL in the answer: %.300s", out)
						return
					}
					want := sha256.New()
					io.Copy(want, payload(c.size, uint64(i)))
					if got := sha256.Sum256(mcptest.Download(t, u)); !bytes.Equal(got[:], want.Sum(nil)) {
						t.Errorf("the file handed back differs from the inline input")
					}
				})
			}
			wg.Wait()
			peak := peakRSS(t, a)
			t.Logf("%s: peak RSS %.1f MiB (idle %.1f MiB), target < %d MiB", c.name, float64(peak)/mib, float64(before)/mib, c.limit/mib)
			if peak >= c.limit {
				t.Errorf("peak RSS %.1f MiB, want < %d MiB", float64(peak)/mib, c.limit/mib)
			}
		})
	}
}

// A body cut in the middle of an inline file leaves nothing staged.
func TestInlineCutMidStringLeavesNothing(t *testing.T) {
	dataDir := t.TempDir()
	a := mcptest.StartAgent(t, agentBin, append(inlineEnv, "AGENT_DATA_DIR="+dataDir)...)
	t.Cleanup(func() { a.Stop(t) })
	host := strings.TrimPrefix(a.URL, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: "+host+"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 20000000\r\n\r\n")
	io.Copy(conn, io.LimitReader(inlineBody(10*mib, 1, false), 8*mib)) // 8 of the ~13.3 MiB body
	// The agent has staged part of the file by now; the client goes away.
	deadline := time.Now().Add(10 * time.Second)
	for storedTemp(t, dataDir) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the agent never began staging the inline file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	conn.Close()
	time.Sleep(500 * time.Millisecond)
	if n := storedFiles(t, dataDir, "staging"); n != 0 {
		t.Errorf("%d staged files after a body cut mid-string, want 0", n)
	}
	if n := storedTemp(t, dataDir); n != 0 {
		t.Errorf("%d temporary files left after a body cut mid-string, want 0", n)
	}
	// The agent still works.
	c, _ := mcptest.Connect(t, a.URL+"/mcp")
	mcptest.MustSucceed(t, "sleep", mcptest.CallTool(t, c, "sleep", map[string]any{"millis": 1}))
}
