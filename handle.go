package lens

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/log"
	lognoop "go.opentelemetry.io/otel/log/noop"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/internal/telemetry"
)

// Handle is the result of [Setup] (the reference's TelemetryHandle): the
// providers, the resource they export, the span accounting, and Shutdown.
//
// A Handle from a disabled Setup — and a nil *Handle — has no-op providers,
// an empty resource, a discarding logger, IsExporting false, and a Shutdown
// that returns nil. A Handle is safe for concurrent use.
type Handle struct {
	cfg        Config
	attrs      *attr.Map
	res        *resource.Resource
	exporting  bool
	propagator propagation.TextMapPropagator

	tracing *telemetry.Tracing // nil unless traces are on
	sdkMP   *sdkmetric.MeterProvider
	sdkLP   *sdklog.LoggerProvider
	logger  *slog.Logger
	guards  []*telemetry.RefusalGuard // of the metric and log exporters
	secrets []string                  // the OTLP header values, never shown

	globals         *installedGlobals
	restoreIdentity func()

	shutdownOnce sync.Once
	shutdownErr  error
}

// Shared immutable no-op values of disabled handles.
var (
	discardLogger = slog.New(slog.DiscardHandler)
	emptyResource = resource.Empty()
)

// IsExporting reports whether Setup was enabled and built at least one
// provider (docs/resource.md#setup-once: every enabled process exports). It is false when
// telemetry is disabled, when OTEL_SDK_DISABLED=true, and when every signal
// is off. It stays true after Shutdown.
func (h *Handle) IsExporting() bool { return h != nil && h.exporting }

// Config returns the effective configuration: the one given to Setup with
// its empty string fields defaulted ("nemo", "default", "otlp") and, for an
// enabled Setup, the run id filled in (docs/resource.md#run-id-fill-in). Enabled is false when
// OTEL_SDK_DISABLED=true disabled it.
func (h *Handle) Config() Config {
	if h == nil {
		return Config{}.WithDefaults()
	}
	return h.cfg
}

// Resource returns the resource every provider of the Handle exports (see
// [NewResource]). It is schemaless. For a disabled Handle it is empty.
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

// Propagator returns the propagator of OTEL_PROPAGATORS (default W3C trace
// context and baggage) that Setup installed globally — the one to pass to
// carrier.WithPropagator when Setup was given [WithoutGlobals]. For a
// disabled Handle it is the default.
func (h *Handle) Propagator() propagation.TextMapPropagator {
	if h == nil || h.propagator == nil {
		return telemetry.DefaultPropagator()
	}
	return h.propagator
}

// TracerProvider returns the tracer provider: the SDK's
// *sdktrace.TracerProvider when traces are on — wrapped, when the process
// received a trace context in its environment, so that spans started
// without a parent continue that trace — else a no-op provider.
func (h *Handle) TracerProvider() trace.TracerProvider {
	if h == nil || h.tracing == nil {
		return tracenoop.NewTracerProvider()
	}
	return h.tracing.Provider()
}

// MeterProvider returns the meter provider: an *sdkmetric.MeterProvider
// when metrics are on, else a no-op provider.
func (h *Handle) MeterProvider() metric.MeterProvider {
	if h == nil || h.sdkMP == nil {
		return metricnoop.NewMeterProvider()
	}
	return h.sdkMP
}

// LoggerProvider returns the OpenTelemetry logger provider: an
// *sdklog.LoggerProvider when logs are on, else a no-op provider.
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
// are off the logger discards everything; it is never nil.
func (h *Handle) Logger() *slog.Logger {
	if h == nil || h.logger == nil {
		return discardLogger
	}
	return h.logger
}

