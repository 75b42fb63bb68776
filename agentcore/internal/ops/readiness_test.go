package ops

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/signing"
)

// degradedErr is a check's error that says its part still works.
type degradedErr string

func (d degradedErr) Error() string { return string(d) }
func (degradedErr) Degraded() bool  { return true }

// A check whose error is Degraded leaves /readyz 200 "ready" and is named
// under "degraded" with its text; a plain error makes it 503 "not ready";
// once the check passes, "degraded" is gone.
func TestReadyzDegradedStaysReady(t *testing.T) {
	store, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := signing.GenerateSecret()
	key, _ := signing.NewKey(secret)
	signer, err := signing.NewSigner("https://agent.test", []signing.Key{key})
	if err != nil {
		t.Fatal(err)
	}
	r := NewReadiness(store, signer, func() (bool, time.Time) { return false, time.Time{} }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var state atomic.Pointer[error]
	set := func(err error) { state.Store(&err) }
	set(degradedErr("degraded: the identity provider cannot be reached"))
	r.Add("identity_provider", func(context.Context) error { return *state.Load() })
	type answer struct {
		code     int
		Status   string            `json:"status"`
		Checks   map[string]string `json:"checks"`
		Degraded []string          `json:"degraded"`
	}
	get := func() answer {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		a := answer{code: rec.Code}
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
			t.Fatalf("%s: %v", rec.Body, err)
		}
		return a
	}
	// until polls /readyz until ok holds, as the probe answers from its
	// last result while a new one runs.
	until := func(what string, ok func(answer) bool) answer {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			a := get()
			if ok(a) {
				return a
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: still %+v", what, a)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	a := until("degraded", func(a answer) bool { return a.Checks["identity_provider"] != "" && a.Checks["probe"] == "" })
	if a.code != http.StatusOK || a.Status != "ready" || !slices.Equal(a.Degraded, []string{"identity_provider"}) ||
		a.Checks["identity_provider"] != "degraded: the identity provider cannot be reached" {
		t.Errorf("a degraded check: %+v, want 200 ready naming it under degraded", a)
	}

	set(errors.New("the identity provider has not answered yet"))
	a = until("not ready", func(a answer) bool { return a.code == http.StatusServiceUnavailable })
	if a.Status != "not ready" || len(a.Degraded) != 0 || a.Checks["identity_provider"] != "the identity provider has not answered yet" {
		t.Errorf("a failing check: %+v", a)
	}

	set(nil)
	a = until("ready", func(a answer) bool { return a.code == http.StatusOK })
	if a.Status != "ready" || len(a.Degraded) != 0 || a.Checks["identity_provider"] != "ok" {
		t.Errorf("a passing check: %+v", a)
	}
}
