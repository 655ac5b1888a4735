package lens_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/environ"
)

// TestSpanOpenAtShutdown: a span still open when Shutdown runs (defer
// span.End() registered before defer h.Shutdown(…), so that Shutdown runs
// first) is counted as Open, before and after Shutdown, and stays counted
// when it ends afterwards; it is never exported. An unsampled open span is
// not counted.
func TestSpanOpenAtShutdown(t *testing.T) {
	t.Parallel()
	exp := keepSpans{tracetest.NewInMemoryExporter()}
	opts := append(quietOptions(t, environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=0"}),
		lens.WithSpanExporter(exp), lens.WithAllowReinit(), lens.WithoutGlobals())
	h, err := lens.Setup(context.Background(), enabledConfig(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	tr := h.Tracer("open")
	_, done := tr.Start(context.Background(), "done")
	done.End()
	_, open := tr.Start(context.Background(), "open")
	unsampledParent := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, Remote: true, // not sampled
	}))
	_, unsampled := tr.Start(unsampledParent, "unsampled")
	if got, want := h.SpanCounts(), (lens.SpanCounts{Ended: 1, Pending: 1, Open: 1}); got != want {
		t.Errorf("before Shutdown: counts %+v, want %+v", got, want)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	want := lens.SpanCounts{Ended: 1, Exported: 1, Open: 1}
	if got := h.SpanCounts(); got != want {
		t.Errorf("after Shutdown: counts %+v, want %+v", got, want)
	}
	open.End() // after Shutdown: the SDK does not report it
	unsampled.End()
	if got := h.SpanCounts(); got != want {
		t.Errorf("after the open span ended: counts %+v, want %+v (still counted once)", got, want)
	}
	if spans := exp.GetSpans(); len(spans) != 1 || spans[0].Name != "done" {
		t.Errorf("exported %v, want only the span that ended before Shutdown", spans)
	}
}

// keepSpans keeps what it received after Shutdown (the in-memory
// exporter's Shutdown forgets it).
type keepSpans struct{ *tracetest.InMemoryExporter }

func (keepSpans) Shutdown(context.Context) error { return nil }
