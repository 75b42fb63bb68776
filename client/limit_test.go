package client_test

// Escape E23: a server's answer is capped per JSON-RPC message
// (client.LimitMessages). The servers here answer tools/list with far more
// than the cap — as one JSON body, as one SSE event, as an endless stream
// of events over the cap, over stdio — and the client must fail that
// request naming the server, hold no more than about the cap meanwhile,
// and keep the session usable.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/internal/testkit/heappeak"
	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// The stdio server of these tests is this test binary, run with
// stdioToolsEnv set to the number of tools and their description's size
// ("16x1048576"): a go-sdk server with those tools and "echo".
const stdioToolsEnv = "AGENTURA_CLIENT_TEST_STDIO_TOOLS"

func TestMain(m *testing.M) {
	if spec := os.Getenv(stdioToolsEnv); spec != "" {
		serveStdioTools(spec)
		return
	}
	os.Exit(m.Run())
}

// toolsServer is a go-sdk server with the tool "echo" and n tools whose
// descriptions are size bytes each.
func toolsServer(n, size int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "large-tools", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	desc := strings.Repeat("d", size)
	for i := range n {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("tool%d", i), Description: desc}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	return s
}

func serveStdioTools(spec string) {
	n, size, _ := strings.Cut(spec, "x")
	count, _ := strconv.Atoi(n)
	bytes, _ := strconv.Atoi(size)
	toolsServer(count, bytes).Run(context.Background(), &mcp.StdioTransport{MaxLineLength: -1})
}

// testCap is the cap of these tests: small, so that the answers over it
// stay light for a busy machine.
const testCap = 4 << 20

// largeAnswer streams an answer to the tools/list call id: n tools of
// size-byte descriptions, as one JSON body (sse false, no Content-Length)
// or as one SSE event, flushed as it goes, until done or the client goes.
func largeAnswer(w http.ResponseWriter, id json.RawMessage, n, size int, sse bool) {
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: ")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`, id)
	desc := bytes.Repeat([]byte("d"), size)
	for i := range n {
		if i > 0 {
			io.WriteString(w, ",")
		}
		fmt.Fprintf(w, `{"name":"t%d","inputSchema":{"type":"object"},"description":"`, i)
		if _, err := w.Write(desc); err != nil {
			return // the client stopped reading
		}
		io.WriteString(w, `"}`)
		w.(http.Flusher).Flush()
	}
	io.WriteString(w, "]}}")
	if sse {
		io.WriteString(w, "\n\n")
	}
}

// notification is an SSE event carrying a log notification of size bytes.
func notification(size int) []byte {
	return []byte(`event: message` + "\n" + `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` +
		strings.Repeat("x", size) + `"}}` + "\n\n")
}

// endlessEvents streams event again and again until the client goes, and
// counts the bytes written into *sent.
func endlessEvents(w http.ResponseWriter, event []byte, sent *int64) {
	w.Header().Set("Content-Type", "text/event-stream")
	for {
		if _, err := w.Write(event); err != nil {
			return
		}
		*sent += int64(len(event))
		w.(http.Flusher).Flush()
	}
}

