package lens_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/internal/collectortest"
)

// Some behaviour depends on the real process environment: the OpenTelemetry
// SDK re-parses OTEL_RESOURCE_ATTRIBUTES from it (docs/resource.md#sdk-provider-merge) and the OTLP
// exporters read OTEL_EXPORTER_OTLP_* from it. Rather than t.Setenv (which
// would serialise the package's tests), these tests re-run the test binary
// as a child process with the variables set; TestHelperProcess is that
// child's entry point.

const (
	helperVar    = "LENS_TEST_HELPER"
	helperMarker = "LENS-HELPER-RESULT:"
)

// runHelper runs TestHelperProcess in a child with env added to a copy of
// the process environment without any OTEL_*, NEMO_LENS_* or LENS_*
// variable, decodes its result into out and returns the child's stderr.
// The child must exit 0: a process must never die of telemetry.
func runHelper(t *testing.T, scenario string, env map[string]string, out any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1", "-test.v=false")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") && !strings.HasPrefix(kv, "NEMO_LENS_") && !strings.HasPrefix(kv, "LENS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, helperVar+"="+scenario)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("helper %s did not finish within 60 s (hang)\nstdout:\n%s\nstderr:\n%s", scenario, stdout.String(), stderr.String())
	}
	if err != nil {
		t.Fatalf("helper %s: %v (the process must never die of telemetry)\nstdout:\n%s\nstderr:\n%s", scenario, err, stdout.String(), stderr.String())
	}
	for line := range strings.Lines(stdout.String()) {
		if rest, ok := strings.CutPrefix(line, helperMarker); ok {
			if err := json.Unmarshal([]byte(rest), out); err != nil {
				t.Fatalf("helper result: %v", err)
			}
			return stderr.String()
		}
	}
	t.Fatalf("helper %s printed no result\nstdout:\n%s\nstderr:\n%s", scenario, stdout.String(), stderr.String())
	return ""
}

// wireAttr is an attribute in a form that survives JSON with invalid UTF-8.
type wireAttr struct {
	Key   []byte
	Kind  string
	Value []byte
}

func toWire(m *attr.Map) []wireAttr {
	var out []wireAttr
	for k, v := range m.All() {
		text, _ := v.Text()
		out = append(out, wireAttr{Key: []byte(k), Kind: v.Kind().String(), Value: []byte(text)})
	}
	return out
}

func fromWire(ws []wireAttr) map[string]wireAttr {
	out := map[string]wireAttr{}
	for _, w := range ws {
		out[string(w.Key)] = w
	}
	return out
}

func resWire(r *resource.Resource) []wireAttr {
	m, _ := attr.FromResource(r)
	return toWire(m)
}

type leakResult struct {
	Lens, Span, MetricExporter, MetricReader, Log []wireAttr
	Warnings                                      []string
}

type faultResult struct {
	Setup, Shutdown time.Duration
	ShutdownErr     string
	Refused         bool // the Shutdown error wraps lens.ErrCollectorRefused
	Deadline        bool // the Shutdown error is the deadline's
	Spans           int
	Counts          lens.SpanCounts
}

// TestHelperProcess is the child side of the process tests. It does
// nothing (and is reported as skipped) unless LENS_TEST_HELPER names a
// scenario.
func TestHelperProcess(t *testing.T) {
	scenario := os.Getenv(helperVar)
	if scenario == "" {
		t.Skip("child-process entry point of the process tests; runs only with " + helperVar + " set")
	}
	var result any
	switch scenario {
	case "leak":
		result = helperLeak(t)
	case "fault":
		result = helperFault(t)
	case "run":
		result = helperRun(t)
	case "reinit":
		result = helperReinit(t)
	default:
		t.Fatalf("unknown scenario %q", scenario)
	}
	b, err := json.Marshal(result)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(helperMarker + string(b))
}

func helperLeak(t *testing.T) leakResult {
	ctx := context.Background()
	var r leakResult
	logger, logs := newCapture()
	cfg := enabledConfig()
	cfg.LogsEnabled = true

	// Traces, a caller's metric reader and logs.
	spans := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	logRec := &logRecorder{}
	h, err := lens.Setup(ctx, cfg, lens.WithDetectOptions(detectOptions(t, defaultLive)...),
		lens.WithSpanExporter(spans), lens.WithMetricReader(reader), lens.WithLogExporter(logRec),
		lens.WithLogger(logger), lens.WithoutGlobals())
	if err != nil {
		t.Fatal(err)
	}
	r.Lens = toWire(h.Attributes())
	sctx, span := h.Tracer("t").Start(ctx, "s")
	h.Logger().InfoContext(sctx, "hello")
	span.End()
	c, _ := h.Meter("t").Int64Counter("c")
	c.Add(ctx, 1)
	if err := h.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	r.Span = resWire(spans.GetSpans()[0].Resource)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	r.MetricReader = resWire(rm.Resource)
	r.Log = resWire(logRec.records()[0].Resource())
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	// Metrics through Lens's periodic reader.
	cfg.LogsEnabled = false
	mrec := &metricRecorder{}
	h, err = lens.Setup(ctx, cfg, lens.WithDetectOptions(detectOptions(t, defaultLive)...),
		lens.WithSpanExporter(tracetest.NewInMemoryExporter()), lens.WithMetricExporter(mrec),
		lens.WithLogger(logger), lens.WithoutGlobals())
	if err != nil {
		t.Fatal(err)
	}
	c, _ = h.Meter("t").Int64Counter("c")
	c.Add(ctx, 1)
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	r.MetricExporter = toWire(mrec.resources()[0])

	for _, rec := range logs() {
		if rec.Level >= 4 { // WARN and above
			r.Warnings = append(r.Warnings, rec.Msg+" "+rec.Attrs["keys"])
		}
	}
	return r
}

