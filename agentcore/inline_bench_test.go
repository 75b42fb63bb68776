package agentcore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/agentura/agentura/agentcore/internal/transport"
)

// BenchmarkInlinePass50MiB is the pre-pass alone: a tools/call carrying
// 50 MiB inline, decoded into a staged file on disk.
func BenchmarkInlinePass50MiB(b *testing.B) {
	svc, _ := serveTestService(b, func(c *Config) { c.MaxUploadBytes = 64 << 20 })
	addEchoTool(svc)
	data := make([]byte, 50<<20)
	rand.Read(data)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"source":"data:application/octet-stream;base64,` +
		base64.StdEncoding.EncodeToString(data) + `"}}}`)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		_, staged, err := svc.inline.Run(context.Background(), "bench", transport.MCP, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		svc.inline.Discard(context.Background(), staged)
	}
}
