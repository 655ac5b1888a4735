package telemetry

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// SpanCounts is the accounting of a span pipeline; package lens exports it
// as lens.SpanCounts, whose documentation states the rules (Ended =
// Exported + Dropped + Failed + Rejected + Pending, and what each count
// holds).
type SpanCounts struct {
	Ended, Exported, Dropped, Failed, Rejected, Pending, Open int64
}

// spanPipeline is Lens's batch span processor: it replaces the SDK's
// BatchSpanProcessor so that every span is accounted for (the SDK's drops
// spans behind its caller's back when ForceFlush markers fill its queue, and
// does not count failed exports), so that any number of concurrent
// ForceFlush calls is safe (a flush takes no queue slot), and so that ending
// a span never blocks. It also gives every exported span exactly the Lens
// resource.
type spanPipeline struct {
	exp      sdktrace.SpanExporter
	res      atomic.Pointer[resource.Resource] // stamped on every exported span
	maxQueue int
	maxBatch int
	delay    time.Duration
	timeout  time.Duration
	guard    *RefusalGuard             // nil unless the exporter is OTLP
	onError  func(error)               // reports failed background exports
	invalid  func(what, source string) // reports invalid UTF-8, once per what

	mu       sync.Mutex
	queue    []sdktrace.ReadOnlySpan
	head     int    // queue[head:] are pending, not yet taken
	accepted uint64 // spans accepted into the queue, ever
	settled  uint64 // accepted spans whose export has returned (or was abandoned)
	flushTo  uint64 // the worker exports until settled reaches this
	progress chan struct{}
	stopping bool
	finalErr error // the first failed export after Shutdown began

	wake     chan struct{} // buffered 1: there is work
	stop     chan struct{} // closed by Shutdown
	stopped  chan struct{} // closed when the worker has returned
	stopOnce sync.Once
	abort    context.CancelFunc // cancels the export in progress
	workCtx  context.Context

	// batch, when non-nil, makes OnEnd wait for room in a full queue
	// instead of dropping, until batch is done (docs/tracing.md#batch-export).
	batch       context.Context
	firstErr    error          // the first failed export (batch mode's reason)
	firstReject *RejectedError // the first partial success (rejected spans or a warning)

	ended, exported, dropped, failed, rejected atomic.Int64 // changed under mu only, so that Counts is exact
	started                                    atomic.Int64 // sampled spans started (OnStart, without mu)
	shutdownErr                                error
}

func newSpanPipeline(exp sdktrace.SpanExporter, res *resource.Resource, s *Settings, guard *RefusalGuard, onError func(error), invalid func(what, source string)) *spanPipeline {
	p := &spanPipeline{
		exp:      exp,
		invalid:  invalid,
		maxQueue: s.BSPMaxQueueSize,
		maxBatch: s.BSPMaxExportBatch,
		delay:    s.BSPScheduleDelay,
		timeout:  s.BSPExportTimeout,
		guard:    guard,
		onError:  onError,
		progress: make(chan struct{}),
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		stopped:  make(chan struct{}),
	}
	p.res.Store(validResource(res, invalid))
	p.workCtx, p.abort = context.WithCancel(context.Background())
	go p.run()
	return p
}

// Counts returns the accounting now.
func (p *spanPipeline) Counts() SpanCounts {
	// The counters change only under p.mu, so this is one consistent
	// snapshot: Pending is exactly the spans queued or being exported.
	p.mu.Lock()
	c := SpanCounts{Ended: p.ended.Load(), Exported: p.exported.Load(), Dropped: p.dropped.Load(), Failed: p.failed.Load(), Rejected: p.rejected.Load()}
	p.mu.Unlock()
	c.Pending = c.Ended - c.Exported - c.Dropped - c.Failed - c.Rejected
	// Read after ended: every span counted as ended was counted as started
	// before it ended, so Open is never negative.
	c.Open = p.started.Load() - c.Ended
	return c
}

// FirstError returns the error of the first failed export, or nil.
func (p *spanPipeline) FirstError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.firstErr
}

// FirstRejection returns the first partial success the collector answered
// (spans rejected, or a warning), or nil.
func (p *spanPipeline) FirstRejection() *RejectedError {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.firstReject
}

// OnStart counts the sampled spans started, so that the spans that never
// end (or end after Shutdown, when the SDK no longer reports it) are
// counted too (SpanCounts.Open).
func (p *spanPipeline) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	if s.SpanContext().IsSampled() {
		p.started.Add(1)
	}
}

