package completed_test

// Tests that kill mutants scripts/mutation.sh found surviving in this
// package (docs/testing.md#mutation); each names the mutant it kills.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/completed"
)

// TestParseSetReturnsTheSpans: a valid set parses to one span per value, in
// order (completed/spec.go, `len(errs) > 0` as `>= 0` returned no spans and
// no error, and lens emit-spans emitted nothing).
func TestParseSetReturnsTheSpans(t *testing.T) {
	t.Parallel()
	spans, err := completed.ParseSet([]string{"job,100,200", "step,110,190,job"})
	if err != nil || len(spans) != 2 || spans[0].Name != "job" || spans[1].Parent != "job" ||
		!spans[1].Start.Equal(time.Unix(110, 0)) {
		t.Fatalf("ParseSet = %+v, %v; want spans job and step", spans, err)
	}
}

// TestParseSetKeepsTheOtherErrorsOfAChildOfAnUnparsedValue: only the
// missing-parent error of a span whose parent did not parse is left out;
// its other errors, and the errors after it, are reported (completed/
// spec.go: && as || in the filter dropped every error of such a span;
// continue as break dropped every error after the first one left out).
func TestParseSetKeepsTheOtherErrorsOfAChildOfAnUnparsedValue(t *testing.T) {
	t.Parallel()
	_, err := completed.ParseSet([]string{"p,x,1", "c,2,1,p", "d,1,2,p", "e,1,2,nowhere"})
	want := map[string]error{"c": completed.ErrEndBeforeStart, "e": completed.ErrMissingParent}
	var got []string
	for _, e := range unjoin(err) {
		var se *completed.SpanError
		if !errors.As(e, &se) {
			continue
		}
		got = append(got, se.Name)
		if w, ok := want[se.Name]; !ok || !errors.Is(se, w) {
			t.Errorf("unexpected error %v", se)
		}
	}
	if len(got) != len(want) {
		t.Errorf("span errors of %v, want one for c (ends before start) and one for e (parent missing): %v", got, err)
	}
}

// TestParseEpochSecondsNegative: a negative time is out of range from
// ParseEpochSeconds itself, not only from Validate (completed/spec.go,
// `f < 0 || f > math.MaxInt64/1e9` as &&: -1 parsed to 1969-12-31).
func TestParseEpochSecondsNegative(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"-1", "-0.5", "-1e3"} {
		if got, err := completed.ParseEpochSeconds(v); !errors.Is(err, completed.ErrTimeRange) {
			t.Errorf("ParseEpochSeconds(%s) = %v, %v; want ErrTimeRange", v, got, err)
		}
	}
}

// TestValidateDuplicateSpanIDNamesTheFirst: the error names the span that
// requested the id first, counted from 1 (completed/completed.go,
// `pos(j)+1` as `pos(j)-1`).
func TestValidateDuplicateSpanIDNamesTheFirst(t *testing.T) {
	t.Parallel()
	id, _ := trace.SpanIDFromHex("0123456789abcdef")
	err := completed.Validate([]completed.Span{
		{Name: "a", Start: time.Unix(1, 0), End: time.Unix(2, 0), SpanID: id},
		{Name: "b", Start: time.Unix(1, 0), End: time.Unix(2, 0), SpanID: id},
	})
	if !errors.Is(err, completed.ErrDuplicateSpanID) || !strings.Contains(err.Error(), "also span #1") {
		t.Errorf("Validate = %v; want ErrDuplicateSpanID, also span #1", err)
	}
}

// TestValidateMissingParentIsNoCycle: a span whose parent is missing has
// that one error, wherever it stands (completed/completed.go, the first ||
// of the walk's stop condition as &&: the walk took the missing parent for
// span #1 and reported a cycle).
func TestValidateMissingParentIsNoCycle(t *testing.T) {
	t.Parallel()
	for _, specs := range [][]string{{"b,1,2,nope"}, {"b,1,2,nope", "a,1,2"}} {
		_, err := completed.ParseSet(specs)
		if errs := unjoin(err); len(errs) != 1 || !errors.Is(err, completed.ErrMissingParent) {
			t.Errorf("%q: %v; want one error, ErrMissingParent", specs, err)
		}
	}
}

