package traceid_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/internal/traceid"
)

// The worked example of docs/tracing.md#trace-per-attempt, computed
// outside Go: the trace id is the UUID's hex digits without dashes; the
// anchor is
//
//	printf 'nemo.lens.attempt.anchor/%s' be42db52-ed95-5653-b035-190f2392e702 | sha256sum | cut -c1-16
//
// (and the same with Python's hashlib).
var workedExamples = []struct{ uuid, traceID, anchor string }{
	{"be42db52-ed95-5653-b035-190f2392e702", "be42db52ed955653b035190f2392e702", "a5da5decf8aad715"},
	{"1a280c0a-71d2-54bd-bd00-fa82efd94290", "1a280c0a71d254bdbd00fa82efd94290", "8fa650cf8ac0adb1"},
}

func TestWorkedExample(t *testing.T) {
	t.Parallel()
	for _, ex := range workedExamples {
		tid, err := traceid.FromUUID(ex.uuid)
		if err != nil || tid.String() != ex.traceID {
			t.Errorf("FromUUID(%s) = %s, %v; want %s", ex.uuid, tid, err, ex.traceID)
		}
		if got := traceid.Anchor(tid).String(); got != ex.anchor {
			t.Errorf("Anchor(%s) = %s, want %s", tid, got, ex.anchor)
		}
		if got := traceid.UUID(tid); got != ex.uuid {
			t.Errorf("UUID(%s) = %s", tid, got)
		}
	}
	upper, err := traceid.FromUUID("BE42DB52-ED95-5653-B035-190F2392E702")
	if err != nil || upper.String() != workedExamples[0].traceID {
		t.Errorf("upper case: %s, %v", upper, err)
	}
}

func TestFromUUIDRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "be42db52ed955653b035190f2392e702", "be42db52-ed95-5653-b035-190f2392e70", "be42db52-ed95-5653-b035-190f2392e7020",
		"be42db52_ed95-5653-b035-190f2392e702", "ge42db52-ed95-5653-b035-190f2392e702", "00000000-0000-0000-0000-000000000000", "+e42db52-ed95-5653-b035-190f2392e702"} {
		if _, err := traceid.FromUUID(in); !errors.Is(err, traceid.ErrNotUUID) {
			t.Errorf("FromUUID(%q) = %v, want ErrNotUUID", in, err)
		}
	}
}

func TestGenerator(t *testing.T) {
	t.Parallel()
	attempt, _ := trace.TraceIDFromHex("be42db52ed955653b035190f2392e702")
	asked, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	sid, _ := trace.SpanIDFromHex("b7ad6b7169203331")
	ctx := context.Background()

	random := traceid.Generator{}
	a, _ := random.NewIDs(ctx)
	b, _ := random.NewIDs(ctx)
	if !a.IsValid() || a == b {
		t.Errorf("random trace ids %s, %s", a, b)
	}
	if got, _ := random.NewIDs(traceid.WithTraceID(ctx, asked)); got != asked {
		t.Errorf("requested trace id: got %s", got)
	}

	g := traceid.Generator{Attempt: attempt}
	if got, s := g.NewIDs(ctx); got != attempt || !s.IsValid() {
		t.Errorf("attempt mode: %s/%s, want trace %s", got, s, attempt)
	}
	if got, _ := g.NewIDs(traceid.WithTraceID(ctx, asked)); got != asked {
		t.Errorf("a request beats the attempt: got %s", got)
	}
	if got, _ := g.NewIDs(traceid.WithTraceID(ctx, trace.TraceID{})); got != attempt {
		t.Errorf("an invalid request is none: got %s", got)
	}
	if _, s := g.NewIDs(traceid.WithSpanID(ctx, sid)); s != sid {
		t.Errorf("requested root span id: got %s", s)
	}
	if s := g.NewSpanID(traceid.WithSpanID(ctx, sid), attempt); s != sid {
		t.Errorf("requested child span id: got %s", s)
	}
	if s1, s2 := g.NewSpanID(ctx, attempt), g.NewSpanID(ctx, attempt); !s1.IsValid() || s1 == s2 {
		t.Errorf("random span ids %s, %s", s1, s2)
	}
}
