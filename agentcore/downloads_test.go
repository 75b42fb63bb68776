package agentcore

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// Downloads take the router's one route for /files/ and get what its
// middleware gives: a request id (the caller's, or a new one per request).
func TestDownloadsThroughTheRouter(t *testing.T) {
	svc := newTestService(t, nil)
	h := svc.Handler()
	ids := map[string]bool{}
	for range 3 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/files/0123456789abcdef0123456789abcdef/x.txt", nil))
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "token") {
			t.Errorf("GET /files/ without a token = %d %s", rec.Code, rec.Body)
		}
		ids[rec.Header().Get("X-Request-Id")] = true
	}
	if len(ids) != 3 || ids[""] {
		t.Errorf("request ids %v, want 3 different", ids)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodHead, "/files/x", nil)
	req.Header.Set("X-Request-Id", "mine")
	h.ServeHTTP(rec, req)
	if rec.Header().Get("X-Request-Id") != "mine" {
		t.Errorf("X-Request-Id = %q, want the caller's", rec.Header().Get("X-Request-Id"))
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/files/x", nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("X-Request-Id") == "" {
		t.Errorf("POST /files/ = %d, id %q; want 405, with an id", rec.Code, rec.Header().Get("X-Request-Id"))
	}
}

// Downloads on the agent's own server are corked and uncorked: on one
// keep-alive connection, small and large files, whole, ranged and not
// modified, come back intact and without the 200 ms a connection left
// corked would add to each answer (the median answer is timed, so that a
// busy machine does not fail the test).
func TestCorkedDownloads(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	svc := newTestService(t, func(c *Config) { c.PublicURL = base })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })

	small, large := bytes.Repeat([]byte("s"), 4096), bytes.Repeat([]byte("L"), 1<<20)
	var urls []string
	for _, b := range [][]byte{small, large} {
		code, up, raw := upload(t, base, "", "f.bin", b)
		if code != http.StatusCreated {
			t.Fatalf("upload: %d %s", code, raw)
		}
		urls = append(urls, up.URL)
	}
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	get := func(u string, hdr http.Header) (*http.Response, []byte, time.Duration) {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header = hdr
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b, time.Since(start)
	}
	var took []time.Duration
	for range 5 {
		for i, want := range [][]byte{small, large} {
			resp, b, d := get(urls[i], nil)
			if resp.StatusCode != 200 || !bytes.Equal(b, want) {
				t.Fatalf("GET: %d, %d bytes of %d", resp.StatusCode, len(b), len(want))
			}
			took = append(took, d)
			etag := resp.Header.Get("Etag")
			if resp, b, d := get(urls[i], http.Header{"Range": {"bytes=10-19"}}); resp.StatusCode != 206 || len(b) != 10 {
				t.Errorf("Range: %d, %d bytes", resp.StatusCode, len(b))
			} else {
				took = append(took, d)
			}
			if resp, _, d := get(urls[i], http.Header{"If-None-Match": {etag}}); resp.StatusCode != 304 {
				t.Errorf("If-None-Match: %d", resp.StatusCode)
			} else {
				took = append(took, d)
			}
		}
		if resp, _, d := get(base+"/files/0123456789abcdef0123456789abcdef/x", nil); resp.StatusCode != 403 {
			t.Errorf("no token: %d", resp.StatusCode)
		} else {
			took = append(took, d)
		}
	}
	slices.Sort(took)
	if median := took[len(took)/2]; median >= 150*time.Millisecond {
		t.Errorf("the median answer took %v: a connection left corked?", median)
	}
}
