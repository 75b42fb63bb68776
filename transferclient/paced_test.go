package transferclient_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentura/agentura/transferclient"
)

// A download cut off on the network, whose file changed before the resume
// (another ETag), fails saying so rather than splice two versions.
func TestDownloadDoesNotSpliceVersions(t *testing.T) {
	payload := strings.Repeat("version one\n", 8192)
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gets.Add(1) == 1 {
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Content-Length", strconv.Itoa(len(payload)))
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, payload[:len(payload)/2])
			w.(http.Flusher).Flush()
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		w.Header().Set("ETag", `"v2"`) // changed: If-Range fails, the whole new file
		io.WriteString(w, strings.ReplaceAll(payload, "one", "two"))
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := transferclient.Guard{Origin: base}.Download(ctx, nil, srv.URL+"/f", 1<<20, transferclient.Pace{}, "f.txt",
		func(_ context.Context, body io.Reader, _ int64) error {
			_, err := io.Copy(io.Discard, body)
			return err
		})
	if err == nil || !strings.Contains(err.Error(), "the file changed in between") {
		t.Fatalf("a resume onto another version: %v; want an error saying the file changed", err)
	}
	if gets.Load() != 2 {
		t.Errorf("%d GETs, want 2", gets.Load())
	}
}
