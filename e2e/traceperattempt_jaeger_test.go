package e2e_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/jaeger"
)

// The attempts of docs/tracing.md#trace-per-attempt's worked example: the
// trace ids are the run UUIDs of docs/detection.md's vectors spec5-11
// (SLURM_CLUSTER_NAME=cluster-a SLURM_JOB_ID=12345 SLURM_RESTART_COUNT=1)
// and spec5-10 (no restart count), checked against the Python reference;
// the anchor was computed with
// printf 'nemo.lens.attempt.anchor/%s' 1a280c0a-71d2-54bd-bd00-fa82efd94290 | sha256sum | cut -c1-16.
const (
	emitTestSR1Trace  = "be42db52ed955653b035190f2392e702"
	emitTestSR0Trace  = "1a280c0a71d254bdbd00fa82efd94290"
	emitTestSR0Anchor = "8fa650cf8ac0adb1"
)

// TestTracePerAttemptJaeger (issue 18): with NEMO_LENS_TRACE_PER_ATTEMPT,
// processes started separately with one job identity — two lens exec
// wrappers and the batch script's lens emit-spans — export into one trace,
// the attempt's, read back from a real Jaeger: the trace id is the run
// UUID's bytes, every root span has a FOLLOWS_FROM reference (the OTLP
// link) to the previous attempt's anchor, emit-spans' child is CHILD_OF its
// parent with the given times (to Jaeger's microsecond), and the previous
// attempt is a trace of its own.
func TestTracePerAttemptJaeger(t *testing.T) {
	elapsed(t)
	j := jaeger.StartForTest(t)
	lensBin := lensBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	service := uniqueName("lens-e2e-attempt")
	job := []string{"SLURM_CLUSTER_NAME=cluster-a", "SLURM_JOB_ID=12345", "NEMO_LENS_TRACE_PER_ATTEMPT=true"}
	env := func(extra ...string) []string {
		return lensEnv(os.Environ(), slices.Concat(exportTo(j, service), job, extra)...)
	}

	// Attempt 1: two wrappers on "two nodes", and the batch script's spans.
	for range 2 {
		runCmd(ctx, t, env("SLURM_RESTART_COUNT=1"), 0, lensBin, "exec", "--", "/bin/true")
	}
	runCmd(ctx, t, env("SLURM_RESTART_COUNT=1"), 0, lensBin, "emit-spans",
		"--span", "launch.setup,1700000000.250000,1700000003.500001,launch",
		"--span", "launch,1700000000.125000,1700000100")
	// Attempt 0, afterwards: its own trace.
	runCmd(ctx, t, env(), 0, lensBin, "exec", "--", "/bin/true")

	tr, err := j.WaitSpans(ctx, emitTestSR1Trace, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Spans) != 4 {
		t.Fatalf("attempt 1's trace has %d spans, want 4: %+v", len(tr.Spans), tr.Spans)
	}
	link := jaeger.Reference{RefType: "FOLLOWS_FROM", TraceID: emitTestSR0Trace, SpanID: emitTestSR0Anchor}
	var execs int
	byName := map[string]*jaeger.Span{}
	for i := range tr.Spans {
		s := &tr.Spans[i]
		byName[s.OperationName] = s
		if p, _ := tr.SpanProcess(s); p == nil || p.ServiceName != service {
			t.Errorf("%s: process %+v, want service %s", s.OperationName, p, service)
		}
		switch s.OperationName {
		case "lens exec true", "launch":
			if s.OperationName != "launch" {
				execs++
			}
			if !slices.Equal(s.References, []jaeger.Reference{link}) {
				t.Errorf("%s: references %+v, want only %+v", s.OperationName, s.References, link)
			}
		}
	}
	if execs != 2 {
		t.Errorf("%d lens exec spans in attempt 1's trace, want 2", execs)
	}
	launch, setup := byName["launch"], byName["launch.setup"]
	if launch == nil || setup == nil {
		t.Fatalf("emit-spans' spans missing: %v", byName)
	}
	if want := []jaeger.Reference{{RefType: "CHILD_OF", TraceID: emitTestSR1Trace, SpanID: launch.SpanID}}; !slices.Equal(setup.References, want) {
		t.Errorf("launch.setup references %+v, want %+v", setup.References, want)
	}
	for _, c := range []struct {
		s               *jaeger.Span
		start, duration uint64 // µs
	}{{launch, 1700000000_125000, 99_875000}, {setup, 1700000000_250000, 3_250001}} {
		if c.s.StartTime != c.start || c.s.Duration != c.duration {
			t.Errorf("%s: start %d µs, duration %d µs; want %d, %d", c.s.OperationName, c.s.StartTime, c.s.Duration, c.start, c.duration)
		}
	}

	prev, err := j.WaitSpans(ctx, emitTestSR0Trace, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(prev.Spans) != 1 || prev.Spans[0].OperationName != "lens exec true" || len(prev.Spans[0].References) != 0 {
		t.Errorf("attempt 0's trace: %+v, want one lens exec span without references", prev.Spans)
	}
}
