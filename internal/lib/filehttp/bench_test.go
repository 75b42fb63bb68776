package filehttp

import (
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/testkit/heappeak"
	"github.com/gin-gonic/gin"
)

// BenchmarkDownload compares a signed download, mounted behind gin as the
// agents mount it, with http.FileServer serving the very same file, over a
// real loopback connection. It reports each server's throughput (MB/s) and
// the ratio signed/fileserver; "same-bytes" is http.FileServer answering the
// signed URL's query with the same security headers, against which only the
// signed handler's own work differs.
func BenchmarkDownload(b *testing.B) {
	st, err := fileserve.NewDiskStore(filepath.Join(b.TempDir(), "store"))
	if err != nil {
		b.Fatal(err)
	}
	engine := gin.New()
	ts := httptest.NewServer(engine)
	defer ts.Close()
	signer := newTestSigner(b, ts.URL, testSecret)
	srv, err := NewServer(Config{Store: st, Signer: signer, PublicURL: ts.URL})
	if err != nil {
		b.Fatal(err)
	}
	engine.GET("/files/*path", gin.WrapF(srv.ServeFile))

	sizes := []struct {
		name string
		size int
	}{{"4KiB", 4 << 10}, {"256MiB", 256 << 20}}
	// equal is http.FileServer answering the same bytes as the signed
	// handler: the same query in the request, the same headers in the
	// answer. Against it, the handler's own cost shows alone.
	type target struct{ signed, plain, equal string }
	targets := map[string]target{}
	for _, sz := range sizes {
		m, err := st.Put(context.Background(), fileserve.NewFile{Area: fileserve.Outputs, Owner: "bench", Name: sz.name + ".bin"}, io.LimitReader(zeros{}, int64(sz.size)))
		if err != nil {
			b.Fatal(err)
		}
		u, err := srv.URL(m)
		if err != nil {
			b.Fatal(err)
		}
		dir := filepath.Join(st.Root(), string(fileserve.Outputs), fileserve.OwnerKey("bench"), m.ID)
		fs := httptest.NewServer(http.FileServer(http.Dir(dir)))
		defer fs.Close()
		eq := httptest.NewServer(sameHeaders(m, http.FileServer(http.Dir(dir))))
		defer eq.Close()
		query := u[strings.IndexByte(u, '?'):]
		targets[sz.name] = target{signed: u, plain: fs.URL + "/data", equal: eq.URL + "/data" + query}
	}

	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}
	get := func(b *testing.B, url string, size int) {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || n != int64(size) {
			b.Fatalf("GET %s: %d, %d bytes, %v", url, resp.StatusCode, n, err)
		}
	}
	// Settle before measuring: warm both servers' connections and caches,
	// and collect the garbage of writing the test files.
	for _, sz := range sizes {
		get(b, targets[sz.name].signed, sz.size)
		get(b, targets[sz.name].plain, sz.size)
		get(b, targets[sz.name].equal, sz.size)
	}
	runtime.GC()
	// Each iteration fetches the file from all three servers in turn and
	// times each fetch: paired samples, so a noisy neighbour on the machine,
	// CPU frequency or cache state weigh on every side of a ratio alike.
	kinds := []string{"signed", "fileserver", "same-bytes"}
	for _, sz := range sizes {
		urls := []string{targets[sz.name].signed, targets[sz.name].plain, targets[sz.name].equal}
		b.Run(sz.name, func(b *testing.B) {
			// Large files take several rounds per iteration, so that even a
			// short run has enough samples; the order rotates every round.
			rounds := max(1, sz.size/(64<<20))
			var spent [3]time.Duration
			n := 0
			for b.Loop() {
				for range rounds {
					for k := range urls {
						i := (n + k) % len(urls)
						start := time.Now()
						get(b, urls[i], sz.size)
						spent[i] += time.Since(start)
					}
					n++
				}
			}
			mbps := func(d time.Duration) float64 { return float64(sz.size) * float64(n) / d.Seconds() / 1e6 }
			for i, kind := range kinds {
				b.ReportMetric(mbps(spent[i]), kind+"-MB/s")
			}
			b.ReportMetric(mbps(spent[0])/mbps(spent[1]), "signed/fileserver")
		})
	}
}

// sameHeaders sets the headers ServeFile sets for m before h serves.
func sameHeaders(m fileserve.Meta, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd["Content-Type"] = []string{m.MIMEType}
		hd["Etag"] = []string{m.ETag()}
		hd["Content-Disposition"] = []string{contentDisposition(baseName(m.Name))}
		hd["Cache-Control"] = []string{"private, max-age=3599"}
		hd["X-Content-Type-Options"] = headerNosniff
		hd["Content-Security-Policy"] = headerCSP
		hd["Referrer-Policy"] = headerNoReferrer
		h.ServeHTTP(w, r)
	})
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// BenchmarkUpload streams a 50 MiB body into staging through POST /uploads,
// raw and as multipart, over a loopback connection: throughput, and how far
// the heap grows (the upload must never be held whole in memory).
func BenchmarkUpload(b *testing.B) {
	const size = 50 << 20
	env := newTestEnv(b, "gin", func(c *Config) { c.MaxUploadBytes = size })
	client := &http.Client{}
	forms := []struct {
		name string
		req  func() *http.Request
	}{
		{"raw", func() *http.Request {
			req, _ := http.NewRequest(http.MethodPost, env.ts.URL+"/uploads", io.LimitReader(zeros{}, size))
			req.Header.Set("X-Filename", "big.bin")
			req.ContentLength = size
			return req
		}},
		{"multipart", func() *http.Request {
			pr, pw := io.Pipe()
			mw := multipart.NewWriter(pw)
			go func() {
				part, _ := mw.CreateFormFile("file", "big.bin")
				io.Copy(part, io.LimitReader(zeros{}, size))
				mw.Close()
				pw.Close()
			}()
			req, _ := http.NewRequest(http.MethodPost, env.ts.URL+"/uploads", pr)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			return req
		}},
	}
	for _, form := range forms {
		b.Run(form.name+"/50MiB", func(b *testing.B) {
			b.SetBytes(size)
			var worst uint64
			for b.Loop() {
				worst = max(worst, heappeak.Measure(func() {
					resp, err := client.Do(form.req())
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusCreated {
						b.Fatalf("upload: %s", resp.Status)
					}
				}))
			}
			b.ReportMetric(float64(worst)/(1<<20), "peak-heap-MiB")
		})
	}
}
