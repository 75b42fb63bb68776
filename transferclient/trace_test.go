package transferclient

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/otlptest"
)

// A guarded download carries the W3C trace context of its context in the
// traceparent header (and tracestate), so the agent's download span is in
// the caller's trace; never the caller's baggage. Without a span in the
// context it sends no trace header.
func TestGuardedGetCarriesTraceContext(t *testing.T) {
	got := make(chan http.Header, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		io.WriteString(w, "file")
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	g := Guard{Origin: u}

	for _, tc := range []struct {
		name                    string
		ctx                     context.Context
		traceparent, tracestate string
	}{
		{"in a trace", otlptest.InTrace(context.Background()), otlptest.Traceparent, "vendor=x"},
		{"without a span", context.Background(), "", ""},
	} {
		resp, err := g.Get(tc.ctx, nil, srv.URL+"/files/x?token=t", 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp.Body.Close()
		h := <-got
		if h.Get("Traceparent") != tc.traceparent || h.Get("Tracestate") != tc.tracestate || h.Get("Baggage") != "" {
			t.Errorf("%s: traceparent %q, tracestate %q, baggage %q; want %q, %q and no baggage",
				tc.name, h.Get("Traceparent"), h.Get("Tracestate"), h.Get("Baggage"), tc.traceparent, tc.tracestate)
		}
	}
}

// The requests to an agent's file routes that are not downloads carry the
// trace context too: a staging upload and a deletion.
func TestUploadAndDeleteCarryTraceContext(t *testing.T) {
	got := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Method + " " + r.Header.Get("Traceparent")
		if r.Method == http.MethodPost {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"url": "`+"http://"+r.Host+`/files/u1?token=t", "filename": "a.txt", "size_bytes": 1}`)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	ctx, want := otlptest.InTrace(context.Background()), otlptest.Traceparent
	if _, err := SendUpload(ctx, srv.Client(), srv.URL+"/uploads", "a.txt", strings.NewReader("a"), 1); err != nil {
		t.Fatal(err)
	}
	if h := <-got; h != "POST "+want {
		t.Errorf("upload: %q, want the traceparent %s", h, want)
	}
	if err := DeleteFile(ctx, srv.Client(), srv.URL+"/files/u1?token=t"); err != nil {
		t.Fatal(err)
	}
	if h := <-got; h != "DELETE "+want {
		t.Errorf("deletion: %q, want the traceparent %s", h, want)
	}
}
