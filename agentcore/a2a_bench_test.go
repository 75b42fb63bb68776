package agentcore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/internal/testkit/a2atest"
	"github.com/agentura/agentura/internal/testkit/heappeak"
)

// BenchmarkA2ACall measures a whole A2A call over loopback with the a2a-go
// client: message/send with a 4 MiB file as inline bytes, and as a uri (a
// signed URL from /uploads, read from the store), to a tool that resolves
// it. Throughput is of the file's bytes; peak-heap-MiB is how far the
// server's and client's heap grew during the call (the base64 string the
// client sends is live before and not counted). Inline bytes cross JSON-RPC,
// so they are held a few times over; a uri is read as a stream.
func BenchmarkA2ACall(b *testing.B) {
	const size = 4 << 20
	svc, srv := serveTestService(b, nil)
	AddTool(svc, Tool{Name: "sink"}, func(ctx context.Context, call *Call, in echoInput) (*Result, error) {
		f, err := call.ResolveFileAttachment(ctx, in.Source)
		if err != nil {
			return nil, err
		}
		return TextResult(f.Name), nil
	})
	data := make([]byte, size)
	rand.Read(data)
	c := a2aClient(b, srv.URL, "")
	_, up, _ := upload(b, srv.URL, "", "big.bin", data)
	parts := map[string]a2a.Part{
		"bytes": a2a.FilePart{File: a2a.FileBytes{FileMeta: a2a.FileMeta{Name: "big.bin"}, Bytes: base64.StdEncoding.EncodeToString(data)}},
		"uri":   a2a.FilePart{File: a2a.FileURI{FileMeta: a2a.FileMeta{Name: "big.bin"}, URI: up.URL}},
	}
	for _, form := range []string{"bytes", "uri"} {
		b.Run(form+"/4MiB", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var worst uint64
			for b.Loop() {
				peak := heappeak.Measure(func() {
					res, err := c.SendMessage(context.Background(), a2atest.Message("sink", nil, parts[form]))
					if err != nil {
						b.Fatal(err)
					}
					if task := res.(*a2a.Task); task.Status.State != a2a.TaskStateCompleted {
						b.Fatalf("task %s: %s", task.Status.State, a2atest.Text(task.Status.Message))
					}
				})
				worst = max(worst, peak)
			}
			b.ReportMetric(float64(worst)/(1<<20), "peak-heap-MiB")
		})
	}
}
