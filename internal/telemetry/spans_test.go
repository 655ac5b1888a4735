package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/environ"
)

// Fault tests of the span pipeline (white-box): every span is accounted for,
// exactly, whatever the exporter and the callers do. The exporters here are
// test doubles of the SpanExporter interface only; the collector faults
// (refused, silent, failing collectors) are tested end to end, with real
// OTLP exporters and real listeners, in the root package (faults_test.go).

// countingExporter is a span exporter that takes delay per export (or
// until ctx is done), fails the exports for which fail returns true, and
// counts the spans of the exports it accepted and of those it failed.
type countingExporter struct {
	delay time.Duration
	block bool // wait for ctx instead of delay
	fail  func(call int) bool

	calls    atomic.Int64
	accepted atomic.Int64
	rejected atomic.Int64
	shutdown atomic.Bool
}

var errExport = errors.New("export failed on purpose")

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	call := int(e.calls.Add(1))
	if e.block {
		<-ctx.Done()
		e.rejected.Add(int64(len(spans)))
		return ctx.Err()
	}
	if e.delay > 0 {
		select {
		case <-time.After(e.delay):
		case <-ctx.Done():
			e.rejected.Add(int64(len(spans)))
			return ctx.Err()
		}
	}
	if e.fail != nil && e.fail(call) {
		e.rejected.Add(int64(len(spans)))
		return errExport
	}
	e.accepted.Add(int64(len(spans)))
	return nil
}

func (e *countingExporter) Shutdown(context.Context) error {
	e.shutdown.Store(true)
	return nil
}

func testSettings(queue, batch int) *Settings {
	return &Settings{
		BSPMaxQueueSize:   queue,
		BSPMaxExportBatch: batch,
		BSPScheduleDelay:  DefaultBSPScheduleDelay,
		BSPExportTimeout:  DefaultBSPExportTimeout,
	}
}

// newTestPipeline returns a pipeline in front of exp and a tracer whose
// spans go through it; the provider is shut down when the test ends.
func newTestPipeline(t *testing.T, exp sdktrace.SpanExporter, s *Settings, onError func(error)) (*spanPipeline, trace.Tracer) {
	t.Helper()
	p := newSpanPipeline(exp, resource.Empty(), s, nil, onError, NewDiagnostics(nil).InvalidUTF8)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = tp.Shutdown(ctx)
	})
	return p, tp.Tracer("test")
}

func endSpans(tr trace.Tracer, n int) {
	for range n {
		_, s := tr.Start(context.Background(), "s")
		s.End()
	}
}

// checkCounts checks the invariants that hold at every moment.
func checkCounts(c SpanCounts, maxPending int64) error {
	switch {
	case c.Ended != c.Exported+c.Dropped+c.Failed+c.Rejected+c.Pending:
		return errors.New("Ended != Exported + Dropped + Failed + Rejected + Pending")
	case c.Pending < 0:
		return errors.New("Pending < 0")
	case c.Pending > maxPending:
		return errors.New("Pending exceeds the queue plus the batch being exported")
	case c.Exported < 0 || c.Dropped < 0 || c.Failed < 0:
		return errors.New("a negative counter")
	}
	return nil
}

