package completed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/internal/traceid"
)

// Span is a completed span: its name, its times, the name of its parent
// among the spans emitted with it ("" for a root span) and what it carries.
type Span struct {
	Name       string
	Start, End time.Time
	// Parent is the Name of another span of the same set, or "" for a root
	// span: a root continues the trace of the context given to Emit, or
	// starts the trace that context requests (ContextWithTraceID), or a new
	// one. A parent need not contain its children in time.
	Parent     string
	Attributes []attribute.KeyValue
	Links      []trace.Link
	// Kind is the span kind; the zero value is emitted as internal.
	Kind trace.SpanKind
	// SpanID, when valid, is requested as the span's id. Lens's tracer
	// providers honour it; others draw their own. The reckoner gives its
	// attempt span the attempt's anchor id this way
	// (docs/tracing.md#trace-per-attempt).
	SpanID trace.SpanID
}

// The rules a set of spans breaks; each error of Validate and ParseSpec
// wraps one of them.
var (
	// ErrMalformed: a --span value that is not NAME,START,END[,PARENT].
	ErrMalformed = errors.New("malformed span")
	// ErrEmptyName: a span without a name.
	ErrEmptyName = errors.New("empty span name")
	// ErrDuplicateName: two spans of one set with the same name.
	ErrDuplicateName = errors.New("duplicate span name")
	// ErrDuplicateSpanID: two spans of one set requesting the same span id.
	ErrDuplicateSpanID = errors.New("duplicate span id")
	// ErrMissingParent: a parent name that no span of the set has.
	ErrMissingParent = errors.New("missing parent")
	// ErrCycle: a span that is its own ancestor.
	ErrCycle = errors.New("parent cycle")
	// ErrNotFinite: a time that is infinite or not a number.
	ErrNotFinite = errors.New("time is not finite")
	// ErrTimeRange: a time before the Unix epoch or after the last
	// nanosecond an int64 counts from it (2262-04-11), the range of an
	// OTLP timestamp that time.Time can give.
	ErrTimeRange = errors.New("time out of range")
	// ErrEndBeforeStart: a span that ends before it starts (equal times
	// are a zero-length span, which is valid).
	ErrEndBeforeStart = errors.New("end before start")
)

// SpanError is one problem of one span.
type SpanError struct {
	// Index is the span's position in the set (from 0).
	Index int
	// Name is the span's name.
	Name string
	// Err wraps one of the Err* sentinels.
	Err error
}

func (e *SpanError) Error() string {
	return fmt.Sprintf("span %q (#%d): %v", e.Name, e.Index+1, e.Err)
}

func (e *SpanError) Unwrap() error { return e.Err }

// minTime and maxTime bound the times an OTLP exporter carries exactly:
// nanoseconds since the Unix epoch in an int64.
var (
	minTime = time.Unix(0, 0)
	maxTime = time.Unix(0, math.MaxInt64)
)

// Validate checks spans as one set and returns every problem, joined
// (errors.Join of *SpanError, each wrapping a sentinel), or nil.
func Validate(spans []Span) error {
	return errors.Join(validate(spans, func(i int) int { return i })...)
}

// validate returns the problems of spans; pos maps an index of spans to
// the position reported (ParseSet reports --span positions).
func validate(spans []Span, pos func(int) int) []error {
	var errs []error
	add := func(i int, err error) {
		errs = append(errs, &SpanError{Index: pos(i), Name: spans[i].Name, Err: err})
	}
	byName := make(map[string]int, len(spans))
	byID := map[trace.SpanID]int{}
	for i, s := range spans {
		if s.Name == "" {
			add(i, ErrEmptyName)
		} else if j, dup := byName[s.Name]; dup {
			add(i, fmt.Errorf("%w: also span #%d", ErrDuplicateName, pos(j)+1))
		} else {
			byName[s.Name] = i
		}
		if s.SpanID.IsValid() {
			if j, dup := byID[s.SpanID]; dup {
				add(i, fmt.Errorf("%w %s: also span #%d", ErrDuplicateSpanID, s.SpanID, pos(j)+1))
			} else {
				byID[s.SpanID] = i
			}
		}
		for _, t := range []struct {
			what string
			at   time.Time
		}{{"start", s.Start}, {"end", s.End}} {
			if t.at.Before(minTime) || t.at.After(maxTime) {
				add(i, fmt.Errorf("%w: %s %s", ErrTimeRange, t.what, t.at.UTC().Format(time.RFC3339Nano)))
			}
		}
		if s.End.Before(s.Start) {
			add(i, fmt.Errorf("%w: ends %v before its start", ErrEndBeforeStart, s.Start.Sub(s.End)))
		}
	}
	for i, s := range spans {
		if s.Parent != "" {
			if _, ok := byName[s.Parent]; !ok {
				add(i, fmt.Errorf("%w %q", ErrMissingParent, s.Parent))
			}
		}
	}
	for _, cycle := range cycles(spans, byName) {
		names := make([]string, len(cycle))
		for k, i := range cycle {
			names[k] = fmt.Sprintf("%q", spans[i].Name)
		}
		add(cycle[0], fmt.Errorf("%w: %s -> %q", ErrCycle, strings.Join(names, " -> "), spans[cycle[0]].Name))
	}
	return errs
}

