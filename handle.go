package lens

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"go.opentelemetry.io/otel/log"
	lognoop "go.opentelemetry.io/otel/log/noop"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/nemolens/lens-go/attr"
)

// Handle is the result of [Setup] (the reference's TelemetryHandle): the
// providers, the resource they export, and Shutdown.
//
// A Handle from a disabled Setup — and a nil *Handle — has no-op providers,
// an empty resource, a discarding logger, IsExporting false, and a Shutdown
// that returns nil. A Handle is safe for concurrent use.
type Handle struct {
	cfg     Config
	attrs   *attr.Map
	res     *resource.Resource
	enabled bool

	sdkTP  *sdktrace.TracerProvider
	sdkMP  *sdkmetric.MeterProvider
	sdkLP  *sdklog.LoggerProvider
	logger *slog.Logger
	spans  *spanPipeline // nil unless traces are enabled

	globals *installedGlobals

	shutdownOnce sync.Once
	shutdownErr  error
}

// IsExporting reports whether Setup was enabled and built providers (SPEC
// §6.1: every enabled process exports). It stays true after Shutdown.
func (h *Handle) IsExporting() bool { return h != nil && h.enabled }

// Config returns the effective configuration: the one given to Setup with
// its empty string fields defaulted ("nemo", "default", "otlp") and, for an
// enabled Setup, the run id filled in (SPEC §6.2).
func (h *Handle) Config() Config {
	if h == nil {
		return Config{}.withDefaults()
	}
	return h.cfg
}

// Resource returns the resource every provider of the Handle exports: the
// telemetry.sdk.* attributes under [ResourceAttributes]. It is schemaless.
// For a disabled Handle it is empty.
func (h *Handle) Resource() *resource.Resource {
	if h == nil || h.res == nil {
		return emptyResource
	}
	return h.res
}

// Attributes returns a copy of [Handle.Resource]'s attributes in Lens's
// order (telemetry.sdk.* first, then the layers of [ResourceAttributes]).
// For a disabled Handle it is empty.
func (h *Handle) Attributes() *attr.Map {
	if h == nil {
		return &attr.Map{}
	}
	return h.attrs.Clone()
}

// TracerProvider returns the tracer provider: an *sdktrace.TracerProvider
// when traces are enabled, else a no-op provider.
func (h *Handle) TracerProvider() trace.TracerProvider {
	if h == nil || h.sdkTP == nil {
		return tracenoop.NewTracerProvider()
	}
	return h.sdkTP
}

// MeterProvider returns the meter provider: an *sdkmetric.MeterProvider
// when metrics are enabled, else a no-op provider.
func (h *Handle) MeterProvider() metric.MeterProvider {
	if h == nil || h.sdkMP == nil {
		return metricnoop.NewMeterProvider()
	}
	return h.sdkMP
}

// LoggerProvider returns the OpenTelemetry logger provider: an
// *sdklog.LoggerProvider when logs are enabled, else a no-op provider.
func (h *Handle) LoggerProvider() log.LoggerProvider {
	if h == nil || h.sdkLP == nil {
		return lognoop.NewLoggerProvider()
	}
	return h.sdkLP
}

// Tracer is h.TracerProvider().Tracer(name, opts...).
func (h *Handle) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return h.TracerProvider().Tracer(name, opts...)
}

// Meter is h.MeterProvider().Meter(name, opts...).
func (h *Handle) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return h.MeterProvider().Meter(name, opts...)
}

// Logger returns a log/slog logger that emits OpenTelemetry log records
// through the logger provider (the otelslog bridge, instrumentation scope
// [InstrumentationName]). Records logged with a context that carries a span
// (logger.InfoContext(ctx, …)) get that span's trace and span ids. When logs
// are disabled the logger discards everything; it is never nil.
func (h *Handle) Logger() *slog.Logger {
	if h == nil || h.logger == nil {
		return discardLogger
	}
	return h.logger
}

// DroppedSpans returns the number of ended, sampled spans that were dropped
// because the export queue was full — for example while the collector is
// unreachable. The queue holds OTEL_BSP_MAX_QUEUE_SIZE spans (default 2048),
// of which min(64, size/4) are kept free for ForceFlush markers: spans are
// dropped once size − min(64, size/4) are pending export (1984 by default).
func (h *Handle) DroppedSpans() int64 {
	if h == nil || h.spans == nil {
		return 0
	}
	return h.spans.q.dropped.Load()
}

// ForceFlush exports the spans, metrics and log records collected so far,
// waiting at most until ctx's deadline ([DefaultShutdownTimeout] when ctx has
// none).
func (h *Handle) ForceFlush(ctx context.Context) error {
	if h == nil || !h.enabled {
		return nil
	}
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	var buf [maxProviders]provider
	return concurrently(ctx, h.providers(&buf), provider.ForceFlush)
}

// Shutdown flushes and stops the providers, puts back the OpenTelemetry
// globals Setup replaced (when they are still Lens's), and releases the
// one-setup-per-process guard. The providers flush concurrently and
// Shutdown returns by ctx's deadline ([DefaultShutdownTimeout] when ctx has
// none) even when the collector does not answer; data not exported by then
// is lost (the SDK may finish a pending export in the background). Only the
// first call does anything; later calls return nil.
func (h *Handle) Shutdown(ctx context.Context) error {
	if h == nil || !h.enabled {
		return nil
	}
	var first bool
	h.shutdownOnce.Do(func() {
		first = true
		h.globals.restore(h)
		ctx, cancel := withDefaultDeadline(ctx)
		defer cancel()
		h.shutdownErr = h.shutdownProviders(ctx)
		release()
	})
	if !first {
		return nil
	}
	return h.shutdownErr
}

func (h *Handle) shutdownProviders(ctx context.Context) error {
	var buf [maxProviders]provider
	return concurrently(ctx, h.providers(&buf), provider.Shutdown)
}

// maxProviders is the number of signals: traces, metrics, logs.
const maxProviders = 3

// provider is what ForceFlush and Shutdown use of the SDK providers.
type provider interface {
	ForceFlush(context.Context) error
	Shutdown(context.Context) error
}

// providers returns the Handle's providers (tracer, meter, logger; the
// enabled ones) in buf.
func (h *Handle) providers(buf *[maxProviders]provider) []provider {
	ps := buf[:0]
	if h.sdkTP != nil {
		ps = append(ps, h.sdkTP)
	}
	if h.sdkMP != nil {
		ps = append(ps, h.sdkMP)
	}
	if h.sdkLP != nil {
		ps = append(ps, h.sdkLP)
	}
	return ps
}

// concurrently calls op on every provider in parallel (the first one on the
// calling goroutine) and joins their errors.
func concurrently(ctx context.Context, ps []provider, op func(provider, context.Context) error) error {
	if len(ps) == 0 {
		return nil
	}
	// One allocation for the state the goroutines share.
	var st struct {
		wg   sync.WaitGroup
		errs [maxProviders]error
	}
	for i, p := range ps[1:] {
		st.wg.Go(func() { st.errs[i+1] = op(p, ctx) })
	}
	st.errs[0] = op(ps[0], ctx)
	st.wg.Wait()
	return errors.Join(st.errs[:len(ps)]...)
}

func withDefaultDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, DefaultShutdownTimeout)
}
