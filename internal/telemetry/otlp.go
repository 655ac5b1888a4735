package telemetry

import (
	"context"
	"crypto/tls"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/proto"

	"github.com/nemolens/lens-go/environ"
)

// DefaultProtocol is the OTLP protocol when no OTEL_EXPORTER_OTLP_PROTOCOL
// variable names one; docs/resource.md#configuration states the choice and
// why.
const DefaultProtocol = ProtocolGRPC

// HTTPOptions are the option constructors of one signal's OTLP/HTTP
// exporter package (otlptracehttp, otlpmetrichttp, otlploghttp). For turns
// a signal's settings into that package's options, so that every signal's
// exporter is configured by the same decisions, in one place.
type HTTPOptions[O any] struct {
	Timeout     func(time.Duration) O
	EndpointURL func(string) O
	TLS         func(*tls.Config) O
	// HTTPClient and Response, when set, give the exporter Lens's HTTP
	// client, which checks every answer (see httpClient): Response is the
	// signal's OTLP response message (TraceResponse, MetricResponse,
	// LogResponse).
	HTTPClient func(*http.Client) O
	Response   func() proto.Message
}

// For returns the options of sig's OTLP/HTTP exporter.
func (f HTTPOptions[O]) For(sig Signal) []O {
	var opts []O
	if f.HTTPClient != nil && f.Response != nil {
		// The client carries the TLS configuration and the timeout; the
		// options below only keep the exporter's view of them consistent.
		opts = append(opts, f.HTTPClient(httpClient(sig, f.Response)))
	}
	if sig.Timeout > 0 {
		opts = append(opts, f.Timeout(sig.Timeout))
	}
	if sig.Endpoint != "" {
		opts = append(opts, f.EndpointURL(sig.Endpoint))
	}
	if sig.TLS != nil {
		opts = append(opts, f.TLS(sig.TLS))
	}
	return opts
}

// GRPCOptions are the option constructors of one signal's OTLP/gRPC
// exporter package (otlptracegrpc, otlpmetricgrpc, otlploggrpc).
type GRPCOptions[O any] struct {
	Endpoint       func(string) O
	TLSCredentials func(credentials.TransportCredentials) O
	Timeout        func(time.Duration) O
	DialOptions    func(...grpc.DialOption) O
	// EndpointURL and Insecure, when set, give a HOST:PORT target as a URL
	// (Signal.EndpointURL) and plain text explicitly: for a package that
	// otherwise parses its endpoint variable itself to decide on security
	// (otlploggrpc).
	EndpointURL func(string) O
	Insecure    func() O
}

// For returns the options of sig's OTLP/gRPC exporter watched by guard
// (nil: unwatched).
func (f GRPCOptions[O]) For(sig Signal, guard *RefusalGuard) []O {
	opts := []O{f.TLSCredentials(guard.Credentials(sig))}
	if u, ok := sig.EndpointURL(); ok && f.EndpointURL != nil {
		opts = append(opts, f.EndpointURL(u))
	} else {
		opts = append(opts, f.Endpoint(sig.Endpoint))
		if sig.Insecure && f.Insecure != nil {
			opts = append(opts, f.Insecure())
		}
	}
	if sig.Timeout > 0 {
		opts = append(opts, f.Timeout(sig.Timeout))
	}
	// One WithDialOption: each replaces the last. The interceptor records
	// the collector's answers (see answerInterceptor).
	d := append(guard.DialOptions(environ.OS{}), grpc.WithChainUnaryInterceptor(answerInterceptor))
	opts = append(opts, f.DialOptions(d...))
	return opts
}

// Exporters are the constructors of one signal's exporters: console,
// OTLP/HTTP and OTLP/gRPC.
type Exporters[E any] struct {
	Console func() (E, error)
	HTTP    func(ctx context.Context, sig Signal) (E, error)
	GRPC    func(ctx context.Context, sig Signal, guard *RefusalGuard) (E, error)
}

// New builds sig's exporter as its Kind and Protocol say: the one place
// where a signal's exporter is chosen. An OTLP exporter is watched by the
// returned guard (nil otherwise), which redacts secrets from its errors.
// KindNone builds nothing.
func (f Exporters[E]) New(ctx context.Context, sig Signal, secrets []string) (exp E, guard *RefusalGuard, err error) {
	switch sig.Kind {
	case KindConsole:
		exp, err = f.Console()
	case KindOTLP:
		guard = NewRefusalGuard(secrets)
		guard.watchEndpoint(sig)
		if sig.Protocol == ProtocolHTTPProtobuf {
			exp, err = f.HTTP(ctx, sig)
		} else {
			exp, err = f.GRPC(ctx, sig, guard)
		}
	}
	return exp, guard, err
}