// waitSettledCounts polls until nothing is pending (the export abandoned by
// a Shutdown deadline still returns and is counted afterwards).
func waitSettledCounts(t *testing.T, p *spanPipeline) SpanCounts {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c := p.Counts()
		if c.Pending == 0 || time.Now().After(deadline) {
			return c
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFlushStormAccounting: 300 concurrent ForceFlush callers (three calls
// each) against a slow exporter while four producers end 12,000 spans into
// a queue of 256. Every ForceFlush returns nil, the counters satisfy the
// equation at every sample, and at the end each span is exported or dropped
// exactly as the exporter saw it. Afterwards a full queue of new spans is
// accepted and exported: flushing leaked no capacity.
func TestFlushStormAccounting(t *testing.T) {
	t.Parallel()
	const (
		queue, batch = 256, 64
		producers    = 4
		perProducer  = 3000
		flushers     = 300
	)
	exp := &countingExporter{delay: 100 * time.Microsecond}
	p, tr := newTestPipeline(t, exp, testSettings(queue, batch), nil)

	var sampleErr atomic.Value
	stopSampling := make(chan struct{})
	sampled := make(chan int)
	go func() {
		n := 0
		var prev SpanCounts
		for {
			select {
			case <-stopSampling:
				sampled <- n
				return
			default:
			}
			c := p.Counts()
			n++
			if err := checkCounts(c, queue+batch); err != nil {
				sampleErr.CompareAndSwap(nil, err.Error()+": "+countsString(c))
			}
			if c.Ended < prev.Ended || c.Exported < prev.Exported || c.Dropped < prev.Dropped || c.Failed < prev.Failed {
				sampleErr.CompareAndSwap(nil, "a counter went down: "+countsString(prev)+" then "+countsString(c))
			}
			prev = c
		}
	}()

	var wg sync.WaitGroup
	for range producers {
		wg.Go(func() { endSpans(tr, perProducer) })
	}
	var flushErrs atomic.Int64
	var firstFlushErr atomic.Value
	for range flushers {
		wg.Go(func() {
			for range 3 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				err := p.ForceFlush(ctx)
				cancel()
				if err != nil {
					flushErrs.Add(1)
					firstFlushErr.CompareAndSwap(nil, err.Error())
				}
			}
		})
	}
	wg.Wait()
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatalf("final ForceFlush: %v", err)
	}
	close(stopSampling)
	samples := <-sampled
	if v := sampleErr.Load(); v != nil {
		t.Errorf("accounting broken while spans were ended and flushed: %v", v)
	}
	if n := flushErrs.Load(); n > 0 {
		t.Errorf("%d of %d ForceFlush calls failed, first: %v", n, 3*flushers, firstFlushErr.Load())
	}
	c := p.Counts()
	t.Logf("after the storm (%d samples): %s; exporter calls %d", samples, countsString(c), exp.calls.Load())
	want := SpanCounts{Ended: producers * perProducer, Exported: exp.accepted.Load(), Dropped: producers*perProducer - exp.accepted.Load()}
	if c != want {
		t.Errorf("counts %s, want %s (the exporter accepted %d spans, rejected %d)", countsString(c), countsString(want), exp.accepted.Load(), exp.rejected.Load())
	}

	// No capacity leaked: a whole queue of new spans is accepted.
	endSpans(tr, queue)
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatalf("ForceFlush after the storm: %v", err)
	}
	after := p.Counts()
	want.Ended += queue
	want.Exported += queue
	if after != want || exp.accepted.Load() != want.Exported {
		t.Errorf("after %d more spans: %s, want %s (the exporter accepted %d in all)", queue, countsString(after), countsString(want), exp.accepted.Load())
	}
}

// TestCountsSnapshotExact: with the exporter stuck on one batch and the
// queue full, the number of pending spans is fixed (the queue plus the
// batch) while every further span is dropped; Counts, sampled all along by
// another goroutine, must say exactly that — a snapshot whose counters are
// read at different moments overstates Pending by the spans dropped in
// between.
func TestCountsSnapshotExact(t *testing.T) {
	t.Parallel()
	const queue, batch = 64, 16
	exp := &countingExporter{block: true}
	p, tr := newTestPipeline(t, exp, testSettings(queue, batch), nil)
	endSpans(tr, batch)
	for exp.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	endSpans(tr, queue)
	stop := make(chan struct{})
	var producers sync.WaitGroup
	for range 3 {
		producers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					endSpans(tr, 100)
				}
			}
		})
	}
	// Sample while at least 200,000 spans are dropped (or for 20 s).
	var bad []SpanCounts
	first := p.Counts().Dropped
	for deadline := time.Now().Add(20 * time.Second); len(bad) < 3 && time.Now().Before(deadline); {
		c := p.Counts()
		if c.Pending != queue+batch || c.Ended != c.Dropped+queue+batch {
			bad = append(bad, c)
		}
		if c.Dropped-first >= 200000 {
			break
		}
	}
	close(stop)
	producers.Wait()
	if len(bad) > 0 {
		t.Errorf("with %d spans pending and every new span dropped, Counts said %v", queue+batch, bad)
	}
	if c := p.Counts(); c.Dropped == 0 {
		t.Errorf("counts %s: nothing was dropped while sampling", countsString(c))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_ = p.Shutdown(ctx)
}

// TestFailedExportsAreCounted: an exporter that fails every other export
// while spans overflow a small queue; Exported, Failed and Dropped are
// exactly what the exporter accepted, what it rejected, and the rest.
// Background failures are reported through onError; the final export's
// failure is Shutdown's error instead.
func TestFailedExportsAreCounted(t *testing.T) {
	t.Parallel()
	exp := &countingExporter{delay: 200 * time.Microsecond, fail: func(call int) bool { return call%2 == 0 }}
	var reported atomic.Int64
	p, tr := newTestPipeline(t, exp, testSettings(32, 8), func(err error) {
		if errors.Is(err, errExport) {
			reported.Add(1)
		}
	})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				endSpans(tr, 10)
				_ = p.ForceFlush(context.Background())
			}
		})
	}
	wg.Wait()
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := p.Counts()
	want := SpanCounts{Ended: 2000, Exported: exp.accepted.Load(), Failed: exp.rejected.Load(), Dropped: 2000 - exp.accepted.Load() - exp.rejected.Load()}
	if c != want {
		t.Errorf("counts %s, want %s", countsString(c), countsString(want))
	}
	if c.Failed == 0 {
		t.Errorf("no export failed (%d calls): the test exercised nothing", exp.calls.Load())
	}
	if failedCalls := exp.calls.Load() / 2; reported.Load() != failedCalls {
		t.Errorf("onError reported %d failures, the exporter failed %d exports", reported.Load(), failedCalls)
	}

	// The final export fails: Shutdown returns that error, and onError is
	// not called for it.
	exp.fail = func(int) bool { return true }
	before := reported.Load()
	endSpans(tr, 5)
	err := p.Shutdown(context.Background())
	if !errors.Is(err, errExport) {
		t.Errorf("Shutdown = %v, want the final export's error", err)
	}
	if reported.Load() != before {
		t.Errorf("the final export's failure was also reported through onError")
	}
	if c := p.Counts(); c.Pending != 0 || c.Failed != want.Failed+5 || c.Ended != 2005 {
		t.Errorf("after Shutdown: %s, want 5 more failed and nothing pending", countsString(c))
	}
	if !exp.shutdown.Load() {
		t.Error("the exporter was not shut down")
	}
}

