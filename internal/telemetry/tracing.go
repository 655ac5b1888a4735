package telemetry

import (
	"context"
	"fmt"
	"io"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/envprop"
	"github.com/nemolens/lens-go/internal/traceid"
)

// TracingOptions are the inputs of [NewTracing] besides the resource and the
// settings.
type TracingOptions struct {
	// Exporter replaces the exporter the settings name (lens.WithSpanExporter).
	Exporter sdktrace.SpanExporter
	// Console receives the console exporter's output (see ConsoleWriter).
	Console io.Writer
	// Diagnostics reports failed background exports (nil: they are not
	// reported) and strings exported with U+FFFD in place of invalid UTF-8
	// (nil: through slog.Default()).
	Diagnostics *Diagnostics
	// Env is where the parent trace context is read (TRACEPARENT, …); nil is
	// the process environment.
	Env environ.Lookuper
	// Attempt is the process's job attempt (assembly.Attempt), used when
	// Settings.TracePerAttempt is on; the zero value is none.
	Attempt traceid.Attempt
	// Warn says a warning (NoAttemptWarning); nil logs it at WARN through
	// the diagnostics' logger.
	Warn func(string)
	// Batch, when non-nil, is the batch mode of lens emit-spans and lens
	// reckon, which export one whole set of spans: ending a span waits
	// while the queue is full (OTEL_BSP_MAX_QUEUE_SIZE) instead of dropping
	// it, until Batch is done; only then are spans dropped (and counted).
	// Nil is the mode of a running process: ending a span never blocks
	// (docs/tracing.md#batch-export).
	Batch context.Context
}

// Tracing is a tracer provider whose spans go through Lens's span pipeline.
type Tracing struct {
	sdk      *sdktrace.TracerProvider
	provider trace.TracerProvider
	pipeline *spanPipeline
	parent   trace.SpanContext
	secrets  []string
}

// NewTracing builds the tracer provider: the SDK's TracerProvider with Lens's
// span pipeline (exact accounting, bounded queue, exactly res on every
// exported span) in front of the exporter. The provider is given no
// resource option, so the SDK does not parse OTEL_RESOURCE_ATTRIBUTES once
// more for it (its default resource is computed once per process); the
// pipeline stamps res on every span it exports. When env holds a valid
// parent trace context for s.Propagator, root spans continue it.
func NewTracing(ctx context.Context, res *resource.Resource, s *Settings, o TracingOptions) (*Tracing, error) {
	exp := o.Exporter
	var guard *RefusalGuard
	if exp == nil {
		var err error
		if exp, guard, err = spanExporters(o.Console).New(ctx, s.Traces, s.Secrets); err != nil {
			return nil, fmt.Errorf("lens: span exporter: %w", err)
		}
	}
	var onError func(error)
	d := o.Diagnostics
	if d != nil {
		d.AddSecrets(s.Secrets...)
		onError = d.Report
	} else {
		d = NewDiagnostics(nil) // invalid UTF-8 is always reported
	}
	p := newSpanPipeline(exp, res, s, guard, onError, d.InvalidUTF8)
	if p.batch = o.Batch; p.batch != nil {
		// A batch command has no later chance: a collector that refuses
		// the connection fails each export at once, as in a final flush,
		// instead of retrying it until --flush-timeout.
		guard.Final()
	}
	// The generator honours ids requested through the context
	// (completed.ContextWithTraceID, completed.Span.SpanID) and, in the
	// per-attempt mode, gives root spans the attempt's trace id
	// (docs/tracing.md#attempt-precedence).
	var gen traceid.Generator
	if s.TracePerAttempt {
		if gen.Attempt = o.Attempt.TraceID; !gen.Attempt.IsValid() {
			if o.Warn != nil {
				o.Warn(NoAttemptWarning)
			} else {
				d.Warn(NoAttemptWarning)
			}
		}
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p), sdktrace.WithIDGenerator(gen))
	t := &Tracing{sdk: tp, provider: tp, pipeline: p, secrets: s.Secrets}
	if link, ok := o.Attempt.Link(); ok && gen.Attempt.IsValid() {
		t.provider = &hookProvider{next: tp, hook: linked(link)}
	}
	if s.Propagator != nil {
		parent := trace.SpanContextFromContext(envprop.Extract(context.Background(), environ.Or(o.Env), s.Propagator))
		if parent.IsValid() {
			t.parent = parent
			t.provider = &hookProvider{next: t.provider, hook: parented(parent)}
		}
	}
	return t, nil
}

// Provider returns the tracer provider to hand out: the SDK's, wrapped to
// continue the environment's trace when the process received one.
func (t *Tracing) Provider() trace.TracerProvider { return t.provider }

// SDK returns the SDK's tracer provider.
func (t *Tracing) SDK() *sdktrace.TracerProvider { return t.sdk }

// Parent returns the span context received in the environment (invalid
// when none).
func (t *Tracing) Parent() trace.SpanContext { return t.parent }

// SetResource replaces the resource stamped on the spans exported from now
// on (lens exec completes its resource with the GPU probe's count, which
// runs beside the command, before its span ends).
func (t *Tracing) SetResource(res *resource.Resource) {
	t.pipeline.res.Store(validResource(res, t.pipeline.invalid))
}

// Counts returns the span accounting.
func (t *Tracing) Counts() SpanCounts { return t.pipeline.Counts() }

// ExportError returns the error of the first export that failed (shaped
// by [ShapeError]), or nil: the reason a batch command gives when not
// every span was exported.
func (t *Tracing) ExportError() error {
	return ShapeError(t.pipeline.FirstError(), t.secrets)
}

// Rejection returns the first partial success the collector answered (a
// *[RejectedError]: spans rejected, or a warning with none rejected),
// shaped by [ShapeError], or nil.
func (t *Tracing) Rejection() error {
	if r := t.pipeline.FirstRejection(); r != nil {
		return ShapeError(r, t.secrets)
	}
	return nil
}

// ForceFlush exports every span ended so far. Its error is shaped by
// [ShapeError].
func (t *Tracing) ForceFlush(ctx context.Context) error {
	return ShapeError(t.sdk.ForceFlush(ctx), t.secrets)
}

// Shutdown flushes and stops the provider within ctx; a collector that
// refuses connections, or whose TLS handshake fails for a certificate or
// protocol reason, ends it at once (see [RefusalGuard]). Its error is
// shaped by [ShapeError].
func (t *Tracing) Shutdown(ctx context.Context) error {
	return ShapeError(t.sdk.Shutdown(ctx), t.secrets)
}

// DefaultPropagator is W3C Trace Context + Baggage, the OpenTelemetry
// default (OTEL_PROPAGATORS unset).
func DefaultPropagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}
