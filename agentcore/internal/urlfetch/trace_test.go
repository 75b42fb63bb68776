package urlfetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/otlptest"
)

// TestGetCarriesTraceContext: a fetch sends the trace context of its
// context in traceparent (so a peer agent's file route continues the
// call's trace), never the caller's baggage; without a span it sends none.
func TestGetCarriesTraceContext(t *testing.T) {
	got := make(chan http.Header, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	f := New([]string{u.Hostname()}, 10*time.Second)

	ctx := otlptest.InTrace(context.Background())

	resp, err := f.Get(ctx, srv.URL+"/files/x?token=t")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := <-got
	if tp := h.Get("traceparent"); tp != otlptest.Traceparent {
		t.Errorf("traceparent = %q, want the context's span", tp)
	}
	if bg := h.Get("baggage"); bg != "" {
		t.Errorf("the fetch sent the caller's baggage %q", bg)
	}

	resp, err = f.Get(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if tp := (<-got).Get("traceparent"); tp != "" {
		t.Errorf("a fetch without a span sent traceparent %q", tp)
	}
}
