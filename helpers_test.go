package lens_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// logRecord is one captured slog record.
type logRecord struct {
	Level  slog.Level
	Msg    string
	Logger string
	Attrs  map[string]string
}

// captureHandler records slog records for assertions.
type captureHandler struct {
	mu    *sync.Mutex
	recs  *[]logRecord
	attrs []slog.Attr
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{Level: r.Level, Msg: r.Message, Attrs: map[string]string{}}
	add := func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.String()
		if a.Key == "logger" {
			rec.Logger = a.Value.String()
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.recs = append(*h.recs, rec)
	return nil
}

func (h *captureHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *captureHandler) WithGroup(string) slog.Handler { return h }

// newCapture returns a logger and a function returning what it captured.
func newCapture() (*slog.Logger, func() []logRecord) {
	h := &captureHandler{mu: &sync.Mutex{}, recs: &[]logRecord{}}
	return slog.New(h), func() []logRecord {
		h.mu.Lock()
		defer h.mu.Unlock()
		return append([]logRecord(nil), *h.recs...)
	}
}

// providerLogs filters the records of the nemo.lens.providers logger.
func providerLogs(recs []logRecord) (warn, debug []logRecord) {
	for _, r := range recs {
		if r.Logger != "nemo.lens.providers" {
			continue
		}
		switch r.Level {
		case slog.LevelWarn:
			warn = append(warn, r)
		case slog.LevelDebug:
			debug = append(debug, r)
		}
	}
	return warn, debug
}

func rankWarnings(recs []logRecord) (warn, debug []logRecord) {
	w, d := providerLogs(recs)
	for _, r := range w {
		if strings.Contains(r.Msg, "cannot be filtered by rank") {
			warn = append(warn, r)
		}
	}
	for _, r := range d {
		if strings.Contains(r.Msg, "service.instance.id") {
			debug = append(debug, r)
		}
	}
	return warn, debug
}

// live describes the injected host facts.
type live struct {
	host       string
	pid        int
	gpu        *int
	k8sSecrets bool
}

func detectOptions(t testing.TB, l live) []detect.Option {
	path := filepath.Join(t.TempDir(), "no-such-kubernetes-secrets")
	if l.k8sSecrets {
		path = t.TempDir()
	}
	gpu := l.gpu
	return []detect.Option{
		detect.WithHostname(func() (string, error) { return l.host, nil }),
		detect.WithPID(l.pid),
		detect.WithGPUCount(func(context.Context) (int, bool) {
			if gpu == nil {
				return 0, false
			}
			return *gpu, true
		}),
		detect.WithKubernetesSecretsPath(path),
	}
}

var defaultLive = live{host: "real-host", pid: 4242}

// logRecorder is an sdklog.Exporter that keeps what it receives.
type logRecorder struct {
	mu   sync.Mutex
	recs []sdklog.Record
}

func (r *logRecorder) Export(_ context.Context, recs []sdklog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range recs {
		r.recs = append(r.recs, rec.Clone())
	}
	return nil
}

func (r *logRecorder) Shutdown(context.Context) error   { return nil }
func (r *logRecorder) ForceFlush(context.Context) error { return nil }

func (r *logRecorder) records() []sdklog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sdklog.Record(nil), r.recs...)
}

// metricRecorder is an sdkmetric.Exporter that keeps the resources it sees.
type metricRecorder struct {
	mu   sync.Mutex
	seen []*attr.Map
}

func (r *metricRecorder) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

func (r *metricRecorder) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (r *metricRecorder) Export(_ context.Context, rm *metricdata.ResourceMetrics) error {
	m, _ := attr.FromResource(rm.Resource)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, m)
	return nil
}

func (r *metricRecorder) ForceFlush(context.Context) error { return nil }
func (r *metricRecorder) Shutdown(context.Context) error   { return nil }

func (r *metricRecorder) resources() []*attr.Map {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*attr.Map(nil), r.seen...)
}

// fixture is an enabled Setup with in-memory exporters.
type fixture struct {
	h      *lens.Handle
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
	logs   func() []logRecord
	opts   []lens.ResourceOption // the resource options of the Setup
}

// setupFixture runs an enabled Setup (traces and metrics) with in-memory
// exporters, the injected env and live facts, no globals and
// WithAllowReinit, so that fixtures run in parallel.
func setupFixture(t testing.TB, cfg lens.Config, env environ.Map, caller *attr.Map, l live, opts ...lens.SetupOption) *fixture {
	t.Helper()
	logger, logs := newCapture()
	f := &fixture{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader(), logs: logs}
	cfg.Enabled = true
	all := append([]lens.SetupOption{
		lens.WithEnv(env),
		lens.WithDetectOptions(detectOptions(t, l)...),
		lens.WithResourceAttributes(caller.KeyValues()...),
		lens.WithSpanExporter(f.spans),
		lens.WithMetricReader(f.reader),
		lens.WithLogger(logger),
		lens.WithAllowReinit(),
		lens.WithoutGlobals(),
	}, opts...)
	h, err := lens.Setup(context.Background(), cfg, all...)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	f.h = h
	f.opts = []lens.ResourceOption{lens.WithEnv(env), lens.WithDetectOptions(detectOptions(t, l)...),
		lens.WithResourceAttributes(caller.KeyValues()...), lens.WithLogger(logger)}
	t.Cleanup(func() {
		// A hang guard only: a loaded machine must not fail the test here.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return f
}

// exportedSpanResource ends one span, flushes, and returns the resource of
// the exported span.
func (f *fixture) exportedSpanResource(t testing.TB) *attr.Map {
	t.Helper()
	_, span := f.h.Tracer("test").Start(context.Background(), "probe")
	span.End()
	if err := f.h.ForceFlush(context.Background()); err != nil {
		t.Fatalf("ForceFlush: %v", err)
	}
	spans := f.spans.GetSpans()
	if len(spans) == 0 {
		t.Fatal("no span exported")
	}
	m, skipped := attr.FromResource(spans[len(spans)-1].Resource)
	if len(skipped) > 0 {
		t.Fatalf("unconvertible resource attributes %v", skipped)
	}
	return m
}

// sameSet reports whether two maps hold the same keys and values, ignoring
// order (an OpenTelemetry resource is sorted by key).
func sameSet(a, b *attr.Map) bool {
	if a.Len() != b.Len() {
		return false
	}
	for k, v := range a.All() {
		if w, ok := b.Get(k); !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

func intp(n int) *int { return &n }

// setupOptions returns resource options as Setup's options (every
// ResourceOption is a SetupOption; Go's slices do not convert).
func setupOptions(opts []lens.ResourceOption, extra ...lens.SetupOption) []lens.SetupOption {
	out := make([]lens.SetupOption, 0, len(opts)+len(extra))
	for _, o := range opts {
		out = append(out, o)
	}
	return append(out, extra...)
}
