package completed_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/completed"
	"github.com/nemolens/lens-go/internal/traceid"
)

// setRow is a set of --span values and what Validate must say: the
// sentinels its error wraps (nil: valid), and the span names it names.
type setRow struct {
	name  string
	specs []string
	want  []error
	names []string
	not   []error // sentinels the error must not wrap
}

// setRows covers every rule of Validate and ParseSpec; they also seed
// FuzzEmit.
var setRows = []setRow{
	{name: "one root", specs: []string{"job,1700000000,1700000010"}},
	{name: "zero length", specs: []string{"mark,1700000000.5,1700000000.5"}},
	{name: "parent first", specs: []string{"job,100,200", "setup,100,110,job", "train,110,200,job"}},
	{name: "parent last", specs: []string{"train,110,200,job", "setup,100,110,job", "job,100,200"}},
	{name: "parent need not contain child", specs: []string{"job,100,150", "tail,140,300,job", "before,10,20,job"}},
	{name: "deep chain out of order", specs: []string{"c,3,4,b", "a,1,9", "d,4,5,c", "b,2,8,a"}},
	{name: "two roots", specs: []string{"a,1,2", "b,3,4"}},
	{name: "fractions and exponents", specs: []string{"a,1.7e9,1700000000.000000001", "b,.5,+1,a"}},
	{name: "epoch zero", specs: []string{"a,0,0"}},
	{name: "last nanosecond", specs: []string{"a,9223372036.854775807,9223372036.854775807"}},
	{name: "unicode and spaces in names", specs: []string{"phase één,1,2", "sub phase,1,2,phase één"}},

	{name: "two fields", specs: []string{"a,1"}, want: []error{completed.ErrMalformed}},
	{name: "five fields", specs: []string{"a,1,2,b,c"}, want: []error{completed.ErrMalformed}},
	{name: "empty value", specs: []string{""}, want: []error{completed.ErrMalformed}},
	{name: "empty parent field", specs: []string{"a,1,2,"}, want: []error{completed.ErrMalformed}},
	{name: "start not a number", specs: []string{"a,x,2"}, want: []error{completed.ErrMalformed}},
	{name: "end empty", specs: []string{"a,1,"}, want: []error{completed.ErrMalformed}},
	{name: "blank in time", specs: []string{"a, 1,2"}, want: []error{completed.ErrMalformed}},
	{name: "hex time", specs: []string{"a,0x10,20"}, want: []error{completed.ErrMalformed}},
	{name: "underscore time", specs: []string{"a,1_000,2000"}, want: []error{completed.ErrMalformed}},
	{name: "ratio time", specs: []string{"a,1/2,2"}, want: []error{completed.ErrMalformed}},
	{name: "long exponent", specs: []string{"a,1e-1000,2"}, want: []error{completed.ErrMalformed}},
	{name: "inf start", specs: []string{"a,inf,2"}, want: []error{completed.ErrNotFinite}},
	{name: "nan end", specs: []string{"a,1,NaN"}, want: []error{completed.ErrNotFinite}},
	{name: "negative infinity", specs: []string{"a,-Infinity,2"}, want: []error{completed.ErrNotFinite}},
	{name: "float overflow", specs: []string{"a,1,1e400"}, want: []error{completed.ErrNotFinite}},
	{name: "before epoch", specs: []string{"a,-1,2"}, want: []error{completed.ErrTimeRange}},
	{name: "after 2262", specs: []string{"a,1,9223372037"}, want: []error{completed.ErrTimeRange}},
	// One nanosecond past the last one an int64 counts (a float64 cannot
	// tell it from the last: the exact check must catch it, not wrap it to
	// before 1970), and one before the epoch.
	{name: "a nanosecond past the last", specs: []string{"a,1,9223372036.854775808"}, want: []error{completed.ErrTimeRange}},
	{name: "a nanosecond before the epoch", specs: []string{"a,-0.000000001,1"}, want: []error{completed.ErrTimeRange}},
	{name: "both times bad", specs: []string{"a,inf,x"}, want: []error{completed.ErrNotFinite, completed.ErrMalformed}},
	{name: "one bad spec among good ones", specs: []string{"a,1,2", "b,1,x,a"}, want: []error{completed.ErrMalformed}},
	{name: "parse and set errors together", specs: []string{"a,1,2,a", "b,x,2"}, want: []error{completed.ErrMalformed, completed.ErrCycle}, names: []string{"a"}},
	{name: "child of a value that does not parse", specs: []string{"a,x,2", "b,1,2,a"}, want: []error{completed.ErrMalformed}, not: []error{completed.ErrMissingParent}},

	{name: "empty name", specs: []string{",1,2"}, want: []error{completed.ErrEmptyName}, names: []string{""}},
	{name: "duplicate name", specs: []string{"a,1,2", "b,1,2", "a,3,4"}, want: []error{completed.ErrDuplicateName}, names: []string{"a"}},
	{name: "missing parent", specs: []string{"a,1,2", "b,1,2,nope"}, want: []error{completed.ErrMissingParent}, names: []string{"b"}},
	{name: "self parent", specs: []string{"a,1,2,a"}, want: []error{completed.ErrCycle}, names: []string{"a"}},
	{name: "two-span cycle", specs: []string{"a,1,2,b", "b,1,2,a"}, want: []error{completed.ErrCycle}, names: []string{"a"}},
	{name: "cycle below a root", specs: []string{"r,1,9", "x,1,2,z", "y,1,2,x", "z,1,2,y", "ok,1,2,r"}, want: []error{completed.ErrCycle}, names: []string{"x"}},
	{name: "tail into cycle", specs: []string{"t,1,2,a", "a,1,2,b", "b,1,2,a"}, want: []error{completed.ErrCycle}, names: []string{"a"}},
	{name: "end before start", specs: []string{"a,2,1"}, want: []error{completed.ErrEndBeforeStart}, names: []string{"a"}},
	{name: "end a nanosecond before start", specs: []string{"a,1.000000001,1"}, want: []error{completed.ErrEndBeforeStart}, names: []string{"a"}},
	{name: "every set rule at once", specs: []string{"a,1,2", "a,1,2", "b,3,2", "c,1,2,gone", "d,1,2,d", ",1,2"},
		want:  []error{completed.ErrDuplicateName, completed.ErrEndBeforeStart, completed.ErrMissingParent, completed.ErrCycle, completed.ErrEmptyName},
		names: []string{"a", "b", "c", "d", ""}},
}

