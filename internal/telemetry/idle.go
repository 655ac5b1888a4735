package telemetry

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// IdleError is the cause CancelWhenIdle cancels with: no export was
// accepted by the collector for Idle.
type IdleError struct{ Idle time.Duration }

func (e *IdleError) Error() string {
	return fmt.Sprintf("no batch accepted by the collector for %v", e.Idle)
}

// CancelWhenIdle bounds a batch export by its progress, not by a clock
// (docs/tracing.md#idle-bound): it calls cancel with an *IdleError once
// idle has passed without an export that the collector accepted (one that
// added to SpanCounts.Exported; a failed export is no progress), counted
// from this call and then from the last accepted export. A collector that
// keeps accepting is never cut off, however long the whole export takes.
// The watch ends when the pipeline has stopped or stop is called; stop
// waits until it has.
func (t *Tracing) CancelWhenIdle(idle time.Duration, cancel context.CancelCauseFunc) (stop func()) {
	return watchIdle(idle, cancel, t.pipeline.exportProgress, time.After, t.pipeline.stopped)
}

// exportProgress returns the number of spans exported so far and a
// channel closed when the next export settles.
func (p *spanPipeline) exportProgress() (int64, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exported.Load(), p.progress
}

// watchIdle is CancelWhenIdle's watch: progress reports the count of
// exported spans and a channel closed at the next change of it or of the
// other counts, after arms the bound (again at each accepted export).
func watchIdle(idle time.Duration, cancel context.CancelCauseFunc, progress func() (int64, <-chan struct{}),
	after func(time.Duration) <-chan time.Time, stopped <-chan struct{}) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	last, next := progress()
	fire := after(idle)
	go func() {
		defer close(ended)
		for {
			select {
			case <-done:
				return
			case <-stopped:
				return
			case <-next:
				var n int64
				n, next = progress()
				if n > last {
					last = n
					fire = after(idle)
				}
			case <-fire:
				cancel(&IdleError{Idle: idle})
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-ended
	}
}
