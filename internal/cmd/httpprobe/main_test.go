package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestProbe(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	if err := probe(t.Context(), ok.URL); err != nil {
		t.Errorf("a 200 answer: %v", err)
	}
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bucket missing", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	if err := probe(t.Context(), down.URL); err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "bucket missing") {
		t.Errorf("a 503 answer: got %v, want an error naming the status and the body", err)
	}
	down.Close()
	if err := probe(t.Context(), down.URL); err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("a closed server: got %v, want \"no answer\"", err)
	}
}
