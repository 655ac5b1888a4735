package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/scalegen"
)

// The library operations of the size table.
var libOps = []string{"parse", "format", "check", "resource", "setup", "setup-osenv", "setup-otlp"}

var libOpDescriptions = map[string]string{
	"parse":       "`carrier.Parse`",
	"format":      "`carrier.Format` (of the parsed map)",
	"check":       "`carrier.Check` (every key required, two forbidden, duplicates)",
	"resource":    "`lens.ResourceAttributes` (`WithEnv`)",
	"setup":       "`lens.Setup`+`Shutdown` (`WithEnv`)",
	"setup-osenv": "`lens.Setup`+`Shutdown`, carrier in the process environment (first Setup of the process)",
	"setup-otlp":  "`lens.Setup`+`Shutdown` as a real process: carrier in the process environment, OTLP/gRPC traces and metrics (refused: nothing listens), globals",
	// Not in the size table: the input is always scalegen.Worker's.
	"setup-typical": "`lens.Setup` of a typical worker (OTLP/gRPC traces and metrics, globals), cold",
}

// libResult is what one "lib" run reports.
type libResult struct {
	Op, Input  string
	Bytes      int    // carrier text length
	FirstNS    int64  // wall time of the first run
	MinNS      int64  // the fastest of the runs
	CPUNS      int64  // user+system CPU time of the first run (GC included)
	AllocBytes uint64 // bytes allocated by the first run
	Mallocs    uint64 // allocations of the first run
	RSSBefore  int64  // resident set (bytes) before the first run, input built
	PeakRSS    int64  // peak resident set (bytes) during the first run
	Runs       int    // number of runs
}

type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

var discardLogger = slog.New(slog.DiscardHandler)

// setupOptions are the options of BenchmarkScaleSetup: discard exporter, a
// manual metric reader, no globals, no Kubernetes path, no log output.
func setupOptions(opts ...lens.SetupOption) []lens.SetupOption {
	return append(opts, lens.WithLogger(discardLogger), lens.WithSpanExporter(discardExporter{}),
		lens.WithMetricReader(sdkmetric.NewManualReader()),
		lens.WithDetectOptions(detect.WithKubernetesSecretsPath("/nonexistent")),
		lens.WithoutGlobals())
}

func enabledConfig() lens.Config {
	cfg := lens.DefaultConfig()
	cfg.Enabled = true
	cfg.RunID = "exp-1"
	return cfg
}

var sink int

// libOp prepares an operation on text and returns the function to measure.
func libOp(op, text string) (func(), error) {
	ctx := context.Background()
	env := environ.Map{carrier.EnvVar: text, "CUDA_VISIBLE_DEVICES": "0,1,2,3"}
	switch op {
	case "parse":
		return func() { sink += carrier.Parse(text).Len() }, nil
	case "format":
		m := carrier.Parse(text)
		return func() {
			s, dropped := carrier.Format(m)
			sink += len(s) + len(dropped)
		}, nil
	case "check":
		attrs := carrier.Parse(text)
		required := attrs.Keys()
		forbidden := []string{"slurm.nodelist", scalegen.Key(0)}
		return func() {
			r := carrier.Check(attrs, required, forbidden, text)
			sink += len(r.Missing) + len(r.Empty) + len(r.Forbidden) + len(r.Duplicates)
		}, nil
	case "resource":
		cfg := lens.Config{RunID: "exp-1"}
		opts := []lens.ResourceOption{lens.WithEnv(env), lens.WithLogger(discardLogger),
			lens.WithDetectOptions(detect.WithKubernetesSecretsPath("/nonexistent"))}
		return func() {
			m, err := lens.ResourceAttributes(ctx, cfg, opts...)
			must(err)
			sink += m.Len()
		}, nil
	case "setup", "setup-osenv":
		var envOpt []lens.SetupOption
		if op == "setup" {
			envOpt = append(envOpt, lens.WithEnv(env))
		} else {
			if err := os.Setenv(carrier.EnvVar, text); err != nil {
				return nil, err
			}
			if err := os.Setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3"); err != nil {
				return nil, err
			}
		}
		cfg := enabledConfig()
		return func() {
			// Options inside: a metric reader serves one provider.
			h, err := lens.Setup(ctx, cfg, setupOptions(envOpt...)...)
			must(err)
			sink += h.Resource().Len()
			must(h.Shutdown(ctx))
		}, nil
	case "setup-otlp":
		if err := os.Setenv(carrier.EnvVar, text); err != nil {
			return nil, err
		}
		if err := os.Setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3"); err != nil {
			return nil, err
		}
		if _, ok := os.LookupEnv("OTEL_EXPORTER_OTLP_ENDPOINT"); !ok {
			return nil, fmt.Errorf("setup-otlp: set OTEL_EXPORTER_OTLP_ENDPOINT to an address that refuses connections")
		}
		cfg := enabledConfig()
		return func() {
			h, err := lens.Setup(ctx, cfg, lens.WithLogger(discardLogger),
				lens.WithDetectOptions(detect.WithKubernetesSecretsPath("/nonexistent")))
			must(err)
			sink += h.Resource().Len()
			// The collector refuses: Shutdown returns at once with
			// lens.ErrCollectorRefused.
			_ = h.Shutdown(ctx)
		}, nil
	case "setup-typical":
		// Measured once: the first Setup of a worker process. The handle
		// is shut down after the measurement (see libCommand).
		return func() { typicalHandle = setupTypical() }, nil
	}
	return nil, fmt.Errorf("unknown operation %q", op)
}

// typicalHandle is the handle of "setup-typical", shut down unmeasured.
var typicalHandle *lens.Handle

func libCommand(args []string) error {
	fs := flag.NewFlagSet("lib", flag.ContinueOnError)
	op := fs.String("op", "parse", "operation")
	input := fs.String("input", "value=1MiB", "input")
	repeat := fs.Int("repeat", 3, "runs (the first gives memory and CPU, the fastest the time)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// The process starts with none of the variables Setup reads.
	for _, k := range []string{carrier.EnvVar, "OTEL_SERVICE_NAME", "OTEL_SDK_DISABLED", "NEMO_LENS_ENABLED"} {
		os.Unsetenv(k)
	}
	text, err := inputText(*input)
	if err != nil {
		return err
	}
	f, err := libOp(*op, text)
	if err != nil {
		return err
	}
	r := libResult{Op: *op, Input: *input, Bytes: len(text), Runs: max(1, *repeat)}
	runtime.GC()
	debug.FreeOSMemory()
	r.RSSBefore = procStatus("VmRSS")
	resetPeakRSS()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	t0 := time.Now()
	f()
	r.FirstNS = int64(time.Since(t0))
	r.CPUNS = int64(cpuTime() - cpu0)
	runtime.ReadMemStats(&m1)
	r.PeakRSS = procStatus("VmHWM")
	r.AllocBytes = m1.TotalAlloc - m0.TotalAlloc
	r.Mallocs = m1.Mallocs - m0.Mallocs
	r.MinNS = r.FirstNS
	if typicalHandle != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = typicalHandle.Shutdown(sctx)
		cancel()
		r.Runs = 1
	}
	for range r.Runs - 1 {
		runtime.GC()
		t0 := time.Now()
		f()
		r.MinNS = min(r.MinNS, int64(time.Since(t0)))
	}
	if sink < 0 {
		fmt.Fprintln(os.Stderr, sink)
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}
