package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/jaeger"
	"github.com/nemolens/lens-go/e2e/internal/worker"
)

// TestLensExecJaeger (issue 5): `lens exec --role trainer --attr
// nv.dl.rank=0 --command-args -- worker` with telemetry enabled. lens exec
// records a wrapper span for the worker's lifetime and hands its context to
// the worker in TRACEPARENT; the worker (lens.Setup, one span continuing
// TRACEPARENT) must come back from Jaeger as the wrapper's CHILD_OF child,
// in the same trace, with nv.dl.role and nv.dl.rank from the carrier lens
// exec composed. The two processes have distinct instance ids: the worker
// "<run>-rank0", the wrapper "<run>-rank0.lens-exec.<lens's pid>"
// (docs/resource.md#instance-ids-of-wrappers-and-children). The span
// records every argument (process.command_args) only with --command-args;
// without it only their number (process.args_count).
func TestLensExecJaeger(t *testing.T) {
	elapsed(t)
	j := jaeger.StartForTest(t)
	workerBin := workerBinary(t)
	lensBin := lensBinary(t)
	host := hostname(t)
	wrapperName := "lens exec " + filepath.Base(workerBin)

	t.Run("ok", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		service := uniqueName("lens-e2e-exec")
		runID := uniqueName("run-exec")
		out := outDir(t)
		env := lensEnv(os.Environ(), append(exportTo(j, service), "NEMO_LENS_RUN_ID="+runID)...)
		args := []string{"-span", "exec-work", "-out", out, "-label", "execw"}
		runCmd(ctx, t, env, 0, lensBin, append([]string{"exec", "--role", "trainer", "--attr", "nv.dl.rank=0", "--command-args", "--", workerBin}, args...)...)

		rec := records(t, out, "execw", 1)[0]
		if rec.Traceparent == "" || rec.ParentSpanID == "" {
			t.Fatalf("worker received TRACEPARENT %q (parent span %q), want lens exec's span context", rec.Traceparent, rec.ParentSpanID)
		}
		// lens exec passes the composed carrier: nv.dl.role and nv.dl.rank as
		// overrides, in flag order after the (empty) current carrier.
		if want := carrierText("nv.dl.rank", "0", "nv.dl.role", "trainer"); rec.Carrier != want {
			t.Errorf("worker carrier %q, want %q", rec.Carrier, want)
		}
		tr, err := j.WaitSpans(ctx, rec.TraceID, 2)
		if err != nil {
			t.Fatal(err)
		}
		wrapper, child := execSpans(t, tr, wrapperName, "exec-work", 2)
		if wrapper == nil || child == nil {
			return
		}
		checkParent(t, tr, wrapper, child, rec)
		if len(wrapper.References) != 0 {
			t.Errorf("wrapper span references %v, want a root span (lens had no TRACEPARENT)", wrapper.References)
		}

		// The wrapper span: the command and its outcome.
		checkTags(t, "wrapper span", wrapper.Tags,
			wstr("process.command", workerBin),
			wstr("process.executable.path", workerBin),
			wint("process.pid", int64(rec.PID)),
			wint("process.exit.code", 0),
			wint("process.args_count", int64(1+len(args))),
		)
		noTag(t, "wrapper span", wrapper.Tags, "error")
		noTag(t, "wrapper span", wrapper.Tags, "otel.status_code")
		checkCommandArgs(ctx, t, j, tr.TraceID, wrapper.SpanID, append([]string{workerBin}, args...))

		// Both resources: role and rank from the composed carrier (the
		// worker) or the caller attributes (lens exec), typed.
		common := []tagWant{
			wstr("nv.dl.role", "trainer"),
			wint("nv.dl.rank", 0),
			wstr("nemo.run.id", runID),
			wstr("telemetry.sdk.language", "go"),
			wstr("host.name", host),
		}
		wp, _ := tr.SpanProcess(wrapper)
		cp, _ := tr.SpanProcess(child)
		if wp == nil || cp == nil || wp.ServiceName != service || cp.ServiceName != service {
			t.Fatalf("processes %+v / %+v, want both of service %q", wp, cp, service)
		}
		checkTags(t, "worker process", cp.Tags, append(common,
			wint("process.pid", int64(rec.PID)),
			wstr("service.instance.id", runID+"-rank0"))...)
		// lens exec starts the worker as its child: its pid is the worker's
		// ppid, and its instance id is the worker's with ".lens-exec.<pid>".
		checkTags(t, "lens exec process", wp.Tags, append(common,
			wint("process.pid", int64(rec.PPID)),
			wstr("service.instance.id", runID+"-rank0.lens-exec."+strconv.Itoa(rec.PPID)))...)
		keys := append(slices.Concat(sdkTagKeys, lensTagKeys), "nv.dl.role", "nv.dl.rank", "service.instance.id")
		checkTagKeys(t, "worker process", cp.Tags, keys, optionalHWKey)
		checkTagKeys(t, "lens exec process", wp.Tags, keys, optionalHWKey)
	})

	// Without --command-args the arguments, which may hold secrets, are not
	// recorded: no process.command_args on the span (neither in the v3 OTLP
	// form nor as a v1 tag), only process.args_count.
	t.Run("no-command-args", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		service := uniqueName("lens-e2e-exec-noargs")
		runID := uniqueName("run-noargs")
		out := outDir(t)
		env := lensEnv(os.Environ(), append(exportTo(j, service), "NEMO_LENS_RUN_ID="+runID)...)
		args := []string{"-span", "quiet-work", "-out", out, "-label", "noargs"}
		runCmd(ctx, t, env, 0, lensBin, append([]string{"exec", "--attr", "nv.dl.rank=2", "--", workerBin}, args...)...)

		rec := records(t, out, "noargs", 1)[0]
		tr, err := j.WaitSpans(ctx, rec.TraceID, 2)
		if err != nil {
			t.Fatal(err)
		}
		wrapper, child := execSpans(t, tr, wrapperName, "quiet-work", 2)
		if wrapper == nil || child == nil {
			return
		}
		checkParent(t, tr, wrapper, child, rec)
		checkTags(t, "wrapper span", wrapper.Tags,
			wstr("process.command", workerBin),
			wint("process.args_count", int64(1+len(args))),
			wint("process.exit.code", 0))
		noTag(t, "wrapper span", wrapper.Tags, "process.command_args")
		checkCommandArgs(ctx, t, j, tr.TraceID, wrapper.SpanID, nil)
		if wp, ok := tr.SpanProcess(wrapper); ok {
			checkTags(t, "lens exec process", wp.Tags, wstr("service.instance.id", runID+"-rank2.lens-exec."+strconv.Itoa(rec.PPID)))
		}
	})

	// A failing command under an incoming trace context: lens exec's span
	// continues lens's own TRACEPARENT, records the exit status and an Error
	// status, and lens exits with the command's status.
	t.Run("exit-status-and-incoming-traceparent", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		service := uniqueName("lens-e2e-exec-fail")
		out := outDir(t)
		const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
		env := lensEnv(os.Environ(), append(exportTo(j, service),
			"NEMO_LENS_RUN_ID=run-fail", "TRACEPARENT=00-"+traceID+"-"+parentID+"-01")...)
		runCmd(ctx, t, env, 3, lensBin, "exec", "--role", "trainer", "--attr", "nv.dl.rank=1", "--",
			workerBin, "-span", "failing-work", "-out", out, "-label", "failw", "-exit", "3")

		rec := records(t, out, "failw", 1)[0]
		if rec.TraceID != traceID {
			t.Errorf("worker trace id %s, want the incoming %s", rec.TraceID, traceID)
		}
		tr, err := j.WaitSpans(ctx, traceID, 2)
		if err != nil {
			t.Fatal(err)
		}
		wrapper, child := execSpans(t, tr, wrapperName, "failing-work", 2)
		if wrapper == nil || child == nil {
			return
		}
		checkParent(t, tr, wrapper, child, rec)
		if want := []jaeger.Reference{{RefType: "CHILD_OF", TraceID: traceID, SpanID: parentID}}; !slices.Equal(wrapper.References, want) {
			t.Errorf("wrapper span references %v, want %v (lens's TRACEPARENT)", wrapper.References, want)
		}
		checkTags(t, "wrapper span", wrapper.Tags,
			wint("process.exit.code", 3),
			wint("process.pid", int64(rec.PID)),
			wbool("error", true),
			wstr("otel.status_code", "ERROR"),
		)
		if cp, ok := tr.SpanProcess(child); ok {
			checkTags(t, "worker process", cp.Tags, wint("nv.dl.rank", 1), wstr("service.instance.id", "run-fail-rank1"))
		}
		if wp, ok := tr.SpanProcess(wrapper); ok {
			checkTags(t, "lens exec process", wp.Tags, wint("nv.dl.rank", 1),
				wstr("service.instance.id", "run-fail-rank1.lens-exec."+strconv.Itoa(rec.PPID)))
		}
	})
}

