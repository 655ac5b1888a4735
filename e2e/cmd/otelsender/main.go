// Command otelsender is a program that uses the OpenTelemetry Go SDK alone,
// no lens-go: the end-to-end tests of the node's Collector (issue 37) run it
// where a trainer with a plain SDK would run. It sends one span named by
// -span, with the span attribute e2e.tag=-tag, over OTLP/gRPC to
// OTEL_EXPORTER_OTLP_ENDPOINT, and exits 0 once the export has returned
// without error (1 otherwise).
//
// Its resource is what the SDK itself detects: the defaults (service.name
// from OTEL_SERVICE_NAME, telemetry.sdk.*), OTEL_RESOURCE_ATTRIBUTES and
// process.pid, which every OpenTelemetry SDK sets and by which the lens
// processor finds the process. It reads no scheduler variable.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func main() {
	span := flag.String("span", "work", "the span's name")
	tag := flag.String("tag", "", "the span attribute e2e.tag")
	flag.Parse()
	if err := run(*span, *tag); err != nil {
		fmt.Fprintln(os.Stderr, "otelsender:", err)
		os.Exit(1)
	}
}

func run(name, tag string) error {
	// A hang guard only: the export of one span returns in milliseconds.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithProcessPID())
	if err != nil {
		return err
	}
	res, err = resource.Merge(resource.Default(), res)
	if err != nil {
		return err
	}
	exp, err := otlptracegrpc.New(ctx)
	if err != nil {
		return err
	}
	var exportErr error
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(errorsOf(exp, &exportErr))))
	_, s := tp.Tracer("e2e/otelsender").Start(ctx, name)
	s.SetAttributes(attribute.String("e2e.tag", tag))
	s.End()
	if err := tp.Shutdown(ctx); err != nil {
		return err
	}
	return exportErr
}

// errorsOf keeps the export's error: the simple span processor hands it to
// the global error handler, which only logs it.
func errorsOf(exp sdktrace.SpanExporter, err *error) sdktrace.SpanExporter {
	return exporter{exp, err}
}

type exporter struct {
	sdktrace.SpanExporter
	err *error
}

func (e exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		*e.err = err
	}
	return err
}