func (p *spanPipeline) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	p.mu.Lock()
	p.ended.Add(1)
	if p.batch != nil {
		p.waitRoomLocked()
	}
	if p.stopping || len(p.queue)-p.head >= p.maxQueue {
		p.dropped.Add(1)
		p.mu.Unlock()
		return
	}
	p.queue = append(p.queue, s)
	p.accepted++
	// A full batch goes out at once; with a schedule delay of 0, every span
	// does (in a batch of all that queued while the exporter was busy).
	wake := p.delay == 0 || len(p.queue)-p.head >= p.maxBatch
	p.mu.Unlock()
	if wake {
		p.signal()
	}
}

// waitRoomLocked waits, with p.mu held on entry and on return, until the
// queue has room, the pipeline stops, or p.batch is done: the batch mode's
// back-pressure. It wakes the worker, which exports full batches.
func (p *spanPipeline) waitRoomLocked() {
	for !p.stopping && len(p.queue)-p.head >= p.maxQueue {
		ch := p.progress
		p.mu.Unlock()
		p.signal()
		select {
		case <-ch:
		case <-p.stopped:
		case <-p.batch.Done():
		}
		p.mu.Lock()
		if p.batch.Err() != nil {
			return
		}
	}
}

func (p *spanPipeline) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// ForceFlush exports every span that ended before the call and waits for
// those exports to return, or for ctx to be done. Any number of calls may
// run at once; none takes a queue slot.
func (p *spanPipeline) ForceFlush(ctx context.Context) error {
	p.mu.Lock()
	target := p.accepted
	if target > p.flushTo {
		p.flushTo = target
	}
	p.mu.Unlock()
	p.signal()
	return p.waitSettled(ctx, target)
}

