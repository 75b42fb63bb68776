package agentcore

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Downloads are served ahead of the router and keep what its middleware
// gives: a request id (the caller's, or a new one per request).
func TestDownloadsAheadOfTheRouter(t *testing.T) {
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
		t.Errorf("POST /files/ = %d, id %q; want 405 from the router, with an id", rec.Code, rec.Header().Get("X-Request-Id"))
	}
}
