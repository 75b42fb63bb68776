package quickget

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
)

// BenchmarkSmallResponse is one 4 KiB answer per request on a keep-alive
// connection over loopback: the quick path beside net/http, with the same
// handler. It measures the server's per-request work (and the client's,
// the same in both).
//
//	go test -run '^$' -bench SmallResponse -benchmem ./internal/quickget
func BenchmarkSmallResponse(b *testing.B) {
	body := make([]byte, 4096)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = []string{"application/octet-stream"}
		w.Header()["Content-Length"] = []string{"4096"}
		w.Write(body)
	})
	for _, quick := range []bool{true, false} {
		name := "net-http"
		if quick {
			name = "quick"
		}
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			srv := &http.Server{Handler: h}
			if quick {
				q := New("/files/", srv)
				go q.Serve(ln)
				defer q.Close()
			} else {
				go srv.Serve(ln)
				defer srv.Close()
			}
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			req := []byte("GET /files/0190d9a2-7a3c-7d5e-8f00-000000000000/a.bin?token=t HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: bench\r\n\r\n")
			br := bufio.NewReaderSize(c, 16<<10)
			b.SetBytes(4096)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(req); err != nil {
					b.Fatal(err)
				}
				n := -1
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						b.Fatal(err)
					}
					if len(line) <= 2 {
						break
					}
					if v, ok := cutHeader(line, "Content-Length: "); ok {
						n, _ = strconv.Atoi(v)
					}
				}
				if _, err := io.CopyN(io.Discard, br, int64(n)); err != nil || n != 4096 {
					b.Fatalf("body %d bytes: %v", n, err)
				}
			}
		})
	}
}

func cutHeader(line []byte, prefix string) (string, bool) {
	if len(line) < len(prefix)+2 || string(line[:len(prefix)]) != prefix {
		return "", false
	}
	return string(line[len(prefix) : len(line)-2]), true
}