// SpanCounts is the accounting of the spans of a [Handle]. Only sampled
// spans count (unsampled spans are never exported). Every sampled span
// started while the Handle's tracer provider ran is in Ended or in Open,
// and at every moment
//
//	Ended = Exported + Dropped + Failed + Rejected + Pending
//
// Its fields, all int64:
//
//   - Ended: sampled spans that ended while the Handle's tracer provider
//     ran, including those that ended after Shutdown began.
//   - Exported: spans the exporter accepted (for Lens's OTLP exporters:
//     the collector answered with success and kept them).
//   - Rejected: spans the collector received and rejected (an OTLP partial
//     success, reported with the collector's message through the
//     diagnostics); they are not retried (docs/tracing.md#export-counts).
//   - Dropped: spans never handed to the exporter, because
//     OTEL_BSP_MAX_QUEUE_SIZE spans (default 2048) were already pending —
//     while the collector is slow or unreachable, for example — or because
//     they ended after Shutdown began. Ending a span never waits.
//   - Failed: spans handed to the exporter whose export failed (the
//     collector refused the connection, did not answer within
//     OTEL_BSP_EXPORT_TIMEOUT, returned an error, or answered with
//     something that is not an OTLP response), and spans still
//     queued when Shutdown's deadline passed.
//   - Pending: spans queued or being exported.
//   - Open: sampled spans started but not ended — while the Handle runs,
//     the spans in progress. After Shutdown the SDK no longer reports the
//     end of a span, so the spans open then stay counted here for good.
//
// After a Shutdown that finished within its deadline Pending is 0; Open is
// then the spans that had not ended when the provider stopped — a span
// ended by a deferred End that runs after Shutdown (defer span.End() after
// defer h.Shutdown(…)) is one of them — and they are never exported. Spans
// started after Shutdown began are not recorded and not counted.
type SpanCounts = telemetry.SpanCounts

// SpanCounts returns the span accounting; it is all zero when traces are
// off.
func (h *Handle) SpanCounts() SpanCounts {
	if h == nil || h.tracing == nil {
		return SpanCounts{}
	}
	return h.tracing.Counts()
}

// ForceFlush exports the spans, metrics and log records collected so far,
// waiting at most until ctx's deadline ([DefaultShutdownTimeout] when ctx has
// none). Any number of ForceFlush calls may run at once.
func (h *Handle) ForceFlush(ctx context.Context) error {
	if h == nil || !h.cfg.Enabled {
		return nil
	}
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	var buf [maxProviders]provider
	return concurrently(ctx, h.providers(&buf), h.shaped(provider.ForceFlush))
}

// Shutdown flushes and stops the providers, puts back the OpenTelemetry
// globals Setup replaced (those that are still this Handle's; never a
// provider that is shut down, docs/resource.md#setup-once), gives up this
// process's identity and releases the one-setup-per-process guard. The
// providers flush concurrently and Shutdown returns by ctx's deadline
// ([DefaultShutdownTimeout] when ctx has none) even when the collector does
// not answer; a collector that refuses the connection ends the final
// export at once, over gRPC and HTTP, with an error wrapping
// [ErrCollectorRefused]. Data not exported by then is lost and counted
// ([Handle.SpanCounts]). The error is one line. Only the first call does
// anything; later calls return nil.
func (h *Handle) Shutdown(ctx context.Context) error {
	if h == nil || !h.cfg.Enabled {
		return nil
	}
	var first bool
	h.shutdownOnce.Do(func() {
		first = true
		h.globals.restoreProviders()
		for _, g := range h.guards {
			g.Final()
		}
		ctx, cancel := withDefaultDeadline(ctx)
		defer cancel()
		h.shutdownErr = h.shutdownProviders(ctx)
		h.globals.restoreDiagnostics()
		if h.restoreIdentity != nil {
			h.restoreIdentity()
		}
		release()
	})
	if !first {
		return nil
	}
	return h.shutdownErr
}

func (h *Handle) shutdownProviders(ctx context.Context) error {
	var buf [maxProviders]provider
	return concurrently(ctx, h.providers(&buf), h.shaped(provider.Shutdown))
}

