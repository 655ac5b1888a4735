package telemetry

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tests of the span pipeline's rules that the mutation check of
// internal/telemetry found unpinned (docs/testing.md#mutation-telemetry-rest):
// when the worker is woken, what Shutdown reports, and how spans abandoned
// at a Shutdown deadline are counted. Each comment names the one-line change
// that makes the test fail. The exporter here is driven by the test, call by
// call, so that no test depends on how fast the worker runs.

// steppedCall is one ExportSpans call of a steppedExporter, held until the
// test answers it.
type steppedCall struct {
	ctx   context.Context
	spans int
	batch []sdktrace.ReadOnlySpan
	reply chan error
}

// steppedExporter hands each export to the test on calls and returns what
// the test replies. With watchCtx the call also returns ctx's error when
// ctx is done first; without it, only the reply ends the call (an exporter
// that does not honour its context). Shutdown returns shutdown(ctx).
type steppedExporter struct {
	calls    chan steppedCall
	watchCtx bool
	shutdown func(context.Context) error
}

func newSteppedExporter(watchCtx bool) *steppedExporter {
	return &steppedExporter{calls: make(chan steppedCall), watchCtx: watchCtx}
}

func (e *steppedExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	c := steppedCall{ctx: ctx, spans: len(spans), batch: spans, reply: make(chan error, 1)}
	select {
	case e.calls <- c:
	case <-ctx.Done(): // a test that no longer takes calls (it failed)
		return ctx.Err()
	}
	if !e.watchCtx {
		return <-c.reply
	}
	select {
	case err := <-c.reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *steppedExporter) Shutdown(ctx context.Context) error {
	if e.shutdown == nil {
		return nil
	}
	return e.shutdown(ctx)
}

// next returns the exporter's next call; the test fails when none comes
// within a minute (only a broken pipeline takes that long).
func (e *steppedExporter) next(t *testing.T, what string) steppedCall {
	t.Helper()
	select {
	case c := <-e.calls:
		return c
	case <-time.After(time.Minute):
		t.Fatalf("after a minute, no export: %s", what)
		return steppedCall{}
	}
}

// shutdownAsync runs p.Shutdown(ctx) and returns its result on a channel,
// once p has begun to stop (p.stopping, read under p.mu).
func shutdownAsync(t *testing.T, p *spanPipeline, ctx context.Context) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.Shutdown(ctx) }()
	waitUntil(t, "stopping", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.stopping
	})
	return done
}

// steppedPipeline is a pipeline in front of exp with batches of batch
// spans and its schedule a day away, so that only full batches, flushes and
// Shutdown export.
func steppedPipeline(t *testing.T, exp *steppedExporter, batch int, onError func(error)) (*spanPipeline, trace.Tracer) {
	t.Helper()
	s := testSettings(16, batch)
	s.BSPScheduleDelay = MaxDuration
	return newTestPipeline(t, exp, s, onError)
}

// TestFullBatchWakesTheWorker: with a schedule delay of a day, ending
// maxBatch spans exports them at once, without a flush. Break:
// spans.go `len(p.queue)-p.head >= p.maxBatch` as `>` or as `<` (with a
// batch of 1 neither ever wakes the worker).
func TestFullBatchWakesTheWorker(t *testing.T) {
	t.Parallel()
	exp := newSteppedExporter(true)
	_, tr := steppedPipeline(t, exp, 1, nil)
	endSpans(tr, 1)
	c := exp.next(t, "a full batch of 1 span, no flush, the schedule a day away")
	if c.spans != 1 {
		t.Errorf("the export holds %d spans, want the batch of 1", c.spans)
	}
	c.reply <- nil
}

