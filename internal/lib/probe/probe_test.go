package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReady(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	if err := Ready(context.Background(), ok.URL); err != nil {
		t.Errorf("a 200 answer: %v", err)
	}
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "storage not writable", http.StatusServiceUnavailable)
	}))
	defer sick.Close()
	if err := Ready(context.Background(), sick.URL+"?token=t"); err == nil || !strings.Contains(err.Error(), "503") ||
		!strings.Contains(err.Error(), "storage not writable") || strings.Contains(err.Error(), "token=t") {
		t.Errorf("a 503 answer: %v", err)
	}
	down := httptest.NewServer(nil)
	down.Close()
	if err := Ready(context.Background(), down.URL); err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("a closed server: %v", err)
	}
}
