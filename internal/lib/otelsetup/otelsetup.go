// Package otelsetup builds a process's OpenTelemetry tracer provider from
// the standard OTEL_* variables and shuts it down, flushing what is
// buffered, when the process stops. Tracing is off unless a variable asks
// for it: without one the global tracer provider stays the no-op one, and
// no exporter and no goroutine are started.
//
// What the SDK reads itself is left to it: the endpoint, headers, timeout
// and compression of the OTLP exporter (OTEL_EXPORTER_OTLP_*), the sampler
// (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG), the batch processor
// (OTEL_BSP_*), the service name and resource (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES). This package decides only whether to start,
// and refuses what this build cannot do.
package otelsetup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Tracing is the tracer provider Start set up, or nothing when tracing is
// off.
type Tracing struct {
	tp *sdktrace.TracerProvider
}

// Enabled reports whether spans are exported.
func (t *Tracing) Enabled() bool { return t != nil && t.tp != nil }

// Shutdown exports the spans still buffered and stops the exporter; ctx
// bounds how long it waits for the collector. With tracing off it does
// nothing.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	if err := t.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("flush traces: %w", err)
	}
	return nil
}

// Wanted reports whether the environment asks for traces: OTEL_TRACES_EXPORTER
// is otlp, or it is unset and an OTLP endpoint is given
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); never
// with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. It is an error
// to ask for what this build cannot export.
func Wanted() (bool, error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	switch exp := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER"))); exp {
	case "none":
		return false, nil
	case "":
		if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return false, nil
		}
	case "otlp":
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: this program exports traces over OTLP only: set otlp (or none)", exp)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			continue
		}
		if v != "http/protobuf" {
			return false, fmt.Errorf("%s=%q: this program speaks OTLP over http/protobuf only: set http/protobuf and the collector's HTTP port (4318)", name, v)
		}
		break // the traces' own variable wins over the general one
	}
	return true, nil
}

// Start sets the global tracer provider and the W3C propagators
// (traceparent, tracestate, baggage) when the environment asks for traces
// (Wanted); service is the service.name unless OTEL_SERVICE_NAME says
// otherwise. With tracing off it changes nothing. Call Shutdown on the
// result when the process stops.
func Start(ctx context.Context, service string) (*Tracing, error) {
	on, err := Wanted()
	if err != nil || !on {
		return &Tracing{}, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	// Later sources win: OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME
	// over the program's name.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", service)), resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		exp.Shutdown(ctx)
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return &Tracing{tp: tp}, nil
}
