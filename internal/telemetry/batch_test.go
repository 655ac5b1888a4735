package telemetry

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// newBatchPipeline is newTestPipeline in the batch mode until batch is done.
func newBatchPipeline(t *testing.T, exp sdktrace.SpanExporter, s *Settings, batch context.Context) (*spanPipeline, *sdktrace.TracerProvider) {
	t.Helper()
	p := newSpanPipeline(exp, resource.Empty(), s, nil, nil, NewDiagnostics(nil).InvalidUTF8)
	p.batch = batch
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return p, tp
}

// TestBatchModeNeverDrops: in the batch mode, ending 1,000 spans into a
// queue of 4 (batches of 2, at, below and above the queue's size) behind
// a slow exporter waits for room: every span is exported, none dropped
// (docs/tracing.md#batch-export). Break: drop the waitRoomLocked call in
// OnEnd.
func TestBatchModeNeverDrops(t *testing.T) {
	t.Parallel()
	for _, qb := range [][2]int{{4, 2}, {4, 4}, {1, 1}, {5, 4}} {
		exp := &countingExporter{delay: 50 * time.Microsecond}
		p, tp := newBatchPipeline(t, exp, testSettings(qb[0], qb[1]), context.Background())
		endSpans(tp.Tracer("t"), 1000)
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if c := p.Counts(); c.Exported != 1000 || c.Dropped != 0 || exp.accepted.Load() != 1000 {
			t.Errorf("queue %d batch %d: %+v, exporter took %d; want 1000 exported", qb[0], qb[1], c, exp.accepted.Load())
		}
	}
}

// TestBatchModeEndsWithItsContext: when the batch context is done, a span
// that finds the queue full is dropped and counted, and ending spans no
// longer waits; the first failed export is kept as the reason.
func TestBatchModeEndsWithItsContext(t *testing.T) {
	t.Parallel()
	exp := &countingExporter{block: true}
	ctx, cancel := context.WithCancel(context.Background())
	p, tp := newBatchPipeline(t, exp, testSettings(2, 2), ctx)
	tr := tp.Tracer("t")
	endSpans(tr, 2) // the batch the exporter blocks on
	cancel()
	endSpans(tr, 5)
	sctx, scancel := context.WithTimeout(context.Background(), 0)
	defer scancel()
	_ = p.Shutdown(sctx) // the SDK's Shutdown skips its processors when ctx is done
	c := waitSettledCounts(t, p)
	if c.Ended != 7 || c.Exported != 0 || c.Dropped+c.Failed != 7 || c.Dropped < 3 {
		t.Errorf("%+v: want 7 ended, none exported, at least 3 dropped", c)
	}
}

// TestFirstExportError: the first failed export's error is the pipeline's
// reason; later successes do not clear it.
func TestFirstExportError(t *testing.T) {
	t.Parallel()
	exp := &countingExporter{fail: func(call int) bool { return call == 1 }}
	p, tp := newBatchPipeline(t, exp, testSettings(2, 2), context.Background())
	endSpans(tp.Tracer("t"), 6)
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.FirstError(); !errors.Is(err, errExport) {
		t.Errorf("FirstError %v, want %v", err, errExport)
	}
}