// TestScheduleDelayZeroExportsAtOnce: OTEL_BSP_SCHEDULE_DELAY=0 means no
// wait (as the Go SDK's BatchSpanProcessor): one span, far from a full
// batch, is exported without a flush; spans that end while an export runs
// go out together in the next one. Break: `wake := p.delay == 0 || …`
// without `p.delay == 0 ||` (the span waited for a full batch of 512 or
// the end of the process).
func TestScheduleDelayZeroExportsAtOnce(t *testing.T) {
	t.Parallel()
	exp := newSteppedExporter(true)
	s := testSettings(2048, 512)
	s.BSPScheduleDelay = 0
	_, tr := newTestPipeline(t, exp, s, nil)
	endSpans(tr, 1)
	c := exp.next(t, "one span with a schedule delay of 0")
	if c.spans != 1 {
		t.Errorf("first export holds %d spans, want 1", c.spans)
	}
	endSpans(tr, 3) // while the first export runs
	c.reply <- nil
	c = exp.next(t, "the 3 spans ended during the first export")
	if c.spans != 3 {
		t.Errorf("second export holds %d spans, want the 3 that queued during the first", c.spans)
	}
	c.reply <- nil
}

// shutdownAfterFinalExport ends a span (exported at once: a batch of 1)
// and a second behind it, begins Shutdown, answers the first export with
// reply (an export that returns after Shutdown began: a final one), and
// ends Shutdown's context while the second export runs. It returns
// Shutdown's error.
func shutdownAfterFinalExport(t *testing.T, exp *steppedExporter, reply error) error {
	t.Helper()
	p, tr := steppedPipeline(t, exp, 1, nil)
	endSpans(tr, 1)
	first := exp.next(t, "span 1")
	endSpans(tr, 1) // queued behind the export in progress
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := shutdownAsync(t, p, ctx)
	first.reply <- reply
	exp.next(t, "span 2, at Shutdown")
	cancel() // Shutdown's deadline, while span 2's export runs
	return <-done
}

// TestShutdownJoinsFinalErrorAndDeadline: a final export fails, and
// Shutdown's context ends while the next export runs: Shutdown returns both
// errors. Break: spans.go `(err == nil || !errors.Is(p.finalErr, err))` as
// `&&` (the export's error is lost behind the deadline).
func TestShutdownJoinsFinalErrorAndDeadline(t *testing.T) {
	t.Parallel()
	err := shutdownAfterFinalExport(t, newSteppedExporter(true), errExport)
	if !errors.Is(err, errExport) || !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown = %v, want the final export's error and context.Canceled", err)
	}
}

// TestShutdownNamesAnErrorOnce: when the final export failed with the same
// error as Shutdown's context (context.Canceled), and the exporter's own
// Shutdown returns it as well, Shutdown's error says it once. Breaks:
// spans.go `p.finalErr != nil && (err == nil || …)` with `err == nil` as
// `err != nil`, or with its `&&` as `||`; `serr != nil && !errors.Is(serr,
// ctx.Err())` with `&&` as `||` (each joins the error to itself).
func TestShutdownNamesAnErrorOnce(t *testing.T) {
	t.Parallel()
	exp := newSteppedExporter(true)
	exp.shutdown = func(ctx context.Context) error { return ctx.Err() }
	err := shutdownAfterFinalExport(t, exp, context.Canceled)
	if !errors.Is(err, context.Canceled) || err.Error() != context.Canceled.Error() {
		t.Errorf("Shutdown = %q, want %q, said once", err, context.Canceled)
	}
}

// TestShutdownReportsExporterShutdownError: the exporter's Shutdown error
// is Shutdown's. Break: spans.go `serr != nil && …` as `serr == nil`.
func TestShutdownReportsExporterShutdownError(t *testing.T) {
	t.Parallel()
	errShut := errors.New("exporter shutdown failed on purpose")
	exp := newSteppedExporter(true)
	exp.shutdown = func(context.Context) error { return errShut }
	p, _ := newTestPipeline(t, exp, testSettings(16, 1), nil)
	if err := p.Shutdown(context.Background()); !errors.Is(err, errShut) {
		t.Errorf("Shutdown = %v, want the exporter's %v", err, errShut)
	}
}