func helperFault(t *testing.T) faultResult {
	var r faultResult
	cfg := enabledConfig()
	cfg.LogsEnabled = true
	logger, _ := newCapture()
	start := time.Now()
	h, err := lens.Setup(context.Background(), cfg, lens.WithDetectOptions(detectOptions(t, defaultLive)...),
		lens.WithLogger(logger), lens.WithoutGlobals())
	r.Setup = time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	tr := h.Tracer("t")
	c, _ := h.Meter("t").Int64Counter("c")
	for range 100 {
		ctx, s := tr.Start(context.Background(), "while-the-collector-is-down")
		c.Add(ctx, 1)
		h.Logger().InfoContext(ctx, "log while the collector is down")
		s.End()
		r.Spans++
	}
	// A hang guard only: Shutdown returns at once with the refusal, and a
	// loaded machine must not turn that into a deadline error.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start = time.Now()
	err = h.Shutdown(ctx)
	r.Shutdown = time.Since(start)
	if err != nil {
		r.ShutdownErr = err.Error()
		r.Refused = errors.Is(err, lens.ErrCollectorRefused)
		r.Deadline = errors.Is(err, context.DeadlineExceeded)
	}
	r.Counts = h.SpanCounts()
	return r
}

// TestExportedResourceIsLensDecoded proves docs/resource.md#sdk-provider-merge on exported data: with
// a carrier the two parsers read differently in the real process
// environment, spans and Lens-read metrics carry exactly the Lens resource,
// and the caller's metric reader and log records differ only by the keys
// the SDK parser alone produces (U+001C–U+001F key edges), which Setup
// reports in a warning.
func TestExportedResourceIsLensDecoded(t *testing.T) {
	t.Parallel()
	var r leakResult
	runHelper(t, "leak", map[string]string{
		"OTEL_RESOURCE_ATTRIBUTES": "a= %zz%41 ,x=%C3%28,nv.dl.rank=3,plain=%2Cok, \x1fk=v,b=x+y,",
		"OTEL_SERVICE_NAME":        "sdk-svc",
	}, &r)

	lensAttrs := fromWire(r.Lens)
	want := map[string]string{
		"a": "%zzA", "x": "\uFFFD(", "plain": ",ok", "k": "v", "b": "x+y",
		"service.name": "nemo", "service.instance.id": "run1-rank3", "nv.dl.rank": "3",
	}
	for k, v := range want {
		if got, ok := lensAttrs[k]; !ok || string(got.Value) != v {
			t.Errorf("Lens resource %q = %q, want %q", k, got.Value, v)
		}
	}
	if lensAttrs["nv.dl.rank"].Kind != "int64" {
		t.Errorf("nv.dl.rank kind %s", lensAttrs["nv.dl.rank"].Kind)
	}
	if _, ok := lensAttrs["\x1fk"]; ok {
		t.Error(`Lens resource holds "\x1fk"`)
	}

	same := func(name string, got []wireAttr, allowedExtra ...string) {
		t.Helper()
		g := fromWire(got)
		for k, w := range lensAttrs {
			if x, ok := g[k]; !ok || x.Kind != w.Kind || !bytes.Equal(x.Value, w.Value) {
				t.Errorf("%s: %q = %s %q, want %s %q", name, k, x.Kind, x.Value, w.Kind, w.Value)
			}
		}
		var extra []string
		for k := range g {
			if _, ok := lensAttrs[k]; !ok {
				extra = append(extra, k)
			}
		}
		if strings.Join(extra, ",") != strings.Join(allowedExtra, ",") {
			t.Errorf("%s: extra keys %q, want %q", name, extra, allowedExtra)
		}
	}
	same("span", r.Span)
	same("metrics via Lens's reader", r.MetricExporter)
	same("caller's metric reader", r.MetricReader, "\x1fk")
	same("log record", r.Log, "\x1fk")
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], `"\x1fk"`) {
		t.Errorf("warnings %q, want one naming \"\\x1fk\"", r.Warnings)
	}
}

// TestCollectorDown: with nothing listening on the OTLP endpoint, Setup
// returns promptly, telemetry is produced without blocking, and Shutdown
// with a 30 s deadline (a hang guard) returns — with an error wrapping ErrCollectorRefused,
// not the deadline's — and the span accounting holds every one of the 100
// spans as failed or dropped, none pending. Durations are reported, not
// asserted; a hang fails the test through the child's 60 s limit.
func TestCollectorDown(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{lens.ProtocolGRPC, lens.ProtocolHTTPProtobuf} {
		t.Run(strings.ReplaceAll(protocol, "/", "-"), func(t *testing.T) {
			t.Parallel()
			var r faultResult
			runHelper(t, "fault", map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": collectortest.Refused(t),
				"OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
			}, &r)
			t.Logf("%s: Setup %v; %d spans; Shutdown(30 s deadline) returned after %v (err %q); counts %+v",
				protocol, r.Setup, r.Spans, r.Shutdown, r.ShutdownErr, r.Counts)
			if c := r.Counts; c.Ended != int64(r.Spans) || c.Exported != 0 || c.Failed+c.Dropped != c.Ended || c.Pending != 0 {
				t.Errorf("span accounting %+v after %d spans: want every span failed or dropped, none pending", c, r.Spans)
			}
			if !r.Refused || r.Deadline {
				t.Errorf("Shutdown error %q: wraps ErrCollectorRefused %v (want true), deadline %v (want false)", r.ShutdownErr, r.Refused, r.Deadline)
			}
		})
	}
}