func recorder() (*tracetest.SpanRecorder, trace.Tracer) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithIDGenerator(traceid.Generator{}))
	return rec, tp.Tracer("test")
}

// parse parses and validates a row's specs the way lens emit-spans does.
func parse(specs []string) ([]completed.Span, error) {
	return completed.ParseSet(specs)
}

func TestValidateAndEmit(t *testing.T) {
	t.Parallel()
	for _, row := range setRows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			spans, err := parse(row.specs)
			for _, w := range row.want {
				if !errors.Is(err, w) {
					t.Errorf("error %v does not wrap %v", err, w)
				}
			}
			for _, w := range row.not {
				if errors.Is(err, w) {
					t.Errorf("error %v wraps %v", err, w)
				}
			}
			if row.want == nil && err != nil {
				t.Fatalf("valid set rejected: %v", err)
			}
			for _, n := range row.names {
				var se *completed.SpanError
				found := false
				for _, e := range unjoin(err) {
					if errors.As(e, &se) && se.Name == n {
						found = true
					}
				}
				if !found {
					t.Errorf("no *SpanError names %q in %v", n, err)
				}
			}
			rec, tr := recorder()
			if err != nil { // a parse error: emit what parsed, unvalidated, to check Emit refuses too
				spans = parsedOnly(row.specs)
			}
			emitErr := completed.Emit(context.Background(), tr, spans)
			if row.want != nil {
				if emitErr == nil && err != nil && len(spans) == len(row.specs) {
					t.Errorf("Emit accepted an invalid set")
				}
				if emitErr != nil && len(rec.Started()) > 0 {
					t.Errorf("Emit failed (%v) but started %d spans", emitErr, len(rec.Started()))
				}
				return
			}
			if emitErr != nil {
				t.Fatalf("Emit: %v", emitErr)
			}
			checkEmitted(t, spans, rec.Ended())
		})
	}
}