// interceptedServer serves toolsServer(0, 0) over streamable HTTP, except
// that tools/list is answered by answer; it returns the MCP endpoint.
func interceptedServer(t *testing.T, answer func(w http.ResponseWriter, id json.RawMessage)) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return toolsServer(0, 0) }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &m) == nil && m.Method == "tools/list" {
				answer(w, m.ID)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// connectCapped opens a session over t capped at testCap.
func connectCapped(t *testing.T, ctx context.Context, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "capped", Version: "1"}, nil)
	s, err := c.Connect(ctx, client.LimitMessages(tr, testCap), nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// countTools lists the tools, returning how many and the error.
func countTools(ctx context.Context, s *mcp.ClientSession) (int, error) {
	n := 0
	for _, err := range s.Tools(ctx, nil) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// echoWorks fails the test unless the session still calls tools.
func echoWorks(t *testing.T, ctx context.Context, s *mcp.ClientSession) {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "still here" {
		t.Fatalf("echo after the refused answer: %v, %+v; want the session to work on", err, res)
	}
}

// wantTooLarge fails the test unless err is the cap's error for tools/list
// naming server.
func wantTooLarge(t *testing.T, err error, server string) {
	t.Helper()
	if err == nil {
		t.Fatal("tools/list over the cap succeeded")
	}
	if !errors.Is(err, client.ErrMessageTooLarge) {
		t.Errorf("error %q does not match client.ErrMessageTooLarge", err)
	}
	want := "the answer of " + server + " to tools/list passed 4 MiB, the most one message may hold ("
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--max-message") || !strings.Contains(err.Error(), "broken or hostile") {
		t.Errorf("error %q\nwant it to say %q, name the setting and what to do", err, want)
	}
}

// An answer to tools/list of 64 MiB, streamed as one JSON body or as one
// SSE event, fails the request with an error that names the server, while
// the client holds about the cap (4 MiB) — without the cap the go-sdk read
// it whole, copied and decoded it — and the session works on.
func TestAnswerOverCapFailsNamingServer(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "sse"}[sse], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			endpoint := interceptedServer(t, func(w http.ResponseWriter, id json.RawMessage) {
				largeAnswer(w, id, 256, 256<<10, sse) // 64 MiB
			})
			s := connectCapped(t, ctx, &mcp.StreamableClientTransport{Endpoint: endpoint})
			var err error
			peak := heappeak.Measure(func() { _, err = countTools(ctx, s) })
			t.Logf("heap growth: %.1f MiB", float64(peak)/(1<<20))
			if peak > 24<<20 {
				t.Errorf("the heap grew by %d MiB reading the answer; want about the cap (4 MiB)", peak>>20)
			}
			wantTooLarge(t, err, endpoint)
			echoWorks(t, ctx, s)
		})
	}
}

// A tools/list answered by a stream of SSE events of 8 MiB each, without
// end, stops at the first: the client fails the request naming the server
// and stops reading, holding about the cap.
func TestEndlessEventsOverCapStopAtTheFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var sent int64
	gone := make(chan struct{})
	event := notification(8 << 20) // made before the heap is measured
	endpoint := interceptedServer(t, func(w http.ResponseWriter, _ json.RawMessage) {
		defer close(gone)
		endlessEvents(w, event, &sent)
	})
	s := connectCapped(t, ctx, &mcp.StreamableClientTransport{Endpoint: endpoint})
	var err error
	peak := heappeak.Measure(func() { _, err = countTools(ctx, s) })
	wantTooLarge(t, err, endpoint)
	t.Logf("the error: %v", err)
	select {
	case <-gone:
	case <-ctx.Done():
		t.Fatal("the server is still sending: the client did not let the stream go")
	}
	if peak > 24<<20 {
		t.Errorf("the heap grew by %d MiB; want about the cap (4 MiB)", peak>>20)
	}
	t.Logf("heap growth: %.1f MiB; the server wrote %.1f MiB before the client left", float64(peak)/(1<<20), float64(sent)/(1<<20))
	echoWorks(t, ctx, s)
}

// Answers under the cap pass, whole, however they come: 3 MiB of tools as
// a JSON body and as an SSE event after 100 notifications of 60 KB.
func TestAnswersUnderCapPass(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "sse"}[sse], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			endpoint := interceptedServer(t, func(w http.ResponseWriter, id json.RawMessage) {
				if sse {
					w.Header().Set("Content-Type", "text/event-stream")
					note := notification(60_000)
					for range 100 {
						w.Write(note)
					}
				}
				largeAnswer(w, id, 12, 256<<10, sse) // 3 MiB
			})
			s := connectCapped(t, ctx, &mcp.StreamableClientTransport{Endpoint: endpoint})
			n, err := countTools(ctx, s)
			if err != nil || n != 12 {
				t.Fatalf("listed %d tools, %v; want the 12", n, err)
			}
		})
	}
}

// Over stdio, a tools/list answer over the cap (16 tools of 1 MiB on one
// line) fails naming the command, and the server's next answers are read
// as usual.
func TestStdioAnswerOverCapFailsNamingCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioToolsEnv+"=16x1048576")
	cmd.Stderr = os.Stderr
	procgroup.Prepare(cmd)
	s := connectCapped(t, ctx, &mcp.CommandTransport{Command: cmd})
	if _, err := procgroup.Adopt(t, cmd); err != nil {
		t.Fatal(err)
	}
	var err error
	peak := heappeak.Measure(func() { _, err = countTools(ctx, s) })
	t.Logf("heap growth: %.1f MiB", float64(peak)/(1<<20))
	if peak > 24<<20 {
		t.Errorf("the heap grew by %d MiB; want about the cap (4 MiB)", peak>>20)
	}
	wantTooLarge(t, err, os.Args[0]+" -test.run=^$")
	echoWorks(t, ctx, s)
}
