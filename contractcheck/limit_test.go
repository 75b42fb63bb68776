package contractcheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/contractcheck"
	"github.com/agentura/agentura/internal/testkit/heappeak"
)

// Escape E23: a server answering tools/list with 2000 tools of 256 KiB
// descriptions (500 MiB, streamed) took agentura check to 3.2 GB. The check
// now holds about the cap on one message (32 MiB) and reports the point
// as failed, naming the server and the cap.
func TestToolsOverCapFailThePoint(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	desc := bytes.Repeat([]byte("d"), 256<<10)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &m) != nil || m.Method != "tools/list" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`, m.ID)
		for i := range 2000 {
			if i > 0 {
				io.WriteString(w, ",")
			}
			fmt.Fprintf(w, `{"name":"t%d","inputSchema":{"type":"object"},"description":"`, i)
			if _, err := w.Write(desc); err != nil {
				return
			}
			io.WriteString(w, `"}`)
		}
		io.WriteString(w, "]}}")
	}))
	defer ts.Close()
	var r *contractcheck.Report
	peak := heappeak.Measure(func() {
		r = contractcheck.Run(ctx, contractcheck.Target{URL: ts.URL + "/mcp"}, contractcheck.Options{})
	})
	t.Logf("heap growth: %.1f MiB", float64(peak)/(1<<20))
	if peak > 160<<20 {
		t.Errorf("the heap grew by %d MiB; want about the cap (32 MiB)", peak>>20)
	}
	p, _ := r.Point(contractcheck.PointTools)
	want := "the answer of " + ts.URL + "/mcp to tools/list passed 32 MiB, the most one message may hold"
	if p.Status != contractcheck.Fail || !strings.Contains(p.Detail, want) {
		t.Errorf("the tools point: %s %q; want it failed saying %q", p.Status, p.Detail, want)
	}
}
