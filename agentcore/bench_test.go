package agentcore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"os"
	"testing"

	"github.com/agentura/agentura/internal/testkit/heappeak"
)

// BenchmarkResolveBase64 measures resolving a 50 MiB input sent inline as
// base64, as a data URI and as plain base64: throughput of the decoded bytes
// and how much the heap grows while it streams to disk. The content string
// itself (67 MiB of base64) is live before the call and not counted; the
// decoded 50 MiB must never be held whole.
func BenchmarkResolveBase64(b *testing.B) {
	const size = 50 << 20
	raw := make([]byte, size)
	rand.Read(raw)
	plain := base64.StdEncoding.EncodeToString(raw)
	raw = nil
	forms := []struct{ name, content string }{
		{"data-uri", "data:application/octet-stream;name=big.bin;base64," + plain},
		{"base64", plain},
	}
	svc := newTestService(b, func(c *Config) { c.MaxUploadBytes = size })
	ctx := context.Background()
	for _, form := range forms {
		b.Run(form.name+"/50MiB", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var worst uint64
			for b.Loop() {
				call := svc.newCall("bench", "owner", "")
				peak := heappeak.Measure(func() {
					f, err := call.ResolveFile(ctx, "big.bin", form.content)
					if err != nil {
						b.Fatal(err)
					}
					if st, err := os.Stat(f.Path); err != nil || st.Size() != size {
						b.Fatalf("resolved %v %v", st, err)
					}
				})
				worst = max(worst, peak)
				call.end()
			}
			b.ReportMetric(float64(worst)/(1<<20), "peak-heap-MiB")
		})
	}
}
