package telemetry

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/traceid"
)

// The attempt of docs/tracing.md#trace-per-attempt's worked example, and
// its previous attempt: the UUIDs' hex digits and the anchor written out.
var (
	attemptTID, _  = trace.TraceIDFromHex("be42db52ed955653b035190f2392e702")
	previousTID, _ = trace.TraceIDFromHex("1a280c0a71d254bdbd00fa82efd94290")
	previousAnchor = "8fa650cf8ac0adb1"
)

// TestTracePerAttempt: with the mode on, a root span is in the attempt's
// trace and links to the previous attempt's anchor, a child is not linked,
// a requested trace id wins over the attempt's, and a TRACEPARENT wins over
// both; with the mode off, roots get random trace ids.
func TestTracePerAttempt(t *testing.T) {
	t.Parallel()
	attempt := traceid.Attempt{TraceID: attemptTID, Previous: previousTID}
	asked, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	start := func(t *testing.T, on bool, env environ.Map, ctx context.Context) tracetest.SpanStubs {
		t.Helper()
		exp := tracetest.NewInMemoryExporter()
		s := testSettings(16, 16)
		s.TracePerAttempt = on
		s.Propagator = DefaultPropagator()
		tr, err := NewTracing(context.Background(), resource.Empty(), s, TracingOptions{Exporter: exp, Env: env, Attempt: attempt})
		if err != nil {
			t.Fatal(err)
		}
		tracer := tr.Provider().Tracer("test")
		cctx, root := tracer.Start(ctx, "root")
		_, child := tracer.Start(cctx, "child")
		child.End()
		root.End()
		_, newRoot := tracer.Start(cctx, "new root", trace.WithNewRoot())
		newRoot.End()
		if err := tr.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
		spans := exp.GetSpans() // before Shutdown, which empties the exporter
		_ = tr.Shutdown(context.Background())
		return spans
	}
	byName := func(spans tracetest.SpanStubs) map[string]tracetest.SpanStub {
		m := map[string]tracetest.SpanStub{}
		for _, s := range spans {
			m[s.Name] = s
		}
		return m
	}

	t.Run("on", func(t *testing.T) {
		t.Parallel()
		got := byName(start(t, true, environ.Map{}, context.Background()))
		for _, name := range []string{"root", "child", "new root"} {
			if tid := got[name].SpanContext.TraceID(); tid != attemptTID {
				t.Errorf("%s: trace %s, want the attempt's %s", name, tid, attemptTID)
			}
		}
		for _, name := range []string{"root", "new root"} {
			links := got[name].Links
			if len(links) != 1 || links[0].SpanContext.TraceID() != previousTID || links[0].SpanContext.SpanID().String() != previousAnchor {
				t.Errorf("%s: links %v, want one to %s/%s", name, links, previousTID, previousAnchor)
			}
		}
		if len(got["child"].Links) != 0 {
			t.Errorf("child has links %v", got["child"].Links)
		}
	})
	t.Run("requested trace id wins", func(t *testing.T) {
		t.Parallel()
		got := byName(start(t, true, environ.Map{}, traceid.WithTraceID(context.Background(), asked)))
		if r := got["root"]; r.SpanContext.TraceID() != asked || len(r.Links) != 0 {
			t.Errorf("root: trace %s, links %v; want %s and none", r.SpanContext.TraceID(), r.Links, asked)
		}
	})
	t.Run("TRACEPARENT wins", func(t *testing.T) {
		t.Parallel()
		env := environ.Map{"TRACEPARENT": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
		got := byName(start(t, true, env, context.Background()))
		r := got["root"]
		if r.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || r.Parent.SpanID().String() != "00f067aa0ba902b7" || len(r.Links) != 0 {
			t.Errorf("root: trace %s parent %s links %v; want TRACEPARENT's, no link", r.SpanContext.TraceID(), r.Parent.SpanID(), r.Links)
		}
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		got := byName(start(t, false, environ.Map{}, context.Background()))
		if r := got["root"]; r.SpanContext.TraceID() == attemptTID || !r.SpanContext.TraceID().IsValid() || len(r.Links) != 0 {
			t.Errorf("root: trace %s, links %v; want a random trace, no link", r.SpanContext.TraceID(), r.Links)
		}
	})
}

// TestTracePerAttemptWithoutIdentity: the mode on without an attempt is
// said, once, and traces are random.
func TestTracePerAttemptWithoutIdentity(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	d := NewDiagnostics(slog.New(slog.NewTextHandler(&buf, nil)))
	s := testSettings(16, 16)
	s.TracePerAttempt = true
	exp := tracetest.NewInMemoryExporter()
	tr, err := NewTracing(context.Background(), resource.Empty(), s, TracingOptions{Exporter: exp, Diagnostics: d, Env: environ.Map{}})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.Provider().Tracer("test").Start(context.Background(), "x")
	span.End()
	_ = tr.ForceFlush(context.Background())
	defer tr.Shutdown(context.Background())
	if n := strings.Count(buf.String(), TracePerAttemptEnv+" is on"); n != 1 {
		t.Errorf("warning said %d times: %q", n, buf.String())
	}
	if spans := exp.GetSpans(); len(spans) != 1 || !spans[0].SpanContext.TraceID().IsValid() {
		t.Errorf("spans %v", spans)
	}
}

func TestTracePerAttemptSetting(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{"": false, "1": true, " TRUE ": true, "on": true, "no": false} {
		s, err := ReadSettings(environ.Map{TracePerAttemptEnv: v}, Config{}, Needs{Traces: true})
		if err != nil || s.TracePerAttempt != want {
			t.Errorf("%s=%q: %v, %v; want %v", TracePerAttemptEnv, v, s.TracePerAttempt, err, want)
		}
	}
	_, err := ReadSettings(environ.Map{TracePerAttemptEnv: "maybe"}, Config{}, Needs{Traces: true})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Var != TracePerAttemptEnv || !errors.Is(err, ErrInvalidBool) {
		t.Errorf("bad value: %v, want a *ConfigError for %s", err, TracePerAttemptEnv)
	}
}
