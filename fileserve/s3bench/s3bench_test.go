// Package s3bench measures downloads of files kept in S3: through the
// agent's /files/ endpoint (streamed from the store with ranged GETs)
// against a presigned GET straight from the S3 server, which is what
// AGENT_S3_REDIRECT hands clients. It starts versitygw, so it is not part
// of `make bench`; run it with `make bench-s3`.
package s3bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/fileserve/s3store"
	"github.com/agentura/agentura/fileserve/storetest"
	"github.com/agentura/agentura/internal/lib/filehttp"
	"github.com/agentura/agentura/internal/testkit/heappeak"
	"github.com/agentura/agentura/internal/testkit/s3test"
	"github.com/agentura/agentura/signing"
)

func BenchmarkS3Download(b *testing.B) {
	srv := s3test.Start(b)
	st, err := fileserve.OpenStore(context.Background(), srv.StorageURL(srv.NewBucket(b)), srv.LookupEnv)
	if err != nil {
		b.Fatal(err)
	}
	s3 := st.(*s3store.Store)
	var handler http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	defer ts.Close()
	key, err := signing.NewKey([]byte("benchmark-signing-key-0123456789abcdef"))
	if err != nil {
		b.Fatal(err)
	}
	signer, err := signing.NewSigner(ts.URL, []signing.Key{key})
	if err != nil {
		b.Fatal(err)
	}
	files, err := filehttp.NewServer(filehttp.Config{Store: st, Signer: signer, PublicURL: ts.URL})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/files/", files.ServeFile)
	handler = mux
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}

	for _, size := range []int{1 << 20, 16 << 20} {
		m, err := st.Put(context.Background(), fileserve.NewFile{Area: fileserve.Outputs, Owner: "bench", Name: "f.bin"}, bytes.NewReader(storetest.Pattern(size)))
		if err != nil {
			b.Fatal(err)
		}
		viaFiles, err := files.URL(m)
		if err != nil {
			b.Fatal(err)
		}
		presigned, err := s3.Presign(context.Background(), m, time.Hour, m.MIMEType, "attachment")
		if err != nil {
			b.Fatal(err)
		}
		for _, tc := range []struct{ name, url string }{{"files", viaFiles}, {"presigned", presigned}} {
			b.Run(fmt.Sprintf("%s/%dMiB", tc.name, size>>20), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					resp, err := client.Get(tc.url)
					if err != nil {
						b.Fatal(err)
					}
					n, err := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err != nil || n != int64(size) || resp.StatusCode != http.StatusOK {
						b.Fatalf("%s: %d bytes, %v", resp.Status, n, err)
					}
				}
			})
		}
	}
}

// zeros reads as an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// BenchmarkS3Upload stores 64 MiB of unknown length into S3 and reports how
// far the heap grew: a multipart upload holds one part at a time, never the
// file. It fails if the heap grew by half the file.
func BenchmarkS3Upload(b *testing.B) {
	srv := s3test.Start(b)
	st, err := fileserve.OpenStore(context.Background(), srv.StorageURL(srv.NewBucket(b)), srv.LookupEnv)
	if err != nil {
		b.Fatal(err)
	}
	const size = 64 << 20
	b.SetBytes(size)
	var worst uint64
	for b.Loop() {
		worst = max(worst, heappeak.Measure(func() {
			m, err := st.Put(context.Background(), fileserve.NewFile{Area: fileserve.Staging, Owner: "bench", Name: "big.bin"}, io.LimitReader(zeros{}, size))
			if err != nil || m.Size != size {
				b.Fatalf("Put: %+v, %v", m, err)
			}
		}))
	}
	if worst > size/2 {
		b.Fatalf("the heap grew by %d MiB storing a %d MiB file: the upload buffers the file", worst>>20, size>>20)
	}
	b.ReportMetric(float64(worst)/(1<<20), "peak-heap-MiB")
}
