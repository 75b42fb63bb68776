package fileserve

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// BenchmarkDownload compares a signed download, mounted behind gin as the
// agents mount it, with http.FileServer serving the very same file, over a
// real loopback connection.
func BenchmarkDownload(b *testing.B) {
	st, err := NewDiskStore(filepath.Join(b.TempDir(), "store"))
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
		m, err := st.Put(context.Background(), NewFile{Area: Outputs, Owner: "bench", Name: sz.name + ".bin"}, io.LimitReader(zeros{}, int64(sz.size)))
		if err != nil {
			b.Fatal(err)
		}
		u, err := srv.URL(m)
		if err != nil {
			b.Fatal(err)
		}
		dir := filepath.Join(st.Root(), string(Outputs), ownerKey("bench"), m.ID)
		fs := httptest.NewServer(http.FileServer(http.Dir(dir)))
		defer fs.Close()
		eq := httptest.NewServer(sameHeaders(m, http.FileServer(http.Dir(dir))))
		defer eq.Close()
		query := u[strings.IndexByte(u, '?'):]
		targets[sz.name] = target{signed: u, plain: fs.URL + "/" + dataFile, equal: eq.URL + "/" + dataFile + query}
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
	// Each size runs both servers back to back, so a noisy neighbour on the
	// machine weighs on both sides of a ratio alike.
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			for _, kind := range []string{"signed", "http.FileServer", "http.FileServer+same-bytes"} {
				url := map[string]string{
					"signed":                     targets[sz.name].signed,
					"http.FileServer":            targets[sz.name].plain,
					"http.FileServer+same-bytes": targets[sz.name].equal,
				}[kind]
				b.Run(kind, func(b *testing.B) {
					get(b, url, sz.size) // warm the connection and the page cache
					b.SetBytes(int64(sz.size))
					b.ResetTimer()
					for b.Loop() {
						get(b, url, sz.size)
					}
				})
			}
		})
	}
}

// sameHeaders sets the headers ServeFile sets for m before h serves.
func sameHeaders(m Meta, h http.Handler) http.Handler {
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
