package lens_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/log"
	lognoop "go.opentelemetry.io/otel/log/noop"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/environ"
)

// reinitSetup is an enabled Setup with every signal, the globals installed
// and WithAllowReinit.
func reinitSetup(t testing.TB) *lens.Handle {
	t.Helper()
	cfg := enabledConfig()
	cfg.LogsEnabled = true
	opts := append(quietOptions(t, environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=0"}),
		lens.WithLogExporter(&logRecorder{}), lens.WithAllowReinit())
	h, err := lens.Setup(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	return h
}

// globalsAre reports which of the globals are not the given ones.
func globalsAre(tp trace.TracerProvider, mp metric.MeterProvider, lp log.LoggerProvider) string {
	var wrong []string
	if otel.GetTracerProvider() != tp {
		wrong = append(wrong, fmt.Sprintf("tracer provider %T", otel.GetTracerProvider()))
	}
	if otel.GetMeterProvider() != mp {
		wrong = append(wrong, fmt.Sprintf("meter provider %T", otel.GetMeterProvider()))
	}
	if otel.GetLoggerProvider() != lp {
		wrong = append(wrong, fmt.Sprintf("logger provider %T", otel.GetLoggerProvider()))
	}
	return strings.Join(wrong, ", ")
}

func globalsOf(h *lens.Handle) (trace.TracerProvider, metric.MeterProvider, log.LoggerProvider) {
	return h.TracerProvider(), h.MeterProvider(), h.LoggerProvider()
}

// globalRecording reports whether a span of the global tracer provider
// records.
func globalRecording() bool {
	_, span := otel.Tracer("x").Start(context.Background(), "probe")
	defer span.End()
	return span.IsRecording()
}

// TestReinitGlobals: with WithAllowReinit, Setup A, Setup B and their
// Shutdowns in either order: while B is live its providers are the globals
// (otel.Tracer spans record, also after A's Shutdown), and after both the
// globals are what they were before A — never a provider that is shut
// down. Not parallel: it changes the process globals.
func TestReinitGlobals(t *testing.T) {
	origTP, origMP, origLP, origProp := otel.GetTracerProvider(), otel.GetMeterProvider(), otel.GetLoggerProvider(), otel.GetTextMapPropagator()
	t.Cleanup(func() {
		otel.SetTracerProvider(origTP)
		otel.SetMeterProvider(origMP)
		otel.SetLoggerProvider(origLP)
		otel.SetTextMapPropagator(origProp)
	})
	// Live providers of the program, installed before Lens.
	tp0 := sdktrace.NewTracerProvider()
	mp0 := sdkmetric.NewMeterProvider()
	lp0 := sdklog.NewLoggerProvider()
	prop0 := propagation.NewCompositeTextMapPropagator() // no fields: Lens installs its own
	otel.SetTracerProvider(tp0)
	otel.SetMeterProvider(mp0)
	otel.SetLoggerProvider(lp0)
	otel.SetTextMapPropagator(prop0)
	ctx := context.Background()

	for _, order := range []string{"A-first", "B-first"} {
		t.Run(order, func(t *testing.T) {
			a := reinitSetup(t)
			b := reinitSetup(t)
			if wrong := globalsAre(globalsOf(b)); wrong != "" {
				t.Fatalf("after Setup B, not B's: %s", wrong)
			}
			first, second := a, b
			if order == "B-first" {
				first, second = b, a
			}
			if err := first.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if wrong := globalsAre(globalsOf(second)); wrong != "" {
				t.Errorf("after the first Shutdown, not the live Handle's: %s", wrong)
			}
			if !globalRecording() {
				t.Error("after the first Shutdown, otel.Tracer spans do not record")
			}
			if f := otel.GetTextMapPropagator().Fields(); len(f) == 0 {
				t.Error("after the first Shutdown, the global propagator is a no-op")
			}
			if err := second.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if wrong := globalsAre(tp0, mp0, lp0); wrong != "" {
				t.Errorf("after both Shutdowns, not the program's providers: %s", wrong)
			}
			if !globalRecording() {
				t.Error("after both Shutdowns, otel.Tracer spans do not record")
			}
			if f := otel.GetTextMapPropagator().Fields(); len(f) != 0 {
				t.Errorf("after both Shutdowns, the global propagator has fields %q, want the program's no-op", f)
			}
		})
	}
}

// reinitResult is what the "reinit" scenario saw.
type reinitResult struct {
	RecordingWhileBLive bool
	TracerAfterBoth     string // the type of the global tracer provider
	MeterAfterBoth      string
	LoggerAfterBoth     string
	NoopAfterBoth       bool
}

// helperReinit, in a fresh process (globals never set): Setup A, Setup B,
// Shutdown A, Shutdown B.
func helperReinit(t *testing.T) reinitResult {
	var r reinitResult
	ctx := context.Background()
	a := reinitSetup(t)
	b := reinitSetup(t)
	_ = a.Shutdown(ctx)
	r.RecordingWhileBLive = globalRecording()
	_ = b.Shutdown(ctx)
	tp, mp, lp := otel.GetTracerProvider(), otel.GetMeterProvider(), otel.GetLoggerProvider()
	r.TracerAfterBoth, r.MeterAfterBoth, r.LoggerAfterBoth = fmt.Sprintf("%T", tp), fmt.Sprintf("%T", mp), fmt.Sprintf("%T", lp)
	r.NoopAfterBoth = tp == tracenoop.TracerProvider{} && mp == metricnoop.MeterProvider{} && lp == lognoop.LoggerProvider{}
	return r
}

// TestReinitGlobalsFreshProcess: in a process whose globals were never
// set, the sequence of TestReinitGlobals leaves no-op providers: the
// globals' default delegates forward, for good, to the first provider
// installed (A's, shut down), so they are not put back.
func TestReinitGlobalsFreshProcess(t *testing.T) {
	t.Parallel()
	var r reinitResult
	runHelper(t, "reinit", nil, &r)
	if !r.RecordingWhileBLive {
		t.Error("after A's Shutdown, with B live, otel.Tracer spans do not record")
	}
	if !r.NoopAfterBoth {
		t.Errorf("after both Shutdowns the globals are %s, %s, %s; want the no-op providers", r.TracerAfterBoth, r.MeterAfterBoth, r.LoggerAfterBoth)
	}
}
