package lens_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	lognoop "go.opentelemetry.io/otel/log/noop"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/lensconv"
)

func enabledConfig() lens.Config {
	c := lens.DefaultConfig()
	c.Enabled = true
	c.RunID = "run1"
	return c
}

// quietOptions are the options of a test Setup that must not touch the
// process: injected environment and host facts, in-memory exporters.
func quietOptions(t testing.TB, env environ.Map) []lens.SetupOption {
	logger, _ := newCapture()
	return []lens.SetupOption{
		lens.WithEnv(env),
		lens.WithDetectOptions(detectOptions(t, defaultLive)...),
		lens.WithSpanExporter(tracetest.NewInMemoryExporter()),
		lens.WithMetricReader(sdkmetric.NewManualReader()),
		lens.WithLogger(logger),
	}
}

func TestSetupDisabled(t *testing.T) {
	t.Parallel()
	for _, cfg := range []lens.Config{{}, lens.DefaultConfig()} {
		h, err := lens.Setup(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if h.IsExporting() {
			t.Error("disabled handle is exporting")
		}
		ctx, span := h.Tracer("t").Start(context.Background(), "s")
		if span.IsRecording() || trace.SpanContextFromContext(ctx).IsValid() {
			t.Error("disabled tracer records")
		}
		span.End()
		c, err := h.Meter("t").Int64Counter("c")
		if err != nil {
			t.Fatal(err)
		}
		c.Add(ctx, 1)
		h.Logger().InfoContext(ctx, "discarded")
		if h.Resource().Len() != 0 || h.Attributes().Len() != 0 || h.SpanCounts().Dropped != 0 {
			t.Errorf("disabled handle has a resource %v", h.Attributes())
		}
		if got := h.Config(); got.ServiceName != "nemo" || got.Exporter != "otlp" || got.RunID != "" {
			t.Errorf("Config() = %+v", got)
		}
		if err := h.ForceFlush(ctx); err != nil {
			t.Error(err)
		}
		if err := h.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := h.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}
}

// TestSetupDisabledAllocs: a disabled Setup is one allocation. Not
// parallel: AllocsPerRun counts every goroutine's allocations.
func TestSetupDisabledAllocs(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		h, _ := lens.Setup(context.Background(), lens.Config{})
		_ = h.Shutdown(context.Background())
	})
	if allocs > 1 {
		t.Errorf("disabled Setup+Shutdown allocates %v times, want at most 1", allocs)
	}
}

func TestNilHandle(t *testing.T) {
	t.Parallel()
	var h *lens.Handle
	_, span := h.Tracer("t").Start(context.Background(), "s")
	span.End()
	h.Logger().Info("x")
	if h.IsExporting() || h.Resource() == nil || h.Attributes().Len() != 0 || h.Config().ServiceName != "nemo" ||
		h.Shutdown(context.Background()) != nil || h.ForceFlush(context.Background()) != nil || h.SpanCounts().Dropped != 0 {
		t.Error("nil handle misbehaves")
	}
	if h.MeterProvider() == nil || h.LoggerProvider() == nil || h.TracerProvider() == nil {
		t.Error("nil providers")
	}
}

