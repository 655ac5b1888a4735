package lens_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/lensconv"
)

// Tests of the standard switches (docs/resource.md#standard-otel-switches)
// and of the rank options' precedence (docs/resource.md#resource-precedence).

// TestSDKDisabledBeatsInvalidSettings: OTEL_SDK_DISABLED=true disables
// telemetry even when another setting is invalid: Setup returns a disabled
// Handle and no error. Without OTEL_SDK_DISABLED each of these settings
// fails Setup (so the rows are invalid indeed).
func TestSDKDisabledBeatsInvalidSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  func(*lens.Config)
		env  environ.Map
	}{
		{name: "unknown OTEL_TRACES_EXPORTER", env: environ.Map{"OTEL_TRACES_EXPORTER": "zipkin"}},
		{name: "exporter list", env: environ.Map{"OTEL_METRICS_EXPORTER": "otlp,console"}},
		{name: "bad protocol", env: environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}},
		{name: "bad propagator", env: environ.Map{"OTEL_PROPAGATORS": "no-such-propagator"}},
		{name: "bad endpoint", env: environ.Map{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://otelcol:4317"}},
		{name: "bad Config.Exporter", cfg: func(c *lens.Config) { c.Exporter = "zipkin" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := enabledConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			setup := func(env environ.Map) (*lens.Handle, error) {
				logger, _ := newCapture()
				return lens.Setup(context.Background(), cfg, lens.WithEnv(env), lens.WithAllowReinit(), lens.WithoutGlobals(),
					lens.WithLogger(logger), lens.WithDetectOptions(detectOptions(t, defaultLive)...))
			}
			if h, err := setup(tc.env); err == nil {
				_ = h.Shutdown(context.Background())
				t.Fatalf("without OTEL_SDK_DISABLED, Setup(%v) succeeded: the row is not invalid", tc.env)
			}
			for _, disabled := range []string{"true", " TRUE "} {
				env := environ.Map{"OTEL_SDK_DISABLED": disabled}
				for k, v := range tc.env {
					env[k] = v
				}
				h, err := setup(env)
				if err != nil {
					t.Fatalf("Setup(%v) = %v, want a disabled Handle and no error", env, err)
				}
				if h.IsExporting() || h.Config().Enabled {
					t.Errorf("Setup(%v): exporting %v, Config().Enabled %v; want both false", env, h.IsExporting(), h.Config().Enabled)
				}
				if err := h.Shutdown(context.Background()); err != nil {
					t.Errorf("Shutdown: %v", err)
				}
			}
		})
	}
}

// TestTracesDisabledSetup: Config.TracesDisabled turns traces off in
// Setup: the tracer records nothing and the console exporter writes no
// span, while the metrics of the same Setup are on.
func TestTracesDisabledSetup(t *testing.T) {
	t.Parallel()
	for _, disabled := range []bool{false, true} {
		cfg := enabledConfig()
		cfg.Exporter = lens.ExporterConsole
		cfg.TracesDisabled = disabled
		var console bytes.Buffer
		logger, _ := newCapture()
		reader := sdkmetric.NewManualReader()
		h, err := lens.Setup(context.Background(), cfg, lens.WithEnv(environ.Map{}), lens.WithAllowReinit(), lens.WithoutGlobals(),
			lens.WithLogger(logger), lens.WithDetectOptions(detectOptions(t, defaultLive)...),
			lens.WithConsoleWriter(&console), lens.WithMetricReader(reader))
		if err != nil {
			t.Fatalf("Setup(TracesDisabled %v): %v", disabled, err)
		}
		_, span := h.Tracer("test").Start(context.Background(), "lens-traces-disabled-probe")
		recording := span.IsRecording()
		span.End()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		cancel()
		exported := bytes.Contains(console.Bytes(), []byte("lens-traces-disabled-probe"))
		if recording != !disabled || exported != !disabled {
			t.Errorf("TracesDisabled %v: span recording %v, exported %v; want %v", disabled, recording, exported, !disabled)
		}
		if !h.IsExporting() {
			t.Errorf("TracesDisabled %v: the Handle does not export (metrics are on)", disabled)
		}
	}
}

// TestRankFromUnderCallerAttributes: the ranks of WithRankFrom are caller
// attributes that those of WithResourceAttributes beat, in whichever order
// the options are given; the launcher's values fill what the caller does
// not set.
func TestRankFromUnderCallerAttributes(t *testing.T) {
	t.Parallel()
	env := environ.Map{"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1"}
	caller := []attribute.KeyValue{attribute.Int(lensconv.NVDLRank, 5), attribute.String(lensconv.NVDLLocalRank, "caller")}
	want := attr.NewMap(
		attr.Entry{Key: lensconv.NVDLRank, Value: attr.Int(5)},
		attr.Entry{Key: lensconv.NVDLLocalRank, Value: attr.String("caller")},
		attr.Entry{Key: lensconv.NVDLWorldSize, Value: attr.Int(8)},
	)
	check := func(t *testing.T, what string, got *attr.Map) {
		t.Helper()
		for k, w := range want.All() {
			if g, ok := got.Get(k); !ok || !g.Equal(w) {
				t.Errorf("%s: %s = %v (present %v), want %v", what, k, g, ok, w)
			}
		}
	}
	// The options inline, in both orders (no option variables: each
	// function has its own option type).
	logger, _ := newCapture()
	ctx, cfg, detectOpts := context.Background(), enabledConfig(), detectOptions(t, defaultLive)
	got, err := lens.ResourceAttributes(ctx, cfg, lens.WithEnv(env), lens.WithLogger(logger), lens.WithDetectOptions(detectOpts...),
		lens.WithRankFrom(lens.RankFromTorchrun), lens.WithResourceAttributes(caller...))
	if err != nil {
		t.Fatal(err)
	}
	check(t, "ResourceAttributes, WithRankFrom first", got)
	got, err = lens.ResourceAttributes(ctx, cfg, lens.WithEnv(env), lens.WithLogger(logger), lens.WithDetectOptions(detectOpts...),
		lens.WithResourceAttributes(caller...), lens.WithRankFrom(lens.RankFromTorchrun))
	if err != nil {
		t.Fatal(err)
	}
	check(t, "ResourceAttributes, WithRankFrom last", got)
	// The exported resource of a Setup says the same.
	callerMap, _ := attr.FromKeyValues(caller...)
	f := setupFixture(t, cfg, env, callerMap, defaultLive, lens.WithRankFrom(lens.RankFromTorchrun))
	check(t, "exported span", f.exportedSpanResource(t))
}
