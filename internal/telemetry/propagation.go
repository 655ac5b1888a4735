package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// parentedProvider gives every root span started through it the span
// context the process received in its environment (TRACEPARENT from lens
// exec or a launcher) as remote parent, so that a process started by a
// traced parent continues the parent's trace without code of its own. A
// span started with a context that already holds a span, or with
// trace.WithNewRoot(), is left alone.
type parentedProvider struct {
	embedded.TracerProvider
	next   trace.TracerProvider
	parent trace.SpanContext
}

func (p *parentedProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return &parentedTracer{next: p.next.Tracer(name, opts...), parent: p.parent}
}

type parentedTracer struct {
	embedded.Tracer
	next   trace.Tracer
	parent trace.SpanContext
}

func (t *parentedTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if cfg := trace.NewSpanStartConfig(opts...); !cfg.NewRoot() && !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, t.parent)
	}
	return t.next.Start(ctx, name, opts...)
}