// TestSetupGuard: one enabled setup per process (docs/resource.md#setup-once). Not parallel:
// it needs the guard free.
func TestSetupGuard(t *testing.T) {
	ctx := context.Background()
	opts := func(extra ...lens.SetupOption) []lens.SetupOption {
		return append(append(quietOptions(t, environ.Map{}), lens.WithoutGlobals()), extra...)
	}
	h1, err := lens.Setup(ctx, enabledConfig(), opts()...)
	if err != nil {
		t.Fatal(err)
	}
	if !h1.IsExporting() {
		t.Error("enabled handle not exporting")
	}
	if _, err := lens.Setup(ctx, enabledConfig(), opts()...); !errors.Is(err, lens.ErrAlreadySetUp) {
		t.Errorf("second Setup: err %v, want ErrAlreadySetUp", err)
	}
	// A disabled Setup never conflicts.
	if _, err := lens.Setup(ctx, lens.Config{}); err != nil {
		t.Errorf("disabled Setup while enabled: %v", err)
	}
	h2, err := lens.Setup(ctx, enabledConfig(), opts(lens.WithAllowReinit())...)
	if err != nil {
		t.Fatalf("Setup with WithAllowReinit: %v", err)
	}
	if err := h1.Shutdown(ctx); err != nil {
		t.Error(err)
	}
	if err := h1.Shutdown(ctx); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
	// h2 is still active.
	if _, err := lens.Setup(ctx, enabledConfig(), opts()...); !errors.Is(err, lens.ErrAlreadySetUp) {
		t.Errorf("Setup while the reinit handle is active: err %v", err)
	}
	if err := h2.Shutdown(ctx); err != nil {
		t.Error(err)
	}
	h3, err := lens.Setup(ctx, enabledConfig(), opts()...)
	if err != nil {
		t.Fatalf("Setup after Shutdown: %v", err)
	}
	if err := h3.Shutdown(ctx); err != nil {
		t.Error(err)
	}
	// A failed Setup does not take the guard.
	bad := enabledConfig()
	bad.Exporter = "zipkin"
	if _, err := lens.Setup(ctx, bad, opts()...); !errors.Is(err, lens.ErrUnknownExporter) {
		t.Errorf("err %v, want ErrUnknownExporter", err)
	}
	h4, err := lens.Setup(ctx, enabledConfig(), opts()...)
	if err != nil {
		t.Fatalf("Setup after a failed Setup: %v", err)
	}
	_ = h4.Shutdown(ctx)
}

// TestSetupGlobals: enabled Setup installs the globals and Shutdown puts
// the previous ones back. Not parallel: it changes process globals.
func TestSetupGlobals(t *testing.T) {
	ctx := context.Background()
	prevTP, prevMP, prevLP := otel.GetTracerProvider(), otel.GetMeterProvider(), otel.GetLoggerProvider()
	cfg := enabledConfig()
	cfg.LogsEnabled = true
	h, err := lens.Setup(ctx, cfg, append(quietOptions(t, environ.Map{}), lens.WithLogExporter(&logRecorder{}))...)
	if err != nil {
		t.Fatal(err)
	}
	if otel.GetTracerProvider() != h.TracerProvider() || otel.GetMeterProvider() != h.MeterProvider() ||
		otel.GetLoggerProvider() != h.LoggerProvider() {
		t.Error("globals not installed")
	}
	fields := strings.Join(otel.GetTextMapPropagator().Fields(), ",")
	if !strings.Contains(fields, "traceparent") || !strings.Contains(fields, "baggage") {
		t.Errorf("global propagator fields %q, want traceparent and baggage", fields)
	}
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// The previous ones, or no-op providers where they were the globals'
	// default delegates: those forward to the first provider ever installed,
	// the one Shutdown has just stopped.
	if !restoredTo(otel.GetTracerProvider(), prevTP, tracenoop.TracerProvider{}) ||
		!restoredTo(otel.GetMeterProvider(), prevMP, metricnoop.MeterProvider{}) ||
		!restoredTo(otel.GetLoggerProvider(), prevLP, lognoop.LoggerProvider{}) {
		t.Errorf("globals not restored: %T, %T, %T (before %T, %T, %T)", otel.GetTracerProvider(), otel.GetMeterProvider(), otel.GetLoggerProvider(), prevTP, prevMP, prevLP)
	}

	// WithoutGlobals leaves them alone.
	h, err = lens.Setup(ctx, enabledConfig(), append(quietOptions(t, environ.Map{}), lens.WithoutGlobals())...)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Shutdown(ctx)
	if otel.GetTracerProvider() == h.TracerProvider() {
		t.Error("WithoutGlobals installed the tracer provider")
	}
}

// restoredTo reports whether got is prev, or noop when prev is one of the
// OpenTelemetry globals' default delegates (type *global.…).
func restoredTo(got, prev, noop any) bool {
	if strings.HasPrefix(fmt.Sprintf("%T", prev), "*global.") {
		return got == noop
	}
	return got == prev
}

func TestSetupConfigErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		cfg     func(*lens.Config)
		env     environ.Map
		target  error
		varName string
	}{
		{name: "unknown-exporter", cfg: func(c *lens.Config) { c.Exporter = "OTLP" }, target: lens.ErrUnknownExporter},
		{name: "bad-protocol", env: environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, target: lens.ErrInvalidProtocol, varName: "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{
			name:    "bad-signal-protocol",
			cfg:     func(c *lens.Config) { c.LogsEnabled = true },
			env:     environ.Map{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "udp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			target:  lens.ErrInvalidProtocol,
			varName: "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := enabledConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			logger, _ := newCapture()
			h, err := lens.Setup(ctx, cfg, lens.WithEnv(tc.env), lens.WithAllowReinit(), lens.WithoutGlobals(),
				lens.WithLogger(logger), lens.WithDetectOptions(detectOptions(t, defaultLive)...))
			if !errors.Is(err, tc.target) || h != nil {
				t.Fatalf("Setup: %v, want %v", err, tc.target)
			}
			var ce *lens.ConfigError
			if tc.varName != "" && (!errors.As(err, &ce) || ce.Var != tc.varName) {
				t.Errorf("error %v does not name %s", err, tc.varName)
			}
		})
	}
}

// TestProtocolsNotReadForInjectedExporters: a bad protocol does not matter
// when every signal's exporter is injected.
func TestProtocolsNotReadForInjectedExporters(t *testing.T) {
	t.Parallel()
	f := setupFixture(t, enabledConfig(), environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, rank0, defaultLive)
	if !f.h.IsExporting() {
		t.Error("not exporting")
	}
}

// blockingExporter blocks every export until released.
type blockingExporter struct {
	release chan struct{}
	entered chan struct{} // when not nil, receives (without blocking) on every export call
	mu      sync.Mutex
	got     int
}

