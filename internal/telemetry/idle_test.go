package telemetry

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
)

// idleTracing is a Tracing in front of exp whose export ctx ends when
// CancelWhenIdle says so.
func idleTracing(t *testing.T, exp *countingExporter, idle time.Duration) (*Tracing, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	tr, err := NewTracing(context.Background(), resource.Empty(), testSettings(8, 2), TracingOptions{Exporter: exp, Batch: ctx})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.CancelWhenIdle(idle, cancel))
	t.Cleanup(func() { _ = tr.Shutdown(ctx) }) // done by then: abandons a blocked export
	return tr, ctx
}

func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the idle bound never ended the export")
	}
}

// TestCancelWhenIdleCause: a collector that never answers ends the export
// after the idle bound, with an *IdleError naming it as the cause.
func TestCancelWhenIdleCause(t *testing.T) {
	t.Parallel()
	tr, ctx := idleTracing(t, &countingExporter{block: true}, time.Millisecond)
	endSpans(tr.Provider().Tracer("t"), 4)
	waitDone(t, ctx)
	var idle *IdleError
	if !errors.As(context.Cause(ctx), &idle) || idle.Idle != time.Millisecond || idle.Error() != "no batch accepted by the collector for 1ms" {
		t.Errorf("cause %v, want an *IdleError of 1ms", context.Cause(ctx))
	}
}

// TestWatchIdleRestartsOnAcceptedExportsOnly drives the watch with a fake
// pipeline and a fake clock, in lockstep: settled exports that exported
// nothing (failures) do not restart the bound, an accepted export does
// (break: restart on every settled export, or never), and the bound
// armed last ends the export with an *IdleError. Each step waits for the
// watch to ask for the progress again, so the previous step is done.
func TestWatchIdleRestartsOnAcceptedExportsOnly(t *testing.T) {
	t.Parallel()
	var exported int64
	next := make(chan struct{})
	asked := make(chan int64) // the watch read the progress
	progress := func() (int64, <-chan struct{}) {
		n, ch := exported, next
		asked <- n
		return n, ch
	}
	var mu sync.Mutex // arms: the bound is armed after the progress is read
	var arms []chan time.Time
	var armed []time.Duration
	after := func(d time.Duration) <-chan time.Time {
		c := make(chan time.Time, 1)
		mu.Lock()
		arms, armed = append(arms, c), append(armed, d)
		mu.Unlock()
		return c
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stopped := make(chan struct{})
	var stop func()
	started := make(chan struct{})
	go func() {
		stop = watchIdle(time.Minute, cancel, progress, after, stopped)
		close(started)
	}()
	<-asked // the first read, before the watch's goroutine runs
	<-started
	defer stop()
	// settle an export that brings the count to n, and wait until the
	// watch has read the progress after it.
	settle := func(n int64) {
		exported = n
		prev := next
		next = make(chan struct{})
		close(prev)
		select {
		case <-asked:
		case <-time.After(time.Minute):
			t.Fatal("the watch did not read the progress after a settled export")
		}
	}
	settle(0) // failed
	settle(0) // failed
	settle(0) // failed: the second one's bound, if any, is armed by now
	mu.Lock()
	defer mu.Unlock()
	if len(arms) != 1 {
		t.Fatalf("%d bounds armed after three failed exports, want 1 (the first)", len(arms))
	}
	mu.Unlock()
	settle(2) // accepted
	settle(2) // failed
	mu.Lock()
	if len(arms) != 2 || armed[1] != time.Minute {
		t.Fatalf("bounds armed %v, want two of 1m0s (the first, the accepted export)", armed)
	}
	arms[1] <- time.Now()
	waitDone(t, ctx)
	var idle *IdleError
	if !errors.As(context.Cause(ctx), &idle) || idle.Idle != time.Minute {
		t.Errorf("cause %v, want an *IdleError of 1m0s", context.Cause(ctx))
	}
}
