package lens_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/collectortest"
)

// TestSetupEndpointWithoutScheme: an OTLP/gRPC endpoint given as
// HOST:PORT (with OTEL_EXPORTER_OTLP_INSECURE=true) carries the three
// signals to the collector at that address, as the other OpenTelemetry
// SDKs do (docs/resource.md#otlp-endpoint-and-tls).
func TestSetupEndpointWithoutScheme(t *testing.T) {
	c := collectortest.NewGRPC(t, collectortest.OK)
	cfg := enabledConfig()
	cfg.LogsEnabled = true
	logger, _ := newCapture()
	h, err := lens.Setup(context.Background(), cfg,
		lens.WithEnv(environ.Map{
			"OTEL_EXPORTER_OTLP_ENDPOINT": strings.TrimPrefix(c.Endpoint, "http://"),
			"OTEL_EXPORTER_OTLP_INSECURE": "true",
			"OTEL_RESOURCE_ATTRIBUTES":    "nv.dl.rank=0",
		}),
		lens.WithDetectOptions(detectOptions(t, defaultLive)...),
		lens.WithLogger(logger), lens.WithoutGlobals())
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := h.Tracer("t").Start(context.Background(), "step")
	counter, _ := h.Meter("t").Int64Counter("steps")
	counter.Add(ctx, 1)
	h.Logger().InfoContext(ctx, "step done")
	span.End()
	if err := h.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for _, signal := range []string{collectortest.Traces, collectortest.Metrics, collectortest.Logs} {
		if c.Requests(signal) == 0 {
			t.Errorf("the collector got no %s", signal)
		}
	}
}

// TestSetupHTTPEndpointWithoutScheme: over OTLP/HTTP, whose endpoints are
// URLs, HOST:PORT is one *ConfigError naming the variable, for each signal.
func TestSetupHTTPEndpointWithoutScheme(t *testing.T) {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"} {
		t.Run(name, func(t *testing.T) {
			cfg := enabledConfig()
			cfg.LogsEnabled = true
			_, err := lens.Setup(context.Background(), cfg,
				lens.WithEnv(environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", name: "127.0.0.1:4318"}),
				lens.WithDetectOptions(detectOptions(t, defaultLive)...), lens.WithoutGlobals())
			var ce *lens.ConfigError
			if !errors.As(err, &ce) || ce.Var != name || !errors.Is(err, lens.ErrInvalidEndpoint) {
				t.Errorf("Setup = %v, want a *ConfigError for %s", err, name)
			}
		})
	}
}

// TestFaultEndpointWithoutScheme: a process whose environment names the
// gRPC collector as HOST:PORT (an IP literal, which the OpenTelemetry Go
// exporters alone cannot parse and replace by the default endpoint) exports
// its three signals there, and nothing appears on stderr (the exporters'
// own complaints about the value are DEBUG: Lens read it).
func TestFaultEndpointWithoutScheme(t *testing.T) {
	t.Parallel()
	c := collectortest.NewGRPC(t, collectortest.OK)
	var r runOutcome
	stderr := runHelper(t, "run", map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": strings.TrimPrefix(c.Endpoint, "http://"),
		"OTEL_EXPORTER_OTLP_INSECURE": "true",
	}, &r)
	if r.SetupErr != "" || r.ShutdownErr != "" || r.Settled.Exported != 100 || stderr != "" {
		t.Errorf("Setup %q, Shutdown %q, counts %+v, stderr %q: want 100 spans exported, a silent stderr", r.SetupErr, r.ShutdownErr, r.Settled, stderr)
	}
	for _, signal := range []string{collectortest.Traces, collectortest.Metrics, collectortest.Logs} {
		if c.Requests(signal) == 0 {
			t.Errorf("the collector got no %s", signal)
		}
	}
}