func (e *blockingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.entered != nil {
		select {
		case e.entered <- struct{}{}:
		default:
		}
	}
	select {
	case <-e.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	e.mu.Lock()
	e.got += len(spans)
	e.mu.Unlock()
	return nil
}

func (e *blockingExporter) Shutdown(context.Context) error { return nil }

// TestDroppedSpans: with the export stuck, spans beyond the queue are
// dropped (not blocked) and counted. A queue of 8 with batches of 4: the
// first batch is handed to the exporter, which blocks; 8 more are queued;
// the rest drop.
func TestDroppedSpans(t *testing.T) {
	t.Parallel()
	exp := &blockingExporter{release: make(chan struct{}), entered: make(chan struct{}, 1)}
	f := setupFixture(t, enabledConfig(), environ.Map{"OTEL_BSP_MAX_QUEUE_SIZE": "8", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "4"},
		rank0, defaultLive, lens.WithSpanExporter(exp))
	tr := f.h.Tracer("t")
	end := func(n int) {
		for range n {
			_, s := tr.Start(context.Background(), "s")
			s.End() // must not block although the exporter is stuck
		}
	}
	end(4)
	<-exp.entered // the first batch is being exported
	end(10)
	c := f.h.SpanCounts()
	if c.Dropped != 2 || c.Ended != 14 || c.Pending != 12 {
		t.Errorf("counts %+v, want 14 ended, 2 dropped, 12 pending", c)
	}
	close(exp.release)
	if err := f.h.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	exp.mu.Lock()
	got := exp.got
	exp.mu.Unlock()
	if got != 12 {
		t.Errorf("exported %d spans, want 12", got)
	}
	// The queue has room again.
	end(1)
	if err := f.h.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := f.h.SpanCounts(); c != (lens.SpanCounts{Ended: 15, Exported: 13, Dropped: 2}) {
		t.Errorf("counts %+v after the queue drained, want 15 ended, 13 exported, 2 dropped", c)
	}
}

func TestConsoleExporter(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	cfg := enabledConfig()
	cfg.Exporter = lens.ExporterConsole
	cfg.LogsEnabled = true
	logger, _ := newCapture()
	h, err := lens.Setup(context.Background(), cfg,
		lens.WithEnv(environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=2"}),
		lens.WithDetectOptions(detectOptions(t, defaultLive)...),
		lens.WithConsoleWriter(&buf), lens.WithAllowReinit(), lens.WithoutGlobals(), lens.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := h.Tracer("t").Start(context.Background(), "console-span")
	h.Logger().InfoContext(ctx, "console-log")
	span.End()
	c, _ := h.Meter("t").Int64Counter("console.counter")
	c.Add(ctx, 1)
	if err := h.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"console-span", "console-log", "console.counter", "run1-rank2"} {
		if !strings.Contains(out, want) {
			t.Errorf("console output lacks %q", want)
		}
	}
}

// TestLogsBridge: Handle.Logger emits trace-correlated records with the
// Lens resource.
func TestLogsBridge(t *testing.T) {
	t.Parallel()
	rec := &logRecorder{}
	cfg := enabledConfig()
	cfg.LogsEnabled = true
	f := setupFixture(t, cfg, environ.Map{}, rank0, defaultLive, lens.WithLogExporter(rec))
	ctx, span := f.h.Tracer("t").Start(context.Background(), "s")
	f.h.Logger().InfoContext(ctx, "hello", "k", "v")
	span.End()
	if err := f.h.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs := rec.records()
	if len(recs) != 1 {
		t.Fatalf("%d log records, want 1", len(recs))
	}
	r := recs[0]
	if r.Body().AsString() != "hello" || r.TraceID() != span.SpanContext().TraceID() || r.SpanID() != span.SpanContext().SpanID() {
		t.Errorf("record %q trace %v span %v, want hello and the span's ids", r.Body().AsString(), r.TraceID(), r.SpanID())
	}
	if got := r.InstrumentationScope().Name; got != lens.InstrumentationName {
		t.Errorf("scope %q", got)
	}
	got, _ := attr.FromResource(r.Resource())
	for k, v := range f.h.Attributes().All() {
		if g, ok := got.Get(k); !ok || !g.Equal(v) {
			t.Errorf("log resource %s = %v, want %v", k, g, v)
		}
	}
}

// TestMetricExporterGetsLensResource: Lens's periodic reader stamps the
// Lens resource.
func TestMetricExporterGetsLensResource(t *testing.T) {
	t.Parallel()
	rec := &metricRecorder{}
	logger, _ := newCapture()
	h, err := lens.Setup(context.Background(), enabledConfig(),
		lens.WithEnv(environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=1"}),
		lens.WithDetectOptions(detectOptions(t, defaultLive)...),
		lens.WithSpanExporter(tracetest.NewInMemoryExporter()),
		lens.WithMetricExporter(rec), lens.WithAllowReinit(), lens.WithoutGlobals(), lens.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Shutdown(context.Background())
	c, _ := h.Meter("t").Int64Counter("c")
	c.Add(context.Background(), 1)
	if err := h.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	seen := rec.resources()
	if len(seen) == 0 {
		t.Fatal("no metric export")
	}
	if !sameSet(seen[0], h.Attributes()) {
		t.Errorf("metric resource %v, want %v", seen[0], h.Attributes())
	}
	if v, _ := seen[0].Get(lensconv.ServiceInstanceID); v.AsString() != "run1-rank1" {
		t.Errorf("service.instance.id = %v", v)
	}
}

func TestShutdownHonoursDeadline(t *testing.T) {
	t.Parallel()
	exp := &blockingExporter{release: make(chan struct{})}
	defer close(exp.release)
	f := setupFixture(t, enabledConfig(), environ.Map{}, rank0, defaultLive, lens.WithSpanExporter(exp))
	_, s := f.h.Tracer("t").Start(context.Background(), "stuck")
	s.End()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := f.h.Shutdown(ctx)
	t.Logf("Shutdown with a stuck exporter returned after %v: %v", time.Since(start), err)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v, want a deadline error", err)
	}
	if err := f.h.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}
