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
// process environment once more) and ends final exports at once when the
// collector refuses connections.
type metricExporter struct {
	sdkmetric.Exporter
	res   *resource.Resource
	guard *telemetry.RefusalGuard
}

func (e *metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	// rm belongs to the periodic reader, which sets its Resource again on
	// every collection.
	rm.Resource = e.res
	return e.guard.Export(ctx, func(ctx context.Context) error { return e.Exporter.Export(ctx, rm) })
}

// logExporter ends final exports at once when the collector refuses
// connections.
type logExporter struct {
	sdklog.Exporter
	guard *telemetry.RefusalGuard
}

func (e *logExporter) Export(ctx context.Context, records []sdklog.Record) error {
	return e.guard.Export(ctx, func(ctx context.Context) error { return e.Exporter.Export(ctx, records) })
}