// execSpans returns the wrapper and the worker span of a lens exec trace
// with n spans.
func execSpans(t *testing.T, tr *jaeger.Trace, wrapperName, childName string, n int) (wrapper, child *jaeger.Span) {
	t.Helper()
	if len(tr.Spans) != n {
		t.Errorf("trace %s: %d spans, want %d: %+v", tr.TraceID, len(tr.Spans), n, tr.Spans)
	}
	var ok bool
	if wrapper, ok = tr.Span(wrapperName); !ok {
		t.Errorf("trace %s: no span %q", tr.TraceID, wrapperName)
	}
	if child, ok = tr.Span(childName); !ok {
		t.Errorf("trace %s: no span %q", tr.TraceID, childName)
	}
	return wrapper, child
}

// checkParent requires child to be the CHILD_OF child of wrapper, in the
// same trace, as the worker's record also says.
func checkParent(t *testing.T, tr *jaeger.Trace, wrapper, child *jaeger.Span, rec worker.Record) {
	t.Helper()
	if child.SpanID != rec.SpanID || child.TraceID != rec.TraceID {
		t.Errorf("worker span %s/%s, the worker recorded %s/%s", child.TraceID, child.SpanID, rec.TraceID, rec.SpanID)
	}
	if wrapper.TraceID != child.TraceID || wrapper.TraceID != tr.TraceID {
		t.Errorf("wrapper trace %s, worker trace %s: want one trace", wrapper.TraceID, child.TraceID)
	}
	want := []jaeger.Reference{{RefType: "CHILD_OF", TraceID: wrapper.TraceID, SpanID: wrapper.SpanID}}
	if !slices.Equal(child.References, want) {
		t.Errorf("worker span references %v, want %v (the wrapper span)", child.References, want)
	}
	if rec.ParentSpanID != wrapper.SpanID {
		t.Errorf("worker's TRACEPARENT parent span %s, want the wrapper span %s", rec.ParentSpanID, wrapper.SpanID)
	}
	if child.ProcessID == wrapper.ProcessID {
		t.Errorf("wrapper and worker spans share process %s, want two resources (two processes)", child.ProcessID)
	}
	// The worker runs inside the wrapper's lifetime.
	if child.StartTime < wrapper.StartTime || child.StartTime+child.Duration > wrapper.StartTime+wrapper.Duration {
		t.Errorf("worker span [%d, +%d] µs is not inside the wrapper span [%d, +%d] µs",
			child.StartTime, child.Duration, wrapper.StartTime, wrapper.Duration)
	}
}