// TestValidateCyclesInSetOrder: cycles are reported in the order of their
// first span in the set, also when a duplicate of an earlier name leads
// into a later cycle (completed/completed.go, either || of the walk's start
// condition as &&: the duplicate was walked and its cycle came first).
func TestValidateCyclesInSetOrder(t *testing.T) {
	t.Parallel()
	_, err := completed.ParseSet([]string{"a,1,2", "a,1,2,q", "p,1,2,p", "q,1,2,q"})
	var cycles []string
	for _, e := range unjoin(err) {
		var se *completed.SpanError
		if errors.As(e, &se) && errors.Is(se, completed.ErrCycle) {
			cycles = append(cycles, se.Name)
		}
	}
	if strings.Join(cycles, " ") != "p q" {
		t.Errorf("cycles of %v, want p then q: %v", cycles, err)
	}
}

// TestEmitSpanKind: a span's kind is emitted; the zero kind is internal
// (completed/completed.go, `s.Kind != trace.SpanKindUnspecified` as ==).
func TestEmitSpanKind(t *testing.T) {
	t.Parallel()
	rec, tr := recorder()
	err := completed.Emit(context.Background(), tr, []completed.Span{
		{Name: "srv", Start: time.Unix(1, 0), End: time.Unix(2, 0), Kind: trace.SpanKindServer},
		{Name: "plain", Start: time.Unix(1, 0), End: time.Unix(2, 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]trace.SpanKind{"srv": trace.SpanKindServer, "plain": trace.SpanKindInternal}
	for _, s := range rec.Ended() {
		if s.SpanKind() != want[s.Name()] {
			t.Errorf("span %s: kind %v, want %v", s.Name(), s.SpanKind(), want[s.Name()])
		}
	}
	if len(rec.Ended()) != 2 {
		t.Errorf("%d spans ended, want 2", len(rec.Ended()))
	}
}

// TestParseEpochSecondsUnitHint: a time out of range that is a plausible
// time (10^9 to 9223372036.854775807 s, 2001 to 2262) in milliseconds,
// microseconds or nanoseconds is named so, at both ends of that range;
// anything else gets no hint. The expected seconds are worked out by hand.
// Breaks: spec.go rangeHint's `f < 0` as `>=`; `f / u.div` as `*`;
// `s >= 1e9` as `>` or `<`; `&&` as `||`; `s <= math.MaxInt64/1e9` as `<`
// or `>`; `math.MaxInt64/1e9` as `*`.
func TestParseEpochSecondsUnitHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, hint string // hint "": none
	}{
		{"1700000000000", "milliseconds: 1700000000 seconds"},
		{"1700000000000000", "microseconds: 1700000000 seconds"},
		{"1700000000000000000", "nanoseconds: 1700000000 seconds"},
		{"1000000000000", "milliseconds: 1000000000 seconds"},
		{"9223372036854775807", "nanoseconds: 9223372036.854776 seconds"}, // the float64 nearest 9223372036.854775807
		{"999999999999", ""},        // 999999999.999 s in ms: before 2001
		{"20000000000", ""},         // 2e10: 2e7 s in ms, 20 s in ns
		{"9223372036854778000", ""}, // just past 2262 in ns
		{"1e22", ""},                // 1e13 s in ns
		{"-1700000000000", ""},      // negative: no unit makes it a time
	} {
		_, err := completed.ParseEpochSeconds(tc.in)
		if !errors.Is(err, completed.ErrTimeRange) {
			t.Errorf("ParseEpochSeconds(%s) = %v, want ErrTimeRange", tc.in, err)
			continue
		}
		msg := err.Error()
		_, hint, found := strings.Cut(msg, "; it looks like ")
		if tc.hint == "" && found || tc.hint != "" && hint != tc.hint {
			t.Errorf("ParseEpochSeconds(%s): %q, want hint %q", tc.in, msg, tc.hint)
		}
	}
}
