package metrics

import (
	"context"
	"fmt"
	"io"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/nemolens/lens-go/internal/telemetry"
)

// Options are what the caller gives beside the settings.
type Options struct {
	// Reader, when set, replaces the periodic reader and the exporter; it
	// reads the provider's resource as the SDK builds it (lens.WithMetricReader).
	Reader sdkmetric.Reader
	// Exporter, when set, replaces the exporter the settings name.
	Exporter sdkmetric.Exporter
	// Console is where the console exporter writes.
	Console io.Writer
	// Diagnostics receives the reports of invalid UTF-8.
	Diagnostics *telemetry.Diagnostics
}

// New builds the meter provider of s for res. The guard (nil for a
// caller's reader or exporter) ends final exports at once when the
// collector refuses connections.
func New(ctx context.Context, res *resource.Resource, s *telemetry.Settings, o Options) (*sdkmetric.MeterProvider, *telemetry.RefusalGuard, error) {
	if o.Reader != nil {
		return sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(o.Reader)), nil, nil
	}
	exp := o.Exporter
	var guard *telemetry.RefusalGuard
	if exp == nil {
		var err error
		if exp, guard, err = exporters(o.Console).New(ctx, s.Metrics, s.Secrets); err != nil {
			return nil, nil, fmt.Errorf("lens: metric exporter: %w", err)
		}
	}
	reader := sdkmetric.NewPeriodicReader(&exporter{Exporter: exp, res: res, guard: guard, invalid: o.Diagnostics.InvalidUTF8},
		sdkmetric.WithInterval(s.MetricExportInterval), sdkmetric.WithTimeout(s.MetricExportTimeout))
	// No WithResource: the SDK would parse OTEL_RESOURCE_ATTRIBUTES once
	// more; the exporter wrapper stamps res on every export instead.
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), guard, nil
}

// exporters are the metric exporters of every kind and protocol.
func exporters(console io.Writer) telemetry.Exporters[sdkmetric.Exporter] {
	return telemetry.Exporters[sdkmetric.Exporter]{
		Console: func() (sdkmetric.Exporter, error) { return stdoutmetric.New(stdoutmetric.WithWriter(console)) },
		HTTP: func(ctx context.Context, sig telemetry.Signal) (sdkmetric.Exporter, error) {
			return otlpmetrichttp.New(ctx, telemetry.HTTPOptions[otlpmetrichttp.Option]{
				Timeout: otlpmetrichttp.WithTimeout, EndpointURL: otlpmetrichttp.WithEndpointURL, TLS: otlpmetrichttp.WithTLSClientConfig,
				HTTPClient: otlpmetrichttp.WithHTTPClient, Response: response,
			}.For(sig)...)
		},
		GRPC: func(ctx context.Context, sig telemetry.Signal, guard *telemetry.RefusalGuard) (sdkmetric.Exporter, error) {
			return otlpmetricgrpc.New(ctx, telemetry.GRPCOptions[otlpmetricgrpc.Option]{
				Endpoint: otlpmetricgrpc.WithEndpoint, TLSCredentials: otlpmetricgrpc.WithTLSCredentials,
				Timeout: otlpmetricgrpc.WithTimeout, DialOptions: otlpmetricgrpc.WithDialOption,
			}.For(sig, guard)...)
		},
	}
}

// exporter gives every export exactly the Lens resource (the meter
// provider is built without one, so that the SDK does not parse the
// process environment once more), exports strings that are not valid UTF-8
// with U+FFFD (docs/resource.md#invalid-utf-8), and ends final exports at
// once when the collector refuses connections.
type exporter struct {
	sdkmetric.Exporter
	res     *resource.Resource
	guard   *telemetry.RefusalGuard
	invalid func(what, source string) // reports invalid UTF-8
}

func (e *exporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	// rm belongs to the periodic reader, which sets its Resource and every
	// data point again on every collection.
	rm.Resource = e.res
	validResourceMetrics(rm, e.invalid)
	return e.guard.Export(ctx, func(ctx context.Context) error { return e.Exporter.Export(ctx, rm) })
}

// response is the signal's OTLP/HTTP answer (telemetry.HTTPOptions.Response).
func response() proto.Message { return &colmetricspb.ExportMetricsServiceResponse{} }
