//go:build unix

package main

import (
	"maps"
	"strings"
	"sync"
	"testing"
)

// The worked example of docs/tracing.md#trace-per-attempt. The trace ids
// are the hex digits of the run UUIDs in docs/detection.md's worked
// examples (spec5-10, spec5-11: checked against the Python reference); the
// anchors were computed with
//
//	printf 'nemo.lens.attempt.anchor/%s' UUID | sha256sum | cut -c1-16
const (
	attemptSR1Trace  = "be42db52ed955653b035190f2392e702" // nemo.lens.run/cluster-a/12345/sr1
	attemptSR1Anchor = "a5da5decf8aad715"
	attemptSR0Trace  = "1a280c0a71d254bdbd00fa82efd94290" // nemo.lens.run/cluster-a/12345/sr0
	attemptSR0Anchor = "8fa650cf8ac0adb1"
)

// attemptEnv is a Slurm job's environment with telemetry on, the console
// exporter and the per-attempt mode, plus extra.
func attemptEnv(restart string, extra map[string]string) map[string]string {
	env := map[string]string{
		"SLURM_CLUSTER_NAME":          "cluster-a",
		"SLURM_JOB_ID":                "12345",
		"NEMO_LENS_ENABLED":           "true",
		"NEMO_LENS_EXPORTER":          "console",
		"NEMO_LENS_TRACE_PER_ATTEMPT": "true",
	}
	if restart != "" {
		env["SLURM_RESTART_COUNT"] = restart
	}
	maps.Copy(env, extra)
	return env
}

// execSpan runs lens exec -- the test binary in helper mode "env" as its own
// process with exactly env, and returns lens's span and the TRACEPARENT the
// command received.
func execSpan(t *testing.T, env map[string]string) (consoleSpan, string) {
	t.Helper()
	r := runBin(t, helperEnv("env", env), "", "exec", "--", self(t))
	spans := consoleSpans(t, r.stderr)
	if r.code != 0 || len(spans) != 1 {
		t.Fatalf("lens exec: %d spans\n%v", len(spans), r)
	}
	return spans[0], childEnviron(t, r.stdout)["TRACEPARENT"]
}

// TestTracePerAttemptExec: two lens exec processes started separately with
// the same job identity and NEMO_LENS_TRACE_PER_ATTEMPT export their spans
// in the same trace, the attempt's, linked to the previous attempt's anchor,
// and hand that trace to their commands; another restart count is another
// trace; without the option every process has its own trace; an explicit
// TRACEPARENT wins.
func TestTracePerAttemptExec(t *testing.T) {
	t.Parallel()
	t.Run("same attempt, two processes", func(t *testing.T) {
		t.Parallel()
		var wg sync.WaitGroup
		var spans [2]consoleSpan
		var parents [2]string
		for i := range spans {
			wg.Go(func() { spans[i], parents[i] = execSpan(t, attemptEnv("1", nil)) })
		}
		wg.Wait()
		for i, s := range spans {
			if s.SpanContext.TraceID != attemptSR1Trace || s.Parent.SpanID != "0000000000000000" {
				t.Errorf("process %d: span in trace %s under %s, want a root in %s", i, s.SpanContext.TraceID, s.Parent.SpanID, attemptSR1Trace)
			}
			if len(s.Links) != 1 || s.Links[0].SpanContext.TraceID != attemptSR0Trace || s.Links[0].SpanContext.SpanID != attemptSR0Anchor {
				t.Errorf("process %d: links %+v, want one to %s/%s", i, s.Links, attemptSR0Trace, attemptSR0Anchor)
			}
			if want := "00-" + attemptSR1Trace + "-" + s.SpanContext.SpanID + "-01"; parents[i] != want {
				t.Errorf("process %d: the command got TRACEPARENT %q, want %q", i, parents[i], want)
			}
		}
		if spans[0].SpanContext.SpanID == spans[1].SpanContext.SpanID {
			t.Errorf("both spans have id %s", spans[0].SpanContext.SpanID)
		}
	})
	t.Run("first attempt", func(t *testing.T) {
		t.Parallel()
		s, _ := execSpan(t, attemptEnv("", nil))
		if s.SpanContext.TraceID != attemptSR0Trace || len(s.Links) != 0 {
			t.Errorf("trace %s, links %+v; want %s and no link", s.SpanContext.TraceID, s.Links, attemptSR0Trace)
		}
	})
	t.Run("explicit TRACEPARENT wins", func(t *testing.T) {
		t.Parallel()
		const parentTrace, parentSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
		s, _ := execSpan(t, attemptEnv("1", map[string]string{"TRACEPARENT": "00-" + parentTrace + "-" + parentSpan + "-01"}))
		if s.SpanContext.TraceID != parentTrace || s.Parent.SpanID != parentSpan || len(s.Links) != 0 {
			t.Errorf("trace %s under %s, links %+v; want TRACEPARENT's, no link", s.SpanContext.TraceID, s.Parent.SpanID, s.Links)
		}
	})
	t.Run("off by default", func(t *testing.T) {
		t.Parallel()
		a, _ := execSpan(t, attemptEnv("1", map[string]string{"NEMO_LENS_TRACE_PER_ATTEMPT": "false"}))
		env := attemptEnv("1", nil)
		delete(env, "NEMO_LENS_TRACE_PER_ATTEMPT")
		b, _ := execSpan(t, env)
		for _, s := range []consoleSpan{a, b} {
			if s.SpanContext.TraceID == attemptSR1Trace || len(s.Links) != 0 {
				t.Errorf("trace %s, links %+v without the mode", s.SpanContext.TraceID, s.Links)
			}
		}
		if a.SpanContext.TraceID == b.SpanContext.TraceID {
			t.Errorf("two processes share trace %s without the mode", a.SpanContext.TraceID)
		}
	})
	t.Run("no identity", func(t *testing.T) {
		t.Parallel()
		r := runBin(t, helperEnv("exit=0", map[string]string{"NEMO_LENS_ENABLED": "true", "NEMO_LENS_EXPORTER": "console", "NEMO_LENS_TRACE_PER_ATTEMPT": "1"}), "", "exec", "--", self(t))
		if r.code != 0 || strings.Count(r.stderr, "NEMO_LENS_TRACE_PER_ATTEMPT is on, but this process has no job attempt identity") != 1 || len(consoleSpans(t, r.stderr)) != 1 {
			t.Errorf("%v: want the span and the warning once", r)
		}
	})
}

