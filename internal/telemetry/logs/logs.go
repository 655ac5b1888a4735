package logs

import (
	"context"
	"fmt"
	"io"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutlog"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/nemolens/lens-go/internal/telemetry"
)

// Options are what the caller gives beside the settings.
type Options struct {
	// Exporter, when set, replaces the exporter the settings name.
	Exporter sdklog.Exporter
	// Console is where the console exporter writes.
	Console io.Writer
	// Diagnostics receives the reports of invalid UTF-8.
	Diagnostics *telemetry.Diagnostics
}

// New builds the logger provider of s for res. The guard (nil for a
// caller's exporter) ends final exports at once when the collector refuses
// connections.
func New(ctx context.Context, res *resource.Resource, s *telemetry.Settings, o Options) (*sdklog.LoggerProvider, *telemetry.RefusalGuard, error) {
	exp := o.Exporter
	var guard *telemetry.RefusalGuard
	if exp == nil {
		var err error
		if exp, guard, err = exporters(o.Console).New(ctx, s.Logs, s.Secrets); err != nil {
			return nil, nil, fmt.Errorf("lens: log exporter: %w", err)
		}
	}
	proc := sdklog.NewBatchProcessor(&exporter{Exporter: exp, guard: guard, invalid: o.Diagnostics.InvalidUTF8},
		sdklog.WithMaxQueueSize(s.BLRPMaxQueueSize),
		sdklog.WithExportMaxBatchSize(s.BLRPMaxExportBatch),
		sdklog.WithExportInterval(s.BLRPScheduleDelay),
		sdklog.WithExportTimeout(s.BLRPExportTimeout))
	// Log records cannot be given another resource on the way out, so the
	// provider gets it (and the SDK merges its own parse of the process
	// environment under it; docs/resource.md#sdk-provider-merge).
	return sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(proc)), guard, nil
}

// exporters are the log exporters of every kind and protocol.
func exporters(console io.Writer) telemetry.Exporters[sdklog.Exporter] {
	return telemetry.Exporters[sdklog.Exporter]{
		Console: func() (sdklog.Exporter, error) { return stdoutlog.New(stdoutlog.WithWriter(console)) },
		HTTP: func(ctx context.Context, sig telemetry.Signal) (sdklog.Exporter, error) {
			return otlploghttp.New(ctx, telemetry.HTTPOptions[otlploghttp.Option]{
				Timeout: otlploghttp.WithTimeout, EndpointURL: otlploghttp.WithEndpointURL, TLS: otlploghttp.WithTLSClientConfig,
				HTTPClient: otlploghttp.WithHTTPClient, Response: response,
			}.For(sig)...)
		},
		GRPC: func(ctx context.Context, sig telemetry.Signal, guard *telemetry.RefusalGuard) (sdklog.Exporter, error) {
			return otlploggrpc.New(ctx, telemetry.GRPCOptions[otlploggrpc.Option]{
				Endpoint: otlploggrpc.WithEndpoint, TLSCredentials: otlploggrpc.WithTLSCredentials,
				Timeout: otlploggrpc.WithTimeout, DialOptions: otlploggrpc.WithDialOption,
				// otlploggrpc parses its endpoint variable itself to decide on
				// security, and reports a HOST:PORT as invalid.
				EndpointURL: otlploggrpc.WithEndpointURL, Insecure: otlploggrpc.WithInsecure,
			}.For(sig, guard)...)
		},
	}
}

// exporter exports strings that are not valid UTF-8 with U+FFFD
// (docs/resource.md#invalid-utf-8) and ends final exports at once when the
// collector refuses connections.
type exporter struct {
	sdklog.Exporter
	guard   *telemetry.RefusalGuard
	invalid func(what, source string) // reports invalid UTF-8
}

func (e *exporter) Export(ctx context.Context, records []sdklog.Record) error {
	records = validLogRecords(records, e.invalid)
	return e.guard.Export(ctx, func(ctx context.Context) error { return e.Exporter.Export(ctx, records) })
}

// response is the signal's OTLP/HTTP answer (telemetry.HTTPOptions.Response).
func response() proto.Message { return &collogspb.ExportLogsServiceResponse{} }
