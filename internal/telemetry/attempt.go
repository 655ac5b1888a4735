package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/trace"

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

// linked adds the link to the previous attempt to every root span that goes
// into the attempt's trace: a span started without a span in its context
// (or with trace.WithNewRoot) and without a trace id requested through the
// context (docs/tracing.md#attempt-links).
func linked(link trace.Link) startHook {
	return func(ctx context.Context, opts []trace.SpanStartOption) (context.Context, []trace.SpanStartOption) {
		if cfg := trace.NewSpanStartConfig(opts...); cfg.NewRoot() || !trace.SpanContextFromContext(ctx).IsValid() {
			if _, requested := traceid.TraceIDFrom(ctx); !requested {
				opts = append(opts[:len(opts):len(opts)], trace.WithLinks(link))
			}
		}
		return ctx, opts
	}
}