// parsedOnly returns the spans of the specs that parse.
func parsedOnly(specs []string) []completed.Span {
	var out []completed.Span
	for _, s := range specs {
		if sp, err := completed.ParseSpec(s); err == nil {
			out = append(out, sp)
		}
	}
	return out
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// checkEmitted: one ended span per given span, with its name, times and
// parent; every span in one trace with its parent; parents started first.
func checkEmitted(t *testing.T, spans []completed.Span, got []sdktrace.ReadOnlySpan) {
	t.Helper()
	if len(got) != len(spans) {
		t.Fatalf("%d spans emitted, want %d", len(got), len(spans))
	}
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range got {
		byName[s.Name()] = s
	}
	for _, want := range spans {
		s, ok := byName[want.Name]
		if !ok {
			t.Errorf("span %q not emitted", want.Name)
			continue
		}
		if !s.StartTime().Equal(want.Start) || !s.EndTime().Equal(want.End) {
			t.Errorf("span %q: %v..%v, want %v..%v", want.Name, s.StartTime(), s.EndTime(), want.Start, want.End)
		}
		if want.Parent == "" {
			if s.Parent().IsValid() {
				t.Errorf("root %q has parent %v", want.Name, s.Parent())
			}
			continue
		}
		p := byName[want.Parent]
		if p == nil || s.Parent().SpanID() != p.SpanContext().SpanID() || s.SpanContext().TraceID() != p.SpanContext().TraceID() {
			t.Errorf("span %q: parent %v, want span %q", want.Name, s.Parent(), want.Parent)
		}
	}
}

func TestParseEpochSecondsPrecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int64 // nanoseconds since the epoch, computed by hand
	}{
		{"1700000000", 1700000000_000000000},
		{"1700000000.25", 1700000000_250000000},
		{"1700000000.123456789", 1700000000_123456789},
		{"1700000000.1234567899", 1700000000_123456789}, // the tenth digit is dropped
		{"1.7e9", 1700000000_000000000},
		{"17e8", 1700000000_000000000},
		{"1700000000123e-3", 1700000000_123000000},
		{"0.000000001", 1},
		{"0.0000000009", 0},
		{"+5.", 5_000000000},
		{"-0", 0},
	} {
		got, err := completed.ParseEpochSeconds(tc.in)
		if err != nil || got.UnixNano() != tc.want {
			t.Errorf("ParseEpochSeconds(%q) = %d, %v; want %d", tc.in, got.UnixNano(), err, tc.want)
		}
	}
}

func TestParseSpecFields(t *testing.T) {
	t.Parallel()
	s, err := completed.ParseSpec("train,1700000000.5,1700000100,job")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "train" || s.Parent != "job" || s.Start.UnixNano() != 1700000000_500000000 || s.End.Unix() != 1700000100 {
		t.Errorf("ParseSpec = %+v", s)
	}
	_, err = completed.ParseSpec("a,b")
	var se *completed.SpecError
	if !errors.As(err, &se) || se.Spec != "a,b" || !strings.Contains(err.Error(), `"a,b"`) {
		t.Errorf("error %v: want a *SpecError naming the value", err)
	}
}