// TestTracePerAttemptEmitSpans: lens emit-spans of the batch script puts its
// roots in the same trace as the tasks' lens exec, and its children below
// them.
func TestTracePerAttemptEmitSpans(t *testing.T) {
	t.Parallel()
	r := runBin(t, attemptEnv("1", map[string]string{"NEMO_LENS_ENABLED": ""}), "", "emit-spans",
		"--span", "job,1700000000,1700000100", "--span", "setup,1700000000,1700000010,job", "--span", "epilog,1700000100,1700000101")
	spans := consoleSpans(t, r.stderr)
	if r.code != 0 || len(spans) != 3 {
		t.Fatalf("%v", r)
	}
	for _, s := range spans {
		if s.SpanContext.TraceID != attemptSR1Trace {
			t.Errorf("%s: trace %s, want %s", s.Name, s.SpanContext.TraceID, attemptSR1Trace)
		}
		root := s.Name != "setup"
		if linked := len(s.Links) == 1 && s.Links[0].SpanContext.SpanID == attemptSR0Anchor; linked != root {
			t.Errorf("%s: links %+v (a root links to the previous attempt's anchor, a child does not)", s.Name, s.Links)
		}
	}
}

// TestTracePerAttemptEnv: lens env hands a Python process the attempt's
// anchor as TRACEPARENT, first, when the mode is on and there is none yet;
// otherwise its output is the reference's one line.
func TestTracePerAttemptEnv(t *testing.T) {
	t.Parallel()
	want := "export TRACEPARENT=00-" + attemptSR1Trace + "-" + attemptSR1Anchor + "-01\n"
	r := runIn(t, attemptEnv("1", nil), "", "env", "--stage", "sbatch")
	if r.code != 0 || !strings.HasPrefix(r.stdout, want) || strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("%v\nwant first %q", r, want)
	}
	for name, env := range map[string]map[string]string{
		"mode off":        attemptEnv("1", map[string]string{"NEMO_LENS_TRACE_PER_ATTEMPT": "0"}),
		"has TRACEPARENT": attemptEnv("1", map[string]string{"TRACEPARENT": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}),
	} {
		r := runIn(t, env, "", "env", "--stage", "sbatch")
		if r.code != 0 || strings.Contains(r.stdout, "TRACEPARENT") || strings.Count(r.stdout, "\n") != 1 {
			t.Errorf("%s: %v", name, r)
		}
	}
	r = runIn(t, attemptEnv("1", map[string]string{"NEMO_LENS_TRACE_PER_ATTEMPT": "sometimes"}), "", "env", "--stage", "sbatch")
	if r.code != 0 || strings.Contains(r.stdout, "TRACEPARENT") || !strings.Contains(r.stderr, "NEMO_LENS_TRACE_PER_ATTEMPT") {
		t.Errorf("bad switch: %v, want the carrier line and a message", r)
	}
}
