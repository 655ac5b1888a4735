package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/environ"
)

// TestEnvironmentParent: with TRACEPARENT in the environment, only root
// spans take it as their (remote) parent. A span started under a local span
// keeps the local span as its parent, in the local trace, and a span
// started with trace.WithNewRoot starts a trace of its own with no parent.
func TestEnvironmentParent(t *testing.T) {
	t.Parallel()
	const envTrace, envSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	env := environ.Map{"TRACEPARENT": "00-" + envTrace + "-" + envSpan + "-01"}
	exp := tracetest.NewInMemoryExporter()
	s := testSettings(2048, 512)
	s.Propagator = DefaultPropagator()
	tr, err := NewTracing(context.Background(), resource.Empty(), s, TracingOptions{Exporter: exp, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	if got := tr.Parent(); got.TraceID().String() != envTrace || got.SpanID().String() != envSpan || !got.IsRemote() {
		t.Fatalf("Parent() = %v, want the environment's", got)
	}
	tracer := tr.Provider().Tracer("test")

	ctx, root := tracer.Start(context.Background(), "root")
	_, child := tracer.Start(ctx, "child")
	_, grandchild := tracer.Start(trace.ContextWithSpan(context.Background(), child), "grandchild")
	_, fresh := tracer.Start(context.Background(), "new root", trace.WithNewRoot())
	_, freshUnderLocal := tracer.Start(ctx, "new root under a local span", trace.WithNewRoot())
	for _, s := range []trace.Span{freshUnderLocal, fresh, grandchild, child, root} {
		s.End()
	}
	if err := tr.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range exp.GetSpans().Snapshots() {
		spans[s.Name()] = s
	}
	if len(spans) != 5 {
		t.Fatalf("%d spans exported, want 5", len(spans))
	}
	r := spans["root"]
	if r.SpanContext().TraceID().String() != envTrace || r.Parent().SpanID().String() != envSpan || !r.Parent().IsRemote() {
		t.Errorf("root: trace %s, parent %s (remote %v); want the environment's trace and span as remote parent",
			r.SpanContext().TraceID(), r.Parent().SpanID(), r.Parent().IsRemote())
	}
	for name, parent := range map[string]sdktrace.ReadOnlySpan{"child": r, "grandchild": spans["child"]} {
		c := spans[name]
		if c.SpanContext().TraceID() != r.SpanContext().TraceID() || c.Parent().SpanID() != parent.SpanContext().SpanID() || c.Parent().IsRemote() {
			t.Errorf("%s: trace %s, parent %s (remote %v); want the local parent %s (%s)",
				name, c.SpanContext().TraceID(), c.Parent().SpanID(), c.Parent().IsRemote(), parent.SpanContext().SpanID(), parent.Name())
		}
	}
	for _, name := range []string{"new root", "new root under a local span"} {
		n := spans[name]
		if n.SpanContext().TraceID().String() == envTrace || n.SpanContext().TraceID() == r.SpanContext().TraceID() || n.Parent().IsValid() {
			t.Errorf("%s: trace %s, parent %v; want a new trace without parent", name, n.SpanContext().TraceID(), n.Parent())
		}
	}
}
