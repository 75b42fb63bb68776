package client_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/internal/testkit/heappeak"
	"github.com/agentura/agentura/internal/testkit/testagent"
)

// BenchmarkRoundTrip30MiB measures a 30 MiB file going to an agent and
// coming back: the middleware sends it (through /uploads, or inline as a data
// URI), the agent's echo_file stores it as an output, the middleware fetches
// and registers it. MB/s counts the file once per round trip. peak-heap-MiB
// is the most the heap grew during one round trip — of this process, which
// runs the agent too, so it bounds client and agent together.
func BenchmarkRoundTrip30MiB(b *testing.B) {
	const size = 30 << 20
	for _, bc := range []struct {
		name   string
		inline int64
	}{{"uploads", client.DefaultInlineMaxBytes}, {"inline", 64 << 20}} {
		b.Run(bc.name, func(b *testing.B) {
			a := testagent.Start(b, testagent.Options{})
			reg, err := client.NewRegistry("", nil)
			if err != nil {
				b.Fatal(err)
			}
			defer reg.Close()
			mw, err := client.New(client.Config{Registry: reg, BaseURL: a.Base, InlineMaxBytes: bc.inline})
			if err != nil {
				b.Fatal(err)
			}
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
			mw.Attach(c)
			ctx := context.Background()
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: a.Endpoint, DisableStandaloneSSE: true}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			if _, err := reg.Add(ctx, "in.bin", io.LimitReader(rand.Reader, size), client.SourceUpload); err != nil {
				b.Fatal(err)
			}
			args := json.RawMessage(`{"source": "in.bin"}`)
			var worst uint64
			b.SetBytes(size)
			b.ResetTimer()
			for b.Loop() {
				var res *mcp.CallToolResult
				var err error
				worst = max(worst, heappeak.Measure(func() {
					res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo_file", Arguments: args})
				}))
				if err != nil || res.IsError {
					b.Fatalf("echo_file: %v %v", err, res)
				}
				names := client.ProducedNames(res)
				if len(names) != 1 {
					b.Fatalf("produced %v (failed %v)", names, client.FailedFiles(res))
				}
				e, _ := reg.Lookup(names[0])
				if e.Size != size {
					b.Fatalf("came back with %d bytes", e.Size)
				}
				reg.Remove(names[0])
			}
			b.ReportMetric(float64(worst)/(1<<20), "peak-heap-MiB")
		})
	}
}
