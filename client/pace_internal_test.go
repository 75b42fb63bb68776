package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A download whose bytes keep coming, each well within StallTimeout, but
// at a trickle, fails with ErrStalled soon after paceSlack, naming the
// file and its pace; one that keeps the minimum rate arrives.
func TestDownloadTrickleFails(t *testing.T) {
	defer func(s time.Duration) { paceSlack = s }(paceSlack)
	paceSlack = 300 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		every, _ := time.ParseDuration(r.URL.Query().Get("every"))
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Length", strconv.Itoa(n))
		for range n {
			if _, err := w.Write([]byte("t")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(every):
			}
		}
	}))
	defer srv.Close()
	reg, err := NewRegistry(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	m, err := New(Config{Registry: reg, BaseURL: srv.URL, MinDownloadRate: 100})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	start := time.Now()
	_, err = m.download(ctx, srv.URL+"/files/slow?every=50ms&n=200", "slow.txt", "", SourceUpload) // 20 B/s for 10 s
	took := time.Since(start)
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "slow.txt came at") || !strings.Contains(err.Error(), "under the 100 bytes a second") {
		t.Fatalf("a trickle at 20 B/s: %v; want ErrStalled naming the file and its pace", err)
	}
	if took > 3*time.Second {
		t.Errorf("the trickle failed after %v; want soon after the slack of %v", took, paceSlack)
	}
	t.Logf("%v after %v", err, took.Round(time.Millisecond))

	e, err := m.download(ctx, srv.URL+"/files/steady?every=2ms&n=300", "steady.txt", "", SourceUpload) // about 300 B/s
	if err != nil || e.Size != 300 {
		t.Fatalf("a download over the minimum rate: %+v, %v", e, err)
	}
}
