// Package otelsetup builds a process's OpenTelemetry tracer and meter
// providers from the standard OTEL_* variables and shuts them down,
// flushing what is buffered, when the process stops. Each is off unless a
// variable asks for it: without one the global provider stays the no-op
// one, and no exporter and no goroutine are started.
//
// What the SDK reads itself is left to it: the endpoint, headers, timeout
// and compression of the OTLP exporters (OTEL_EXPORTER_OTLP_*), the sampler
// (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG), the batch processor
// (OTEL_BSP_*), the metric reader's interval (OTEL_METRIC_EXPORT_INTERVAL,
// OTEL_METRIC_EXPORT_TIMEOUT), the service name and resource
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES). This package decides only
// whether to start, and refuses what this build cannot do.
package otelsetup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Tracing is the tracer and meter providers Start set up; either is
// nothing when off.
type Tracing struct {
	tp *sdktrace.TracerProvider
	mp *sdkmetric.MeterProvider
}

// Enabled reports whether spans are exported.
func (t *Tracing) Enabled() bool { return t != nil && t.tp != nil }

// MetricsEnabled reports whether metrics are exported.
func (t *Tracing) MetricsEnabled() bool { return t != nil && t.mp != nil }

// Shutdown exports the spans and metrics still buffered and stops the
// exporters; ctx bounds how long it waits for the collector. With both off
// it does nothing.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.tp != nil {
		if err := t.tp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("flush traces: %w", err))
		}
	}
	if t.mp != nil {
		if err := t.mp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("flush metrics: %w", err))
		}
	}
	return errors.Join(errs...)
}

// signal is what the variables of one kind of telemetry are named after.
type signal struct {
	name     string // "traces", "metrics"
	exporter string // OTEL_TRACES_EXPORTER
	endpoint string // OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
	protocol string // OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
}

var (
	traces  = signal{"traces", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"}
	metrics = signal{"metrics", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"}
)

// wanted reports whether the environment asks for sig: its exporter variable
// (OTEL_TRACES_EXPORTER) is otlp, or it is unset and an OTLP endpoint is
// given (OTEL_EXPORTER_OTLP_ENDPOINT or sig's own, such as
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); never with OTEL_SDK_DISABLED=true or
// the exporter variable none. It is an error to ask for what this build
// cannot export.
func (sig signal) wanted() (bool, error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	switch exp := strings.ToLower(strings.TrimSpace(os.Getenv(sig.exporter))); exp {
	case "none":
		return false, nil
	case "":
		if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv(sig.endpoint) == "" {
			return false, nil
		}
	case "otlp":
	default:
		return false, fmt.Errorf("%s=%q: this program exports %s over OTLP only: set otlp (or none)", sig.exporter, exp, sig.name)
	}
	name := sig.protocol // the signal's own variable wins over the general one
	if strings.TrimSpace(os.Getenv(name)) == "" {
		name = "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	if v := strings.TrimSpace(os.Getenv(name)); v != "" && v != "http/protobuf" {
		return false, fmt.Errorf("%s=%q: this program speaks OTLP over http/protobuf only: set http/protobuf and the collector's HTTP port (4318)", name, v)
	}
	return true, nil
}

// Start sets the global tracer provider and the W3C propagators
// (traceparent, tracestate, baggage) when the environment asks for traces
// (traces.wanted), and the global meter provider, exporting periodically, when it
// asks for metrics (metrics.wanted); service is the service.name unless
// OTEL_SERVICE_NAME says otherwise. What is off it leaves as it is. Call
// Shutdown on the result when the process stops.
func Start(ctx context.Context, service string) (*Tracing, error) {
	onTraces, err := traces.wanted()
	if err != nil {
		return &Tracing{}, err
	}
	onMetrics, err := metrics.wanted()
	if err != nil || (!onTraces && !onMetrics) {
		return &Tracing{}, err
	}
	// Later sources win: OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME
	// over the program's name.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", service)), resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	t := &Tracing{}
	if onTraces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	}
	if onMetrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			t.Shutdown(ctx)
			return nil, fmt.Errorf("OTLP metric exporter: %w", err)
		}
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		otel.SetMeterProvider(t.mp)
	}
	if t.tp != nil {
		otel.SetTracerProvider(t.tp)
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	}
	return t, nil
}