// TestEmitIDs: a trace id requested through the context is the roots'
// (every root's), a span id requested by a span is that span's only, and a
// span in the context wins over the requested trace id.
func TestEmitIDs(t *testing.T) {
	t.Parallel()
	tid, _ := trace.TraceIDFromHex("be42db52ed955653b035190f2392e702")
	anchor, _ := trace.SpanIDFromHex("0123456789abcdef")
	spans := []completed.Span{
		{Name: "attempt", Start: time.Unix(10, 0), End: time.Unix(20, 0), SpanID: anchor},
		{Name: "queued", Start: time.Unix(5, 0), End: time.Unix(10, 0)},
		{Name: "step", Start: time.Unix(11, 0), End: time.Unix(19, 0), Parent: "attempt"},
	}
	rec, tr := recorder()
	if err := completed.Emit(completed.ContextWithTraceID(context.Background(), tid), tr, spans); err != nil {
		t.Fatal(err)
	}
	got := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		got[s.Name()] = s
		if s.SpanContext().TraceID() != tid {
			t.Errorf("%s: trace %s, want %s", s.Name(), s.SpanContext().TraceID(), tid)
		}
	}
	if got["attempt"].SpanContext().SpanID() != anchor {
		t.Errorf("attempt span id %s, want %s", got["attempt"].SpanContext().SpanID(), anchor)
	}
	if got["queued"].SpanContext().SpanID() == anchor || got["step"].SpanContext().SpanID() == anchor {
		t.Errorf("the requested span id was reused")
	}
	if got["step"].Parent().SpanID() != anchor {
		t.Errorf("step's parent %s, want the anchor", got["step"].Parent().SpanID())
	}

	other, _ := trace.TraceIDFromHex("11111111111111111111111111111111")
	psid, _ := trace.SpanIDFromHex("2222222222222222")
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: other, SpanID: psid, TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(completed.ContextWithTraceID(context.Background(), tid), parent)
	rec, tr = recorder()
	if err := completed.Emit(ctx, tr, spans[1:2]); err != nil {
		t.Fatal(err)
	}
	s := rec.Ended()[0]
	if s.SpanContext().TraceID() != other || s.Parent().SpanID() != psid {
		t.Errorf("span in trace %s under %s; want the context's span %s/%s", s.SpanContext().TraceID(), s.Parent().SpanID(), other, psid)
	}
}

func TestEmitRejectsDuplicateSpanIDs(t *testing.T) {
	t.Parallel()
	id, _ := trace.SpanIDFromHex("0123456789abcdef")
	rec, tr := recorder()
	err := completed.Emit(context.Background(), tr, []completed.Span{
		{Name: "a", Start: time.Unix(1, 0), End: time.Unix(2, 0), SpanID: id},
		{Name: "b", Start: time.Unix(1, 0), End: time.Unix(2, 0), SpanID: id},
	})
	if !errors.Is(err, completed.ErrDuplicateSpanID) || len(rec.Started()) != 0 {
		t.Errorf("err %v, %d spans started; want ErrDuplicateSpanID and none", err, len(rec.Started()))
	}
}

// TestValidateZeroTime: the zero time.Time (year 1) is out of range.
func TestValidateZeroTime(t *testing.T) {
	t.Parallel()
	err := completed.Validate([]completed.Span{{Name: "a", End: time.Unix(1, 0)}})
	if !errors.Is(err, completed.ErrTimeRange) {
		t.Errorf("Validate = %v, want ErrTimeRange", err)
	}
}

// FuzzEmit: for any set of --span values (one per line), Emit emits every
// span or none: all exactly when ParseSpecs and Validate accept the set.
func FuzzEmit(f *testing.F) {
	for _, row := range setRows {
		f.Add(strings.Join(row.specs, "\n"))
	}
	f.Fuzz(func(t *testing.T, in string) {
		specs := strings.Split(in, "\n")
		spans, err := parse(specs)
		rec, tr := recorder()
		if err != nil {
			spans = parsedOnly(specs)
		}
		emitErr := completed.Emit(context.Background(), tr, spans)
		if (emitErr == nil) != (completed.Validate(spans) == nil) {
			t.Fatalf("Emit error %v disagrees with Validate", emitErr)
		}
		if emitErr != nil {
			if n := len(rec.Started()); n != 0 {
				t.Fatalf("Emit failed but started %d spans", n)
			}
			return
		}
		if err == nil {
			checkEmitted(t, spans, rec.Ended())
		} else if len(rec.Ended()) != len(spans) {
			t.Fatalf("%d of %d spans emitted", len(rec.Ended()), len(spans))
		}
	})
}

// TestParseSetPositions: a set error names the span's --span position, not
// its position among the values that parsed.
func TestParseSetPositions(t *testing.T) {
	t.Parallel()
	_, err := completed.ParseSet([]string{"bad", "a,1,2", "a,3,4"})
	var se *completed.SpanError
	found := false
	for _, e := range unjoin(err) {
		if errors.As(e, &se) && errors.Is(se, completed.ErrDuplicateName) {
			found = true
			if se.Index != 2 || !strings.Contains(se.Error(), "(#3)") || !strings.Contains(se.Error(), "also span #2") {
				t.Errorf("duplicate reported as %v (index %d), want --span #3, also #2", se, se.Index)
			}
		}
	}
	if !found {
		t.Errorf("no duplicate reported: %v", err)
	}
}
