package otelsetup

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// wantedCase is an environment and what it asks for.
type wantedCase struct {
	name string
	env  map[string]string
	on   bool
	err  string
}

// checkWanted runs wanted in each case's environment, every other variable
// of vars unset.
func checkWanted(t *testing.T, wanted func() (bool, error), vars []string, cases []wantedCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range vars {
				t.Setenv(k, c.env[k])
			}
			on, err := wanted()
			if on != c.on || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Errorf("got %v, %v; want %v, an error with %q", on, err, c.on, c.err)
			}
		})
	}
}

// otelVars are the variables the cases set.
var otelVars = []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
	"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
	"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"}

// Tracing starts only when a variable asks for it, and a build that
// cannot do what is asked says so instead of exporting nothing.
func TestWanted(t *testing.T) {
	checkWanted(t, traces.wanted, otelVars, []wantedCase{
		{"nothing set", nil, false, ""},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true, ""},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true, ""},
		{"metrics endpoint alone", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://collector:4318/v1/metrics"}, false, ""},
		{"exporter otlp alone", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, ""},
		{"exporter none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, false, ""},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, false, ""},
		{"console exporter", map[string]string{"OTEL_TRACES_EXPORTER": "console"}, false, "OTLP only"},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, "http/protobuf only"},
		{"traces protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, ""},
	})
}

// Metrics follow the same rule over their own variables: the general
// endpoint turns both on, each signal's exporter variable turns it alone
// off or on.
func TestMetricsWanted(t *testing.T) {
	checkWanted(t, metrics.wanted, otelVars, []wantedCase{
		{"nothing set", nil, false, ""},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true, ""},
		{"metrics endpoint", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://collector:4318/v1/metrics"}, true, ""},
		{"traces endpoint alone", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, false, ""},
		{"exporter otlp alone", map[string]string{"OTEL_METRICS_EXPORTER": "otlp"}, true, ""},
		{"exporter none", map[string]string{"OTEL_METRICS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, false, ""},
		{"traces off, metrics on", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true, ""},
		{"prometheus exporter", map[string]string{"OTEL_METRICS_EXPORTER": "prometheus"}, false, "OTLP only"},
		{"metrics protocol grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "grpc"}, false, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"},
	})
}

// Off, Start leaves the no-op provider in place and starts no goroutine
// (no exporter, no batch processor); Shutdown does nothing.
func TestStartOffStartsNothing(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "")
	t.Setenv("OTEL_METRICS_EXPORTER", "")
	before := runtime.NumGoroutine()
	tr, err := Start(context.Background(), "x")
	if err != nil || tr.Enabled() || tr.MetricsEnabled() {
		t.Fatalf("Start = %v, %v; want off", tr, err)
	}
	if _, sdk := otel.GetTracerProvider().(*sdktrace.TracerProvider); sdk {
		t.Error("the global provider is the SDK's with tracing off")
	}
	if _, sdk := otel.GetMeterProvider().(*sdkmetric.MeterProvider); sdk {
		t.Error("the global meter provider is the SDK's with metrics off")
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Start, %d before", n, before)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}