// checkCommandArgs reads process.command_args from the v3 API, which keeps
// the OTLP array (the v1 API flattens arrays into JSON strings). A nil want
// requires the attribute to be absent.
func checkCommandArgs(ctx context.Context, t *testing.T, j *jaeger.Jaeger, traceID, spanID string, want []string) {
	t.Helper()
	otlp, err := j.TraceOTLP(ctx, traceID)
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range otlp.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				if !strings.EqualFold(s.SpanID, spanID) {
					continue
				}
				v, ok := s.Attr("process.command_args")
				if want == nil {
					if ok {
						t.Errorf("wrapper span: process.command_args = %v, want none without --command-args", v)
					}
					return
				}
				if !ok || v.ArrayValue == nil {
					t.Errorf("wrapper span: process.command_args = %v (found %v), want an array", v, ok)
					return
				}
				var got []string
				for _, e := range v.ArrayValue.Values {
					if e.StringValue == nil {
						t.Errorf("process.command_args element %v is not a string", e)
						return
					}
					got = append(got, *e.StringValue)
				}
				if !slices.Equal(got, want) {
					t.Errorf("process.command_args = %q, want %q", got, want)
				}
				return
			}
		}
	}
	t.Errorf("v3 trace %s: no span %s", traceID, spanID)
}
