package lens

import (
	"context"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/internal/telemetry"
)

// metricExporter gives every export exactly the Lens resource (the meter
// provider is built without one, so that the SDK does not parse the
// process environment once more), exports strings that are not valid UTF-8
// with U+FFFD (docs/resource.md#invalid-utf-8), and ends final exports at
// once when the collector refuses connections.
type metricExporter struct {
	sdkmetric.Exporter
	res     *resource.Resource
	guard   *telemetry.RefusalGuard
	invalid func(what, source string) // reports invalid UTF-8
}

func (e *metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	// rm belongs to the periodic reader, which sets its Resource and every
	// data point again on every collection.
	rm.Resource = e.res
	validResourceMetrics(rm, e.invalid)
	return e.guard.Export(ctx, func(ctx context.Context) error { return e.Exporter.Export(ctx, rm) })
}

// logExporter exports strings that are not valid UTF-8 with U+FFFD
// (docs/resource.md#invalid-utf-8) and ends final exports at once when the
// collector refuses connections.
type logExporter struct {
	sdklog.Exporter
	guard   *telemetry.RefusalGuard
	invalid func(what, source string) // reports invalid UTF-8
}

func (e *logExporter) Export(ctx context.Context, records []sdklog.Record) error {
	records = validLogRecords(records, e.invalid)
	return e.guard.Export(ctx, func(ctx context.Context) error { return e.Exporter.Export(ctx, records) })
}