// TestShutdownDeadlineCountsQueuedAsFailed: Shutdown's context ends while an
// export of 2 spans runs (an exporter that ignores its context) and 3 more
// are queued behind it, after the 2 in the queue: the 3 count as failed at
// once, the 2 stay pending until their export returns, and then every
// accepted span has settled. Breaks: spans.go abandonQueued's
// `len(p.queue) - p.head` as `+` (7 failed, -2 pending); `p.settled +=
// uint64(n)` as `-=` (settled no longer equals accepted).
func TestShutdownDeadlineCountsQueuedAsFailed(t *testing.T) {
	t.Parallel()
	exp := newSteppedExporter(false)
	p, tr := steppedPipeline(t, exp, 2, nil)
	endSpans(tr, 2)
	c := exp.next(t, "a full batch of 2")
	endSpans(tr, 5) // queued behind the export: the queue's head is 0
	c.reply <- nil
	c = exp.next(t, "the next batch of 2") // taken from the front: head 2, length 5
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown = %v, want context.Canceled", err)
	}
	if got, want := p.Counts(), (SpanCounts{Ended: 7, Exported: 2, Failed: 3, Pending: 2}); got != want {
		t.Errorf("counts at the deadline %s, want %s", countsString(got), countsString(want))
	}
	c.reply <- nil
	<-p.stopped
	if got, want := p.Counts(), (SpanCounts{Ended: 7, Exported: 4, Failed: 3}); got != want {
		t.Errorf("counts after the export returned %s, want %s", countsString(got), countsString(want))
	}
	p.mu.Lock()
	settled, accepted := p.settled, p.accepted
	p.mu.Unlock()
	if settled != accepted {
		t.Errorf("settled %d of %d accepted spans, want all", settled, accepted)
	}
}

// TestExportErrorsKeptInOrder: an export that fails before Shutdown is
// reported by FirstError, and stays the first when a later one fails too;
// it is not Shutdown's error, which reports the final exports only.
// Breaks: spans.go `err != nil && final && p.finalErr == nil` with either
// `&&` as `||`; `err != nil && p.firstErr == nil` as `||`.
func TestExportErrorsKeptInOrder(t *testing.T) {
	t.Parallel()
	errLater := errors.New("a later export failed on purpose")
	exp := newSteppedExporter(true)
	var mu sync.Mutex
	var reported []error
	p, tr := steppedPipeline(t, exp, 1, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
	})
	endSpans(tr, 1)
	exp.next(t, "span 1").reply <- errExport
	endSpans(tr, 1)
	exp.next(t, "span 2").reply <- errLater
	endSpans(tr, 1)
	exp.next(t, "span 3").reply <- nil
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatalf("ForceFlush: %v", err)
	}
	if err := p.FirstError(); !errors.Is(err, errExport) || errors.Is(err, errLater) {
		t.Errorf("FirstError = %v, want the first failure %v", err, errExport)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown = %v, want nil: no final export failed", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 2 {
		t.Errorf("reported %q, want the two background failures", reported)
	}
}

// TestExportTimeoutAndResource: each export runs under the export timeout
// (and without one when it is 0), and every exported span carries the
// pipeline's resource, not the provider's. Breaks: spans.go `p.timeout > 0`
// as `<=` (no deadline) or as `>=` (an export of timeout 0 cancelled at
// once); withResource's `s.Resource() != res` as `==`.
func TestExportTimeoutAndResource(t *testing.T) {
	t.Parallel()
	for _, timeout := range []time.Duration{MaxDuration, 0} {
		exp := newSteppedExporter(true)
		s := testSettings(16, 1)
		s.BSPScheduleDelay = MaxDuration
		s.BSPExportTimeout = timeout
		p, tr := newTestPipeline(t, exp, s, nil)
		endSpans(tr, 1)
		c := exp.next(t, "span 1")
		if _, ok := c.ctx.Deadline(); ok != (timeout > 0) || c.ctx.Err() != nil {
			t.Errorf("timeout %v: the export's context has a deadline: %v (err %v); want %v", timeout, ok, c.ctx.Err(), timeout > 0)
		}
		for _, sp := range c.batch {
			if sp.Resource() != p.res.Load() {
				t.Errorf("timeout %v: a span exported with the resource %v, not the pipeline's", timeout, sp.Resource())
			}
		}
		c.reply <- nil
	}
}
