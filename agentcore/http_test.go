package agentcore

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHandlerBuiltOnce: Handler may be called more than once (Run calls it,
// so may a program mounting the agent) and returns the one handler; a second
// build would register the A2A metrics twice.
func TestHandlerBuiltOnce(t *testing.T) {
	svc := newTestService(t, nil)
	first, second := svc.Handler(), svc.Handler()
	if first != second {
		t.Fatal("Handler returned two different handlers")
	}
	rec := httptest.NewRecorder()
	second.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /healthz = %d; want 200", rec.Code)
	}
}
