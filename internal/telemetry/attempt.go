package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"

	"github.com/nemolens/lens-go/internal/traceid"
)

// TracePerAttemptEnv turns the per-attempt mode on
// (docs/tracing.md#trace-per-attempt): a boolean, off when unset. Its name
// does not follow the configuration prefix.
const TracePerAttemptEnv = "NEMO_LENS_TRACE_PER_ATTEMPT"

// NoAttemptWarning is said once when the per-attempt mode is on and the
// process has no attempt identity.
const NoAttemptWarning = TracePerAttemptEnv + " is on, but this process has no job attempt identity " +
	"(no SLURM_JOB_ID or SLURM_ARRAY_JOB_ID, no configured run id, no TORCHELASTIC_RUN_ID): its traces get random ids"

// attemptProvider adds the link to the previous attempt to every root span
// that goes into the attempt's trace: a span started without a span in its
// context (or with trace.WithNewRoot) and without a trace id requested
// through the context (docs/tracing.md#attempt-links).
type attemptProvider struct {
	embedded.TracerProvider
	next trace.TracerProvider
	link trace.Link
}

func (p *attemptProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return &attemptTracer{next: p.next.Tracer(name, opts...), link: p.link}
}

type attemptTracer struct {
	embedded.Tracer
	next trace.Tracer
	link trace.Link
}

func (t *attemptTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if cfg := trace.NewSpanStartConfig(opts...); cfg.NewRoot() || !trace.SpanContextFromContext(ctx).IsValid() {
		if _, requested := traceid.TraceIDFrom(ctx); !requested {
			opts = append(opts[:len(opts):len(opts)], trace.WithLinks(t.link))
		}
	}
	return t.next.Start(ctx, name, opts...)
}