// shaped returns op with its error shaped (docs/resource.md#export-errors):
// cut, on one line, without the OTLP header values.
func (h *Handle) shaped(op func(provider, context.Context) error) func(provider, context.Context) error {
	return func(p provider, ctx context.Context) error { return telemetry.ShapeError(op(p, ctx), h.secrets) }
}

// maxProviders is the number of signals: traces, metrics, logs.
const maxProviders = 3

// provider is what ForceFlush and Shutdown use of the providers.
type provider interface {
	ForceFlush(context.Context) error
	Shutdown(context.Context) error
}

// signalProvider names a provider for error messages.
type signalProvider struct {
	provider
	name string
}

// providers returns the Handle's providers (tracer, meter, logger; the
// enabled ones) in buf.
func (h *Handle) providers(buf *[maxProviders]provider) []provider {
	ps := buf[:0]
	if h.tracing != nil {
		ps = append(ps, signalProvider{h.tracing, "traces"})
	}
	if h.sdkMP != nil {
		ps = append(ps, signalProvider{h.sdkMP, "metrics"})
	}
	if h.sdkLP != nil {
		ps = append(ps, signalProvider{h.sdkLP, "logs"})
	}
	return ps
}

// concurrently calls op on every provider in parallel (the first one on the
// calling goroutine) and joins their errors into one line.
func concurrently(ctx context.Context, ps []provider, op func(provider, context.Context) error) error {
	if len(ps) == 0 {
		return nil
	}
	var st struct {
		wg   sync.WaitGroup
		errs [maxProviders]error
	}
	for i, p := range ps[1:] {
		st.wg.Go(func() { st.errs[i+1] = op(p, ctx) })
	}
	st.errs[0] = op(ps[0], ctx)
	st.wg.Wait()
	var errs []error
	var names []string
	for i, err := range st.errs[:len(ps)] {
		if err != nil {
			errs = append(errs, err)
			names = append(names, ps[i].(signalProvider).name)
		}
	}
	return oneLine(errs, names)
}

// lineError is errors.Join on one line: the messages of its errors (each
// once) joined with "; ", so that lens exec and log lines print it as one
// line. errors.Is and errors.As see every error.
type lineError struct {
	errs []error
	msg  string
}

func (e *lineError) Error() string   { return e.msg }
func (e *lineError) Unwrap() []error { return e.errs }

// oneLine joins the errors of the named signals: a message shared by
// several signals is written once ("traces, metrics: MESSAGE"), and the
// newlines of nested errors.Join become "; ".
func oneLine(errs []error, names []string) error {
	if len(errs) == 0 {
		return nil
	}
	if msg, ok := refusedLine(errs, names); ok {
		return &lineError{errs: errs, msg: msg}
	}
	var order []string
	bySignal := map[string][]string{}
	for i, err := range errs {
		msg := strings.ReplaceAll(err.Error(), "\n", "; ")
		if _, ok := bySignal[msg]; !ok {
			order = append(order, msg)
		}
		bySignal[msg] = append(bySignal[msg], names[i])
	}
	parts := make([]string, len(order))
	for i, msg := range order {
		parts[i] = strings.Join(bySignal[msg], ", ") + ": " + msg
	}
	return &lineError{errs: errs, msg: "lens: telemetry shutdown: " + strings.Join(parts, "; ")}
}

// refusedLine is the message when every signal failed because the
// collector refused the connection: one statement, the signals, and the
// connection error once.
func refusedLine(errs []error, names []string) (string, bool) {
	var op *net.OpError
	for _, err := range errs {
		if !errors.Is(err, ErrCollectorRefused) {
			return "", false
		}
		if op == nil {
			errors.As(err, &op)
		}
	}
	msg := "lens: telemetry shutdown: " + ErrCollectorRefused.Error() + " (" + strings.Join(names, ", ") + " not exported)"
	if op != nil {
		msg += ": " + op.Error()
	}
	return msg, true
}

func withDefaultDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, DefaultShutdownTimeout)
}
