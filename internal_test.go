package lens

import (
	"context"
	"runtime/debug"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestModuleVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"main-devel", debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "(devel)"}}, "(devel)"},
		{"main-tagged", debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v1.2.3"}}, "v1.2.3"},
		{"main-empty", debug.BuildInfo{Main: debug.Module{Path: ModulePath}}, DevelVersion},
		{"dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: "other", Version: "v9"}, {Path: ModulePath, Version: "v0.4.0"}}}, "v0.4.0"},
		{"replaced", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: ModulePath, Version: "v0.4.0", Replace: &debug.Module{Path: "../lens-go", Version: ""}}}}, "v0.4.0"},
		{"replaced-versioned", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: ModulePath, Version: "v0.4.0", Replace: &debug.Module{Path: "fork", Version: "v0.4.1"}}}}, "v0.4.1"},
		{"absent", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"}}, DevelVersion},
	} {
		if got := moduleVersion(&tc.info); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if Version() == "" {
		t.Error("empty Version()")
	}
}

type countingProcessor struct{ ended int }

func (p *countingProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (p *countingProcessor) OnEnd(sdktrace.ReadOnlySpan)                     { p.ended++ }
func (p *countingProcessor) Shutdown(context.Context) error                  { return nil }
func (p *countingProcessor) ForceFlush(context.Context) error                { return nil }

func span(sampled bool) sdktrace.ReadOnlySpan {
	var flags trace.TraceFlags
	if sampled {
		flags = trace.FlagsSampled
	}
	return tracetest.SpanStub{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: flags})}.Snapshot()
}

// TestGate: unsampled spans and spans after shutdown are neither passed on
// nor counted; sampled spans beyond the limit are dropped and counted.
func TestGate(t *testing.T) {
	t.Parallel()
	next := &countingProcessor{}
	q := &spanQueue{limit: 2}
	g := &gateProcessor{next: next, q: q}
	g.OnEnd(span(false))
	g.OnEnd(span(true))
	g.OnEnd(span(true))
	g.OnEnd(span(true))
	if next.ended != 2 || q.pending.Load() != 2 || q.dropped.Load() != 1 {
		t.Errorf("passed %d pending %d dropped %d, want 2 2 1", next.ended, q.pending.Load(), q.dropped.Load())
	}
	e := &spanExporter{next: tracetest.NewInMemoryExporter(), res: resource.Empty(), q: q}
	if err := e.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{span(true), span(true)}); err != nil {
		t.Fatal(err)
	}
	if q.pending.Load() != 0 {
		t.Errorf("pending %d after export", q.pending.Load())
	}
	_ = g.Shutdown(context.Background())
	g.OnEnd(span(true))
	if next.ended != 2 || q.pending.Load() != 0 {
		t.Errorf("span after shutdown passed on")
	}
}

// TestSpanExporterResource: spans get exactly the Lens resource; an equal
// resource is passed through without copying.
func TestSpanExporterResource(t *testing.T) {
	t.Parallel()
	lensRes := resource.NewSchemaless(attribute.String("k", "lens"))
	mem := tracetest.NewInMemoryExporter()
	e := &spanExporter{next: mem, res: lensRes, q: &spanQueue{}}

	other := tracetest.SpanStub{Resource: resource.NewSchemaless(attribute.String("k", "lens"), attribute.String("\x1fk", "v"))}.Snapshot()
	equal := tracetest.SpanStub{Resource: resource.NewSchemaless(attribute.String("k", "lens"))}.Snapshot()
	in := []sdktrace.ReadOnlySpan{equal, other}
	if out := e.withResource([]sdktrace.ReadOnlySpan{equal}); isWrapped(out[0]) {
		t.Error("an equal resource was replaced")
	}
	if out := e.withResource([]sdktrace.ReadOnlySpan{equal, other}); isWrapped(out[0]) || !isWrapped(out[1]) {
		t.Error("only the differing span should be wrapped")
	}
	if err := e.ExportSpans(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	for i, s := range mem.GetSpans() {
		if !s.Resource.Equal(lensRes) {
			t.Errorf("span %d resource %v", i, s.Resource)
		}
	}
	if isWrapped(in[1]) {
		t.Error("the input slice was modified")
	}
}

func isWrapped(s sdktrace.ReadOnlySpan) bool {
	_, ok := s.(resourceSpan)
	return ok
}

func TestSDKOnlyKeys(t *testing.T) {
	t.Parallel()
	res := resource.NewSchemaless(attribute.String("a", "1"), attribute.String("c", "2"), attribute.String("k", "v"))
	got := sdkOnlyKeys(" a=1, \x1fk=v,b,=x, c =2 ,\x1fk=w,\x1ck\x1d=z,d=%zz,", res)
	want := []string{`"\x1ck\x1d"`, `"\x1fk"`, `"d"`}
	if len(got) != len(want) {
		t.Fatalf("sdkOnlyKeys = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sdkOnlyKeys = %q, want %q", got, want)
		}
	}
	if got := sdkOnlyKeys("", res); len(got) != 0 {
		t.Errorf("empty carrier: %q", got)
	}
}
