package ops

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentura/agentura/fileserve"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestInstrumentStore: files and bytes added by Put and Adopt are counted
// per area; a failed Put is not; a second wrapper on the same registry
// shares the counters.
func TestInstrumentStore(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := Instrument(disk, reg)
	if err != nil {
		t.Fatal(err)
	}
	st.Put(ctx, fileserve.NewFile{Area: fileserve.Outputs, Owner: "o", Name: "a"}, bytes.NewReader(make([]byte, 100)))
	st.Put(ctx, fileserve.NewFile{Area: fileserve.Outputs, Owner: "o", Name: "b"}, bytes.NewReader(make([]byte, 50)))
	st.Put(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: "o", Name: "c", MaxBytes: 10}, bytes.NewReader(make([]byte, 50))) // fails: not counted
	src := filepath.Join(t.TempDir(), "d")
	if err := os.WriteFile(src, make([]byte, 7), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Adopt(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: "o"}, src); err != nil {
		t.Fatal(err)
	}
	if _, err := Instrument(disk, reg); err != nil {
		t.Fatalf("second wrapper on one registry: %v", err)
	}
	w := st.(*instrumented)
	for _, c := range []struct {
		got, want float64
		what      string
	}{
		{value(t, w.files.WithLabelValues("outputs")), 2, "outputs files"},
		{value(t, w.bytes.WithLabelValues("outputs")), 150, "outputs bytes"},
		{value(t, w.files.WithLabelValues("staging")), 1, "staging files"},
		{value(t, w.bytes.WithLabelValues("staging")), 7, "staging bytes"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

// value reads a counter.
func value(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
