package telemetry

import (
	"context"
	"io"
	"os"
	"sync"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"

	"github.com/nemolens/lens-go/environ"
)

// DialOptions returns the gRPC dial options of an OTLP/gRPC exporter
// watched by g: g's dialer, unless a proxy is configured for gRPC
// (https_proxy, HTTPS_PROXY, grpc_proxy in env: gRPC applies a proxy only
// with its own dialer), in which case the exporter keeps gRPC's dialer and
// its final exports are bounded by their deadline only. A nil guard has
// none.
func (g *RefusalGuard) DialOptions(env environ.Lookuper) []grpc.DialOption {
	if g == nil {
		return nil
	}
	watch := grpc.WithChainUnaryInterceptor(g.intercept) // endpointcause.go
	for _, name := range [...]string{"https_proxy", "HTTPS_PROXY", "grpc_proxy"} {
		if v, _ := env.LookupEnv(name); v != "" {
			return []grpc.DialOption{watch}
		}
	}
	return []grpc.DialOption{grpc.WithContextDialer(g.dial), watch}
}

// spanExporters are the span exporters of every kind and protocol.
func spanExporters(console io.Writer) Exporters[sdktrace.SpanExporter] {
	return Exporters[sdktrace.SpanExporter]{
		Console: func() (sdktrace.SpanExporter, error) { return stdouttrace.New(stdouttrace.WithWriter(console)) },
		HTTP: func(ctx context.Context, sig Signal) (sdktrace.SpanExporter, error) {
			return otlptracehttp.New(ctx, HTTPOptions[otlptracehttp.Option]{
				Timeout: otlptracehttp.WithTimeout, EndpointURL: otlptracehttp.WithEndpointURL, TLS: otlptracehttp.WithTLSClientConfig,
				HTTPClient: otlptracehttp.WithHTTPClient, Response: TraceResponse,
			}.For(sig)...)
		},
		GRPC: func(ctx context.Context, sig Signal, guard *RefusalGuard) (sdktrace.SpanExporter, error) {
			return otlptracegrpc.New(ctx, GRPCOptions[otlptracegrpc.Option]{
				Endpoint: otlptracegrpc.WithEndpoint, TLSCredentials: otlptracegrpc.WithTLSCredentials,
				Timeout: otlptracegrpc.WithTimeout, DialOptions: otlptracegrpc.WithDialOption,
			}.For(sig, guard)...)
		},
	}
}

// ConsoleWriter returns w (os.Stdout when nil) behind a mutex, so that the
// console exporters of several signals write whole lines.
func ConsoleWriter(w io.Writer) io.Writer {
	if w == nil {
		w = os.Stdout
	}
	return SyncWriter(w)
}

// SyncWriter returns w with its writes serialised, so that writers on
// several goroutines never interleave within one write.
func SyncWriter(w io.Writer) io.Writer { return &syncWriter{w: w} }

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}
