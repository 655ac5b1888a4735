package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/nemolens/lens-go/e2e/internal/jaeger"
)

// TestJaegerSmoke proves the Jaeger harness with the plain OTel SDK only: two
// spans whose resources differ in nv.dl.rank (int 0 / 1) and share
// nemo.run.id=abc come back as typed Process tags, and the v1 tag search
// separates them.
//
// Needs the Jaeger binary: scripts/build-jaeger.sh, or JAEGER_BIN. Without it
// the test is skipped (fails when CI=true).
func TestJaegerSmoke(t *testing.T) {
	// The SDK merges resource.Environment() under the given resource; keep
	// the environment out so the exported resource is exactly ours.
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	t.Setenv("OTEL_SERVICE_NAME", "")

	j := jaeger.StartForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	const service = "probe"
	id0 := sendSmokeSpan(ctx, t, j.OTLPGRPCEndpoint(), service, 0)
	id1 := sendSmokeSpan(ctx, t, j.OTLPGRPCEndpoint(), service, 1)
	if id0 == id1 {
		t.Fatalf("both spans got trace id %s", id0)
	}

	// Both traces arrive; their resources come back as typed Process tags.
	for rank, id := range []string{id0, id1} {
		tr, err := j.Trace(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if tr.TraceID != id || len(tr.Spans) != 1 || tr.Spans[0].OperationName != "smoke" {
			t.Fatalf("trace %s: got id %s with %d span(s)", id, tr.TraceID, len(tr.Spans))
		}
		p, err := tr.SingleProcess()
		if err != nil {
			t.Fatal(err)
		}
		if p.ServiceName != service {
			t.Errorf("rank %d: serviceName = %q, want %q", rank, p.ServiceName, service)
		}
		if len(p.Tags) != 2 {
			t.Errorf("rank %d: process tags = %v, want exactly nv.dl.rank and nemo.run.id", rank, p.Tags)
		}
		tag, ok := p.Tag("nv.dl.rank")
		if !ok {
			t.Fatalf("rank %d: no nv.dl.rank process tag in %v", rank, p.Tags)
		}
		if v, ok := tag.AsInt64(); !ok || tag.Type != jaeger.TypeInt64 || v != int64(rank) {
			t.Errorf("rank %d: nv.dl.rank = %v, want int64(%d)", rank, tag, rank)
		}
		if tag, ok := p.Tag("nemo.run.id"); !ok {
			t.Errorf("rank %d: no nemo.run.id process tag in %v", rank, p.Tags)
		} else if v, ok := tag.AsString(); !ok || v != "abc" {
			t.Errorf("rank %d: nemo.run.id = %v, want string(\"abc\")", rank, tag)
		}
	}

	// The service search sees both.
	all, err := j.WaitTraces(ctx, service, map[string]string{"nemo.run.id": "abc"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := traceIDs(all), sorted(id0, id1); !slices.Equal(got, want) {
		t.Errorf("service %q, nemo.run.id=abc: traces %v, want %v", service, got, want)
	}

	// Tag searches separate the ranks; an absent value finds nothing.
	for _, c := range []struct {
		tags map[string]string
		want []string
	}{
		{map[string]string{"nv.dl.rank": "0"}, sorted(id0)},
		{map[string]string{"nv.dl.rank": "1"}, sorted(id1)},
		{map[string]string{"nv.dl.rank": "0", "nemo.run.id": "abc"}, sorted(id0)},
		{map[string]string{"nv.dl.rank": "7"}, nil},
		{map[string]string{"nemo.run.id": "no-such-run"}, nil},
	} {
		got, err := j.FindTraces(ctx, service, c.tags)
		if err != nil {
			t.Fatal(err)
		}
		if ids := traceIDs(got); !slices.Equal(ids, c.want) {
			t.Errorf("FindTraces(%q, %v) = %v, want %v", service, c.tags, ids, c.want)
		}
	}

	// The v3 API keeps the exact OTLP kinds.
	otlp, err := j.TraceOTLP(ctx, id0)
	if err != nil {
		t.Fatal(err)
	}
	if len(otlp.ResourceSpans) != 1 {
		t.Fatalf("v3 trace %s: %d resourceSpans, want 1", id0, len(otlp.ResourceSpans))
	}
	res := otlp.ResourceSpans[0].Resource
	if v, ok := res.Attr("nv.dl.rank"); !ok || v.IntValue == nil || *v.IntValue != 0 {
		t.Errorf("v3 nv.dl.rank = %v (found %v), want int(0)", v, ok)
	}
	if v, ok := res.Attr("service.name"); !ok || v.StringValue == nil || *v.StringValue != service {
		t.Errorf("v3 service.name = %v (found %v), want string(%q)", v, ok, service)
	}
}

// sendSmokeSpan exports one span named "smoke" over OTLP/gRPC from a tracer
// provider with the resource {service.name, nv.dl.rank=rank,
// nemo.run.id=abc} and returns its trace id.
func sendSmokeSpan(ctx context.Context, t *testing.T, endpoint, service string, rank int) string {
	t.Helper()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	res := resource.NewSchemaless(
		attribute.String("service.name", service),
		attribute.Int("nv.dl.rank", rank),
		attribute.String("nemo.run.id", "abc"),
	)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(res))
	_, span := tp.Tracer("lens-go/e2e/smoke").Start(ctx, "smoke")
	id := span.SpanContext().TraceID().String()
	span.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("rank %d: shutting down the tracer provider: %v", rank, err)
	}
	return id
}

func traceIDs(traces []jaeger.Trace) []string {
	var ids []string
	for _, tr := range traces {
		ids = append(ids, tr.TraceID)
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids ...string) []string {
	slices.Sort(ids)
	return ids
}
