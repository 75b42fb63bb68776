package a2acall

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentura/agentura/transferclient"
)

// A produced file whose bytes trickle after the first (each well within
// the stall timeout) is cut off soon after the slack with an error that
// says so; one whose bytes stop coming is cut off after StallTimeout.
func TestDownloadTrickleAndStallAreCutOff(t *testing.T) {
	defer func(s time.Duration) { paceSlack = s }(paceSlack)
	paceSlack = 300 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "200")
		for i := range 200 {
			if _, err := w.Write([]byte("t")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			wait := 50 * time.Millisecond // 20 bytes a second
			if r.URL.Path == "/stops" && i == 2 {
				wait = time.Minute
			}
			select {
			case <-r.Context().Done():
				return
			case <-time.After(wait):
			}
		}
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	c := &Client{MinDownloadRate: 100}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	start := time.Now()
	_, err := c.download(ctx, nil, base, t.TempDir(), "slow.txt", "text/plain", srv.URL+"/trickles", "")
	took := time.Since(start)
	if !errors.Is(err, transferclient.ErrStalled) || !strings.Contains(err.Error(), "slow.txt came at") || !strings.Contains(err.Error(), "under the 100 bytes a second") {
		t.Fatalf("a trickle at 20 B/s: %v; want ErrStalled naming the file and its pace", err)
	}
	if took > 5*time.Second {
		t.Errorf("the trickle was cut off after %v; want soon after the slack of %v", took, paceSlack)
	}

	c = &Client{StallTimeout: 500 * time.Millisecond, MinDownloadRate: -1}
	_, err = c.download(ctx, nil, base, t.TempDir(), "stuck.txt", "text/plain", srv.URL+"/stops", "")
	if !errors.Is(err, transferclient.ErrStalled) || !strings.Contains(err.Error(), "no byte of stuck.txt arrived for 500ms") {
		t.Fatalf("a download that stops: %v; want ErrStalled naming the file and the timeout", err)
	}
}

// A download cut off on the network resumes where it broke, by Range, and
// the file arrives byte-exact, its sha256 checked.
func TestDownloadResumesByRange(t *testing.T) {
	content := make([]byte, 300<<10)
	for i := range content {
		content[i] = byte(i * 7 / 3)
	}
	sum := sha256.Sum256(content)
	var cut, ranged atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") == "" && cut.Add(1) == 1 {
			// Announce it whole, send a third, and drop the connection.
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Content-Length", strconv.Itoa(len(content)))
			w.WriteHeader(http.StatusOK)
			w.Write(content[:len(content)/3])
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		if r.Header.Get("Range") != "" {
			ranged.Add(1)
		}
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "big.bin", time.Time{}, bytes.NewReader(content))
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lf, err := (&Client{}).download(ctx, nil, base, t.TempDir(), "big.bin", "application/octet-stream", srv.URL+"/big.bin", hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatalf("a download cut off after a third: %v; want it resumed", err)
	}
	got, err := os.ReadFile(lf.Path)
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("received %d bytes (%v), not the %d sent", len(got), err, len(content))
	}
	if ranged.Load() != 1 || cut.Load() != 1 {
		t.Errorf("%d whole requests and %d by Range; want one of each", cut.Load(), ranged.Load())
	}
}
