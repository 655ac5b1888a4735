package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// startHook changes the context or the options of a span about to start.
type startHook func(ctx context.Context, opts []trace.SpanStartOption) (context.Context, []trace.SpanStartOption)

// hookProvider runs its hook on every span started through it: the
// environment's parent and the attempt's link below are such hooks.
type hookProvider struct {
	embedded.TracerProvider
	next trace.TracerProvider
	hook startHook
}

func (p *hookProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return &hookTracer{next: p.next.Tracer(name, opts...), hook: p.hook}
}

type hookTracer struct {
	embedded.Tracer
	next trace.Tracer
	hook startHook
}

func (t *hookTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	ctx, opts = t.hook(ctx, opts)
	return t.next.Start(ctx, name, opts...)
}

// parented gives every root span the span context the process received in
// its environment (TRACEPARENT from lens exec or a launcher) as remote
// parent, so that a process started by a traced parent continues the
// parent's trace without code of its own. A span started with a context
// that already holds a span, or with trace.WithNewRoot(), is left alone.
func parented(parent trace.SpanContext) startHook {
	return func(ctx context.Context, opts []trace.SpanStartOption) (context.Context, []trace.SpanStartOption) {
		if cfg := trace.NewSpanStartConfig(opts...); !cfg.NewRoot() && !trace.SpanContextFromContext(ctx).IsValid() {
			ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
		}
		return ctx, opts
	}
}
