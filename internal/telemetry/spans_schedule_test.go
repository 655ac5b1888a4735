package telemetry

import (
	"context"
	"testing"
	"time"
)

// Tests of when the span pipeline exports, without wall-clock margins: a
// schedule delay that never passes during a test (MaxDuration), or one so
// short that the test waits for an outcome under a generous overall
// deadline that only a broken pipeline reaches.

// waitUntil polls cond until it holds; it fails the test when a minute
// passes first (only a broken pipeline takes that long).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute, still not %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestForceFlushExportsPartialBatch: with a schedule delay of a day and a
// batch of 512, ForceFlush exports the 3 spans ended before it at once, in
// one partial batch, and returns nil; nothing waits for the schedule delay
// or for a full batch.
func TestForceFlushExportsPartialBatch(t *testing.T) {
	t.Parallel()
	exp := &countingExporter{}
	s := testSettings(2048, 512)
	s.BSPScheduleDelay = MaxDuration
	p, tr := newTestPipeline(t, exp, s, nil)
	endSpans(tr, 3)
	// The deadline is reached only when the flush waits for the schedule.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.ForceFlush(ctx); err != nil {
		t.Fatalf("ForceFlush of a partial batch: %v (it waited for the schedule delay)", err)
	}
	if calls, got := exp.calls.Load(), exp.accepted.Load(); calls != 1 || got != 3 {
		t.Errorf("exporter saw %d calls, %d spans; want the 3 spans in 1 call", calls, got)
	}
	if c := p.Counts(); c != (SpanCounts{Ended: 3, Exported: 3}) {
		t.Errorf("counts after ForceFlush %s, want 3 exported", countsString(c))
	}
	// A second flush with nothing new exports nothing.
	if err := p.ForceFlush(ctx); err != nil || exp.calls.Load() != 1 {
		t.Errorf("second ForceFlush: %v, %d calls, want nil and still 1", err, exp.calls.Load())
	}
}

// TestScheduleExportsRepeatedly: the schedule timer is re-armed after each
// export: with a 1 ms delay and no flush, a span ended after the first
// scheduled export is exported by a later one, and so is a third.
func TestScheduleExportsRepeatedly(t *testing.T) {
	t.Parallel()
	exp := &countingExporter{}
	s := testSettings(2048, 512)
	s.BSPScheduleDelay = time.Millisecond
	_, tr := newTestPipeline(t, exp, s, nil)
	for i := int64(1); i <= 3; i++ {
		endSpans(tr, 1)
		waitUntil(t, "exported by the schedule", func() bool { return exp.accepted.Load() == i })
	}
	if n := exp.calls.Load(); n < 3 {
		t.Errorf("%d exports, want one per span at least", n)
	}
}