// cycles returns each parent cycle once, as the indexes of its spans from
// the one that comes first in the set, child to parent. Only the first
// span of each name counts (a duplicate is an error of its own).
func cycles(spans []Span, byName map[string]int) [][]int {
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]int, len(spans))
	var out [][]int
	for i := range spans {
		if k, ok := byName[spans[i].Name]; !ok || k != i || state[i] != unseen {
			continue
		}
		var path []int
		j := i
		for {
			state[j] = onPath
			path = append(path, j)
			p, ok := byName[spans[j].Parent]
			if spans[j].Parent == "" || !ok || state[p] == done {
				break
			}
			if state[p] == onPath {
				start := 0
				for path[start] != p {
					start++
				}
				cycle := path[start:]
				low := 0
				for k := range cycle {
					if cycle[k] < cycle[low] {
						low = k
					}
				}
				out = append(out, append(append([]int{}, cycle[low:]...), cycle[:low]...))
				break
			}
			j = p
		}
		for _, k := range path {
			state[k] = done
		}
	}
	return out
}

// Emit validates spans (see Validate) and, when they are valid, emits them
// through tr: each span is started with its Start as timestamp, parents
// before their children (children in the order of the set), and every span
// is ended with its End once all spans are started. A root span's parent
// is what ctx holds, as for any span: the trace of ctx continues, or the
// trace ctx requests (ContextWithTraceID) starts, or a new one. When spans
// are invalid nothing is emitted and the error is Validate's.
//
// Emit returns once the spans are ended; exporting them is the tracer
// provider's business (flush or shut it down to know how that went).
func Emit(ctx context.Context, tr trace.Tracer, spans []Span) error {
	if err := Validate(spans); err != nil {
		return err
	}
	children := make(map[string][]int, len(spans))
	var roots []int
	for i, s := range spans {
		if s.Parent == "" {
			roots = append(roots, i)
		} else {
			children[s.Parent] = append(children[s.Parent], i)
		}
	}
	type startedSpan struct {
		index int
		span  trace.Span
	}
	started := make([]startedSpan, 0, len(spans))
	queue := roots
	parentCtx := make([]context.Context, len(spans))
	for _, i := range roots {
		parentCtx[i] = ctx
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		s := spans[i]
		pctx := parentCtx[i]
		startCtx := pctx
		if s.SpanID.IsValid() {
			startCtx = traceid.WithSpanID(pctx, s.SpanID)
		}
		opts := []trace.SpanStartOption{trace.WithTimestamp(s.Start), trace.WithAttributes(s.Attributes...), trace.WithLinks(s.Links...)}
		if s.Kind != trace.SpanKindUnspecified {
			opts = append(opts, trace.WithSpanKind(s.Kind))
		}
		_, span := tr.Start(startCtx, s.Name, opts...)
		started = append(started, startedSpan{i, span})
		// Children start from ctx with this span, not from startCtx (the
		// span id request is this span's alone) nor from pctx: a context
		// one level deeper per generation would make every lookup, and so
		// a chain of n spans, cost O(n) (docs/tracing.md#batch-export).
		cctx := trace.ContextWithSpan(ctx, span)
		for _, c := range children[s.Name] {
			parentCtx[c] = cctx
			queue = append(queue, c)
		}
	}
	// Children end before their parents (reverse start order), each at its
	// own End.
	for k := len(started) - 1; k >= 0; k-- {
		started[k].span.End(trace.WithTimestamp(spans[started[k].index].End))
	}
	return nil
}

// ContextWithTraceID returns ctx requesting id as the trace id of the root
// spans started with it, for instance by Emit: the reckoner emits several
// attempts, each in its own trace (docs/tracing.md#trace-per-attempt).
// Lens's tracer providers honour the request; others draw their own trace
// id. A span present in ctx wins: its trace continues.
func ContextWithTraceID(ctx context.Context, id trace.TraceID) context.Context {
	return traceid.WithTraceID(ctx, id)
}
