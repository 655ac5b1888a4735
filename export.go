package lens

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The OpenTelemetry Go SDK's providers merge resource.Environment() — the
// SDK's own parse of OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME from the
// process environment — underneath the resource they are given (SPEC §11.2).
// There is no provider option that skips the merge. Lens therefore puts
// every carrier key, decoded by its own parser, into its resource (so Lens
// values win on every key both parsers produce), and the exporters Lens
// wraps replace the merged resource by Lens's own on the way out, so keys
// that only the SDK's parser produces never leave the process on spans or
// on metrics read by Lens's periodic reader.

// spanQueue is the accounting shared by the drop gate and the wrapped span
// exporter: pending counts the sampled spans handed to the batch processor
// and not yet returned from an export (queued, batched or being exported).
type spanQueue struct {
	limit   int64
	pending atomic.Int64
	dropped atomic.Int64
}

// spanPipeline is what Lens puts between a tracer provider and its span
// exporter: the drop gate (the provider's span processor, in front of the
// SDK's batch processor) and the exporter wrapper behind it, sharing one
// queue account — one allocation for the three.
type spanPipeline struct {
	q    spanQueue
	gate gateProcessor
	exp  spanExporter
}

// gateProcessor sits in front of the SDK's BatchSpanProcessor. The batch
// processor never blocks (WithBlocking is not set) but does not report how
// many spans it dropped; the gate drops — and counts — a span when limit
// spans are already pending, and sizes the batch processor's queue above
// the limit so that the batch processor itself never has to drop.
type gateProcessor struct {
	next    sdktrace.SpanProcessor
	q       *spanQueue
	stopped atomic.Bool
}

func (g *gateProcessor) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	g.next.OnStart(ctx, s)
}

func (g *gateProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	// The batch processor ignores unsampled spans and spans ended after its
	// shutdown; so does the gate, so that pending only counts spans that
	// will reach the exporter.
	if g.stopped.Load() || !s.SpanContext().IsSampled() {
		return
	}
	if g.q.pending.Add(1) > g.q.limit {
		g.q.pending.Add(-1)
		g.q.dropped.Add(1)
		return
	}
	g.next.OnEnd(s)
}

func (g *gateProcessor) ForceFlush(ctx context.Context) error { return g.next.ForceFlush(ctx) }

func (g *gateProcessor) Shutdown(ctx context.Context) error {
	g.stopped.Store(true)
	return g.next.Shutdown(ctx)
}

// spanExporter wraps the span exporter: it releases the gate's pending
// count when an export returns and gives every span exactly the Lens
// resource.
type spanExporter struct {
	next sdktrace.SpanExporter
	res  *resource.Resource
	q    *spanQueue
	// same caches the last provider resource found equal to res, so the
	// comparison runs once per provider, not once per batch.
	same atomic.Pointer[resource.Resource]
}

func (e *spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	defer e.q.pending.Add(-int64(len(spans)))
	return e.next.ExportSpans(ctx, e.withResource(spans))
}

func (e *spanExporter) withResource(spans []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for i, s := range spans {
		r := s.Resource()
		if r == e.res || r == e.same.Load() {
			if out != nil {
				out[i] = s
			}
			continue
		}
		if r != nil && r.Equal(e.res) {
			e.same.Store(r)
			if out != nil {
				out[i] = s
			}
			continue
		}
		if out == nil {
			out = make([]sdktrace.ReadOnlySpan, len(spans))
			copy(out, spans[:i])
		}
		out[i] = resourceSpan{ReadOnlySpan: s, res: e.res}
	}
	if out == nil {
		return spans
	}
	return out
}

func (e *spanExporter) Shutdown(ctx context.Context) error { return e.next.Shutdown(ctx) }

// resourceSpan is a span whose Resource is replaced.
type resourceSpan struct {
	sdktrace.ReadOnlySpan
	res *resource.Resource
}

func (s resourceSpan) Resource() *resource.Resource { return s.res }

// metricExporter gives every export exactly the Lens resource.
type metricExporter struct {
	sdkmetric.Exporter
	res *resource.Resource
}

func (e metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	// rm belongs to the periodic reader, which sets its Resource again on
	// every collection.
	rm.Resource = e.res
	return e.Exporter.Export(ctx, rm)
}

// syncWriter serialises the console exporters' writes.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}