// waitSettled waits until every span accepted before target has settled.
func (p *spanPipeline) waitSettled(ctx context.Context, target uint64) error {
	for {
		p.mu.Lock()
		if p.settled >= target {
			p.mu.Unlock()
			return nil
		}
		ch := p.progress
		p.mu.Unlock()
		select {
		case <-ch:
		case <-p.stopped:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Shutdown stops accepting spans, exports the queue, and shuts the
// exporter down, within ctx. It returns the first error of those final
// exports (ErrCollectorRefused when the collector refused the connection).
// When ctx is done first, the export in progress is cancelled, the spans
// still queued are counted as failed, and ctx's error is returned too.
// Later calls return the first call's result.
func (p *spanPipeline) Shutdown(ctx context.Context) error {
	p.stopOnce.Do(func() {
		if p.guard != nil {
			p.guard.Final()
		}
		p.mu.Lock()
		p.stopping = true
		p.flushTo = p.accepted
		p.mu.Unlock()
		close(p.stop)
		var err error
		select {
		case <-p.stopped:
		case <-ctx.Done():
			err = ctx.Err()
			p.abort()
			p.abandonQueued()
		}
		p.mu.Lock()
		if p.finalErr != nil && (err == nil || !errors.Is(p.finalErr, err)) {
			err = errors.Join(p.finalErr, err)
		} else if err != nil {
			// The deadline, with what the guard knows of why (endpointcause.go).
			err = p.guard.DeadlineCause(cmp.Or(p.finalErr, err))
		}
		p.mu.Unlock()
		if serr := p.exp.Shutdown(ctx); serr != nil && !errors.Is(serr, ctx.Err()) {
			err = errors.Join(err, serr)
		}
		p.shutdownErr = err
	})
	return p.shutdownErr
}

// abandonQueued counts the spans still queued as failed.
func (p *spanPipeline) abandonQueued() {
	p.mu.Lock()
	n := len(p.queue) - p.head
	clear(p.queue[p.head:])
	p.queue, p.head = p.queue[:0], 0
	p.settled += uint64(n)
	p.failed.Add(int64(n))
	p.broadcastLocked()
	p.mu.Unlock()
}

func (p *spanPipeline) broadcastLocked() {
	close(p.progress)
	p.progress = make(chan struct{})
}

// run is the worker: it exports a batch when the queue holds maxBatch
// spans, everything queued before a ForceFlush when one asks, everything
// queued when the schedule delay passes (with a delay of 0: as soon as the
// worker is free, and no timer), and drains the queue on Shutdown. Exports
// run one at a time, in queue order.
func (p *spanPipeline) run() {
	defer close(p.stopped)
	var tick <-chan time.Time
	var timer *time.Timer
	if p.delay > 0 {
		timer = time.NewTimer(p.delay)
		defer timer.Stop()
		tick = timer.C
	}
	for {
		all, stopping := false, false
		select {
		case <-p.wake:
			all = p.delay == 0
		case <-tick:
			all = true
		case <-p.stop:
			all, stopping = true, true
		}
		for p.exportBatch(all) {
		}
		if stopping {
			return
		}
		if timer != nil && all {
			timer.Reset(p.delay)
		}
	}
}

// exportBatch exports up to maxBatch queued spans and reports whether it
// exported anything. Unless all is set it exports only a full batch, or a
// partial one while a ForceFlush waits for spans that are still queued.
func (p *spanPipeline) exportBatch(all bool) bool {
	p.mu.Lock()
	n := min(len(p.queue)-p.head, p.maxBatch)
	if n == 0 || (!all && n < p.maxBatch && p.settled >= p.flushTo) {
		p.mu.Unlock()
		return false
	}
	batch := make([]sdktrace.ReadOnlySpan, n)
	copy(batch, p.queue[p.head:p.head+n])
	clear(p.queue[p.head : p.head+n])
	p.head += n
	if p.head == len(p.queue) {
		p.queue, p.head = p.queue[:0], 0
	} else if p.head > len(p.queue)/2 && p.head > 1024 {
		// Compact so the backing array does not grow without bound.
		m := copy(p.queue, p.queue[p.head:])
		clear(p.queue[m:])
		p.queue, p.head = p.queue[:m], 0
	}
	p.mu.Unlock()

	err := p.export(batch)

	// A partial success reached the collector: the spans it did not reject
	// are exported, the others rejected (never retried). It is no failed
	// export: it is reported (onError, in every mode) and kept for
	// FirstRejection.
	var partial *RejectedError
	if errors.As(err, &partial) {
		partial = &RejectedError{Rejected: min(max(partial.Rejected, 0), int64(n)), Sent: int64(n), What: partial.What, Message: partial.Message}
		err = nil
	}
	p.mu.Lock()
	switch {
	case partial != nil:
		p.rejected.Add(partial.Rejected)
		p.exported.Add(int64(n) - partial.Rejected)
		if p.firstReject == nil {
			p.firstReject = partial
		}
	case err != nil:
		p.failed.Add(int64(n))
	default:
		p.exported.Add(int64(n))
	}
	p.settled += uint64(n)
	p.broadcastLocked()
	final := p.stopping
	if err != nil && final && p.finalErr == nil {
		p.finalErr = err // returned by Shutdown
	}
	if err != nil && p.firstErr == nil {
		p.firstErr = err
	}
	p.mu.Unlock()
	switch {
	case partial != nil && p.onError != nil:
		p.onError(partial)
	case err != nil && !final && p.onError != nil:
		p.onError(err)
	}
	return true
}

func (p *spanPipeline) export(batch []sdktrace.ReadOnlySpan) error {
	ctx := p.workCtx
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	spans := p.withResource(batch, p.res.Load())
	// A nil guard runs the export as it is (and marks a refused connection).
	return p.guard.Export(ctx, func(ctx context.Context) error { return p.exp.ExportSpans(ctx, spans) })
}

// withResource returns spans as they are exported: with every resource
// replaced by res (the SDK's provider merges its own parse of the process
// environment under the resource it is given; Lens's resource is the one
// that leaves the process) and every string valid UTF-8 (see validSpan).
// The slice is modified in place.
func (p *spanPipeline) withResource(spans []sdktrace.ReadOnlySpan, res *resource.Resource) []sdktrace.ReadOnlySpan {
	for i, s := range spans {
		if v, ok := p.validSpan(s, res); ok {
			spans[i] = v
		} else if s.Resource() != res {
			spans[i] = resourceSpan{ReadOnlySpan: s, res: res}
		}
	}
	return spans
}

// resourceSpan is a span whose Resource is replaced.
type resourceSpan struct {
	sdktrace.ReadOnlySpan
	res *resource.Resource
}

func (s resourceSpan) Resource() *resource.Resource { return s.res }

// validSpan returns s with res and with U+FFFD in place of invalid UTF-8 in
// its name, attributes, events (names and attributes), links (attributes),
// status description and instrumentation scope, and reports each of them
// (docs/resource.md#invalid-utf-8). It returns false, and no span, when s is
// valid UTF-8 already.
func (p *spanPipeline) validSpan(s sdktrace.ReadOnlySpan, res *resource.Resource) (sdktrace.ReadOnlySpan, bool) {
	if isValidSpan(s) {
		return nil, false
	}
	report := func(what string) func(string) { return ReportKey(p.invalid, what) }
	v := &fixedSpan{ReadOnlySpan: s, res: res}
	v.name = s.Name()
	changed := ValidStrings(p.invalid, Field{&v.name, "span name"})
	var c bool
	if v.attrs, c = ValidKeyValues(s.Attributes(), report("span attribute ")); c {
		changed = true
	}
	// The SDK's Events and Links return its own slices: change copies.
	v.events = s.Events()
	cloned := false
	for i, e := range v.events {
		name, nc := ValidString(e.Name)
		attrs, ac := ValidKeyValues(e.Attributes, report("span event attribute "))
		if !nc && !ac {
			continue
		}
		if !cloned {
			v.events, cloned = slices.Clone(v.events), true
		}
		changed = true
		if nc {
			p.invalid("span event name", "")
		}
		v.events[i].Name, v.events[i].Attributes = name, attrs
	}
	v.links = s.Links()
	cloned = false
	for i, l := range v.links {
		attrs, ac := ValidKeyValues(l.Attributes, report("span link attribute "))
		if !ac {
			continue
		}
		if !cloned {
			v.links, cloned = slices.Clone(v.links), true
		}
		changed = true
		v.links[i].Attributes = attrs
	}
	v.status = s.Status()
	if ValidStrings(p.invalid, Field{&v.status.Description, "span status description"}) {
		changed = true
	}
	v.scope = s.InstrumentationScope()
	if ValidScope(&v.scope, p.invalid) {
		changed = true
	}
	if !changed {
		return nil, false
	}
	return v, true
}

// isValidSpan reports whether every string validSpan looks at is valid
// UTF-8, without allocating (but for slice and map attribute values).
func isValidSpan(s sdktrace.ReadOnlySpan) bool {
	if !utf8.ValidString(s.Name()) || !validKeyValues(s.Attributes()) || !utf8.ValidString(s.Status().Description) {
		return false
	}
	for _, e := range s.Events() {
		if !utf8.ValidString(e.Name) || !validKeyValues(e.Attributes) {
			return false
		}
	}
	for _, l := range s.Links() {
		if !validKeyValues(l.Attributes) {
			return false
		}
	}
	sc := s.InstrumentationScope()
	if !utf8.ValidString(sc.Name) || !utf8.ValidString(sc.Version) || !utf8.ValidString(sc.SchemaURL) {
		return false
	}
	for it := sc.Attributes.Iter(); it.Next(); {
		if kv := it.Attribute(); !utf8.ValidString(string(kv.Key)) || !isValid(kv.Value) {
			return false
		}
	}
	return true
}

// fixedSpan is a span as validSpan exports it.
type fixedSpan struct {
	sdktrace.ReadOnlySpan
	res    *resource.Resource
	name   string
	attrs  []attribute.KeyValue
	events []sdktrace.Event
	links  []sdktrace.Link
	status sdktrace.Status
	scope  instrumentation.Scope
}

func (s *fixedSpan) Resource() *resource.Resource                { return s.res }
func (s *fixedSpan) Name() string                                { return s.name }
func (s *fixedSpan) Attributes() []attribute.KeyValue            { return s.attrs }
func (s *fixedSpan) Events() []sdktrace.Event                    { return s.events }
func (s *fixedSpan) Links() []sdktrace.Link                      { return s.links }
func (s *fixedSpan) Status() sdktrace.Status                     { return s.status }
func (s *fixedSpan) InstrumentationScope() instrumentation.Scope { return s.scope }

//lint:ignore SA1019 the deprecated method is part of ReadOnlySpan.
func (s *fixedSpan) InstrumentationLibrary() instrumentation.Library { return s.scope }

// validResource returns res with valid UTF-8 keys and values, reporting
// each attribute it changed (a resource built by Setup is valid already; a
// resource handed to NewTracing by another caller may not be).
func validResource(res *resource.Resource, invalid func(what, source string)) *resource.Resource {
	kvs, changed := ValidKeyValues(res.Attributes(), func(key string) { invalid("resource attribute "+AttributeName(key), "") })
	if !changed {
		return res
	}
	return resource.NewWithAttributes(res.SchemaURL(), kvs...)
}