// TestShutdownDeadlineAccounting: with an exporter that never returns
// before its context is done, Shutdown returns by its deadline with the
// deadline's error; the batch being exported and the spans still queued are
// counted as failed, spans ended after Shutdown as dropped, and nothing
// stays pending.
func TestShutdownDeadlineAccounting(t *testing.T) {
	t.Parallel()
	exp := &countingExporter{block: true}
	p, tr := newTestPipeline(t, exp, testSettings(16, 4), nil)
	endSpans(tr, 4) // a full batch: handed to the exporter, which blocks
	for exp.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	endSpans(tr, 20) // 16 queued, 4 dropped
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := p.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want the deadline's error", err)
	}
	endSpans(tr, 3) // after Shutdown: dropped
	c := waitSettledCounts(t, p)
	want := SpanCounts{Ended: 27, Dropped: 7, Failed: 20}
	if c != want {
		t.Errorf("counts %s, want %s", countsString(c), countsString(want))
	}
	if err := p.Shutdown(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second Shutdown = %v, want the first call's result", err)
	}
}

// TestForceFlushHonoursContext: a ForceFlush whose context ends while the
// exporter is stuck returns the context's error and takes nothing from the
// accounting.
func TestForceFlushHonoursContext(t *testing.T) {
	t.Parallel()
	exp := &countingExporter{block: true}
	p, tr := newTestPipeline(t, exp, testSettings(8, 8), nil)
	endSpans(tr, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := p.ForceFlush(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ForceFlush = %v, want the deadline's error", err)
	}
	if c := p.Counts(); c.Ended != 3 || c.Pending != 3 {
		t.Errorf("counts %s, want 3 ended and pending", countsString(c))
	}
	sctx, scancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer scancel()
	_ = p.Shutdown(sctx)
	if c := waitSettledCounts(t, p); c != (SpanCounts{Ended: 3, Failed: 3}) {
		t.Errorf("after Shutdown: %s, want the 3 spans failed", countsString(c))
	}
}

// TestRefusalGuardFinalExport: once the guard saw a refused connection and
// Shutdown began, a final export is not attempted when a quick new attempt
// is refused too, and its error wraps ErrCollectorRefused (a real TCP port
// nobody listens on).
func TestRefusalGuardFinalExport(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	g := NewRefusalGuard(nil)
	if _, err := g.dial(context.Background(), addr); err == nil {
		t.Fatalf("dialing %s succeeded", addr)
	}
	// Before Shutdown the export runs as it is.
	ran := false
	if err := g.Export(context.Background(), func(context.Context) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("export before Final: ran %v, err %v", ran, err)
	}
	g.Final()
	ran = false
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = g.Export(ctx, func(ctx context.Context) error { ran = true; <-ctx.Done(); return ctx.Err() })
	if !errors.Is(err, ErrCollectorRefused) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("final export = %v, want ErrCollectorRefused and no deadline error", err)
	}
	if ran {
		t.Error("the final export was attempted although the collector refuses connections")
	}
}

func countsString(c SpanCounts) string { return fmt.Sprintf("%+v", c) }

// TestNilGuardMarksRefusal: a nil guard (a caller's or the console exporter)
// runs the export as it is, gives gRPC no dial option, and marks an error
// caused by a refused connection (a real one) with ErrCollectorRefused.
func TestNilGuardMarksRefusal(t *testing.T) {
	t.Parallel()
	var g *RefusalGuard
	if opts := g.DialOptions(environ.Map{}); opts != nil {
		t.Errorf("nil guard: %d dial options", len(opts))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	g.Final()
	err = g.Export(context.Background(), func(ctx context.Context) error {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
		}
		return fmt.Errorf("traces export: %w", err)
	})
	if !errors.Is(err, ErrCollectorRefused) {
		t.Errorf("Export = %v, want ErrCollectorRefused", err)
	}
	if err := g.Export(context.Background(), func(context.Context) error { return errExport }); !errors.Is(err, errExport) || err.Error() != errExport.Error() {
		t.Errorf("Export = %v, want the export's own error", err)
	}
}
