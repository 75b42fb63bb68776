package limitstest

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// A request body that never comes (escape E1), or trickles below
// AGENT_MIN_BODY_RATE, is cut off after AGENT_BODY_TIMEOUT and leaves no
// staged file; a tool call that runs longer than the timeout once its body
// is read is not cut.
func TestSlowBodiesAreCutOff(t *testing.T) {
	dataDir := t.TempDir()
	a := mcptest.StartAgent(t, agentBin, "AGENT_BODY_TIMEOUT=1s", "AGENT_MIN_BODY_RATE=1000", "AGENT_DATA_DIR="+dataDir)
	t.Cleanup(func() { a.Stop(t) })
	host := strings.TrimPrefix(a.URL, "http://")

	for _, c := range []struct {
		name, path string
		trickle    bool
	}{
		{"silent upload", "/uploads", false},
		{"trickling upload", "/uploads", true},
		{"silent mcp", "/mcp", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			io.WriteString(conn, "POST "+c.path+" HTTP/1.1\r\nHost: "+host+"\r\nX-Filename: s.bin\r\nContent-Type: application/json\r\n"+
				"Accept: application/json, text/event-stream\r\nContent-Length: 1000000\r\n\r\n")
			start := time.Now()
			if c.trickle {
				go func() {
					for range 40 {
						if _, err := conn.Write([]byte("0123456789")); err != nil {
							return
						}
						time.Sleep(100 * time.Millisecond)
					}
				}()
			}
			conn.SetReadDeadline(time.Now().Add(15 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			took := time.Since(start)
			if err == nil {
				resp.Body.Close()
			}
			// Either an error answer or a closed connection, within the slack and a bit.
			if took > 5*time.Second {
				t.Fatalf("the slow body held the connection for %s (answer err=%v)", took, err)
			}
			if err == nil && resp.StatusCode < 400 {
				t.Fatalf("the slow body was answered %s", resp.Status)
			}
		})
	}
	if n := storedFiles(t, dataDir, "staging"); n != 0 {
		t.Errorf("%d staged files after cut-off uploads, want 0", n)
	}
	if m := metric(t, a, `agentura_refused_total{reason="slow_body"}`); m == "" || strings.HasSuffix(m, " 0") {
		t.Errorf("slow_body refusals not counted: %q", m)
	}
	// The deadline is lifted once the body is read: a 2 s call after a 1 s slack succeeds.
	c, _ := mcptest.Connect(t, a.URL+"/mcp")
	mcptest.MustSucceed(t, "sleep", mcptest.CallTool(t, c, "sleep", map[string]any{"millis": 2500}))
	if resp, body := upload(t, a, "", 200_000); resp.StatusCode != http.StatusCreated {
		t.Errorf("a normal upload: %s %s", resp.Status, body)
	}
}
