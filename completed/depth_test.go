package completed_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"

	"github.com/nemolens/lens-go/completed"
	"github.com/nemolens/lens-go/internal/traceid"
)

// depthTracer records the depth of the context chain each span starts
// with: the number of context levels its String names.
type depthTracer struct {
	embedded.Tracer
	next  trace.Tracer
	depth []int
}

func (d *depthTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	d.depth = append(d.depth, strings.Count(fmt.Sprint(ctx), ".With"))
	return d.next.Start(ctx, name, opts...)
}

// TestEmitContextDepth: a chain of 200 generations starts every span from a
// context of the same depth, so that each lookup (the span in the context,
// the requested ids) costs the same at every generation: emitting a chain
// is linear in its length (docs/tracing.md#batch-export). On 85caa10 the
// context grew by one level per generation, which made the id generator's
// lookups quadratic. Break: start children from the parent's context
// (trace.ContextWithSpan(pctx, span)).
func TestEmitContextDepth(t *testing.T) {
	t.Parallel()
	var spans []completed.Span
	for i := range 200 {
		s := completed.Span{Name: fmt.Sprint("s", i), Start: time.Unix(1, 0), End: time.Unix(2, 0)}
		if i > 0 {
			s.Parent = fmt.Sprint("s", i-1)
		}
		if i%2 == 0 {
			s.SpanID = trace.SpanID{1, byte(i), byte(i >> 8)}
		}
		spans = append(spans, s)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithIDGenerator(traceid.Generator{}))
	d := &depthTracer{next: tp.Tracer("t")}
	ctx := completed.ContextWithTraceID(context.Background(), trace.TraceID{9})
	if err := completed.Emit(ctx, d, spans); err != nil {
		t.Fatal(err)
	}
	lo, hi := d.depth[0], d.depth[0]
	for _, n := range d.depth {
		lo, hi = min(lo, n), max(hi, n)
	}
	if hi-lo > 2 {
		t.Errorf("context depth from %d to %d over 200 generations, want constant (at most 2 levels apart)", lo, hi)
	}
}

// TestParseEpochSecondsLimits: the last nanosecond an int64 counts parses,
// one more is a range error rather than a time before 1970 (break: drop
// the `!ns.IsInt64()` check of ParseEpochSeconds); the epoch parses, a
// nanosecond before it does not.
func TestParseEpochSecondsLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want time.Time
		err  error
	}{
		{"9223372036.854775807", time.Unix(0, math.MaxInt64), nil},
		{"9223372036.854775808", time.Time{}, completed.ErrTimeRange},
		{"9223372036.854775809", time.Time{}, completed.ErrTimeRange},
		{"0", time.Unix(0, 0), nil},
		{"0.000000001", time.Unix(0, 1), nil},
		{"-0.000000001", time.Time{}, completed.ErrTimeRange},
	} {
		got, err := completed.ParseEpochSeconds(tc.in)
		if !errors.Is(err, tc.err) || err == nil && !got.Equal(tc.want) {
			t.Errorf("ParseEpochSeconds(%s) = %v, %v; want %v, %v", tc.in, got.UTC(), err, tc.want.UTC(), tc.err)
		}
	}
}
