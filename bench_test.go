package lens_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/scalegen"
)

// benchCarrier is a typical launcher carrier.
const benchCarrier = "nv.dl.rank=3,nv.dl.world_size=8,nv.dl.local_rank=3,nv.dl.role=trainer," +
	"slurm.job.id=12345,slurm.nnodes=2,slurm.ntasks=16,nv.dl.job.uuid=9d61581a-b1c5-55ff-90da-50a3f091d47a," +
	"nemo.run.id=exp-2026-01,launcher.id=abc,k8s.pod.name=old-pod"

// discardExporter drops spans. Both sides of every benchmark use it.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// benchEnv puts the carrier in the real process environment, so that both
// sides pay for the SDK's own re-parse (docs/resource.md#sdk-provider-merge), and sets
// CUDA_VISIBLE_DEVICES so that detection does not run nvidia-smi.
func benchEnv(b *testing.B) {
	b.Setenv("OTEL_RESOURCE_ATTRIBUTES", benchCarrier)
	b.Setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
	b.Setenv("OTEL_SERVICE_NAME", "")
}

// BenchmarkSetupShutdown compares an enabled Setup+Shutdown with the same
// providers built by hand with the plain OpenTelemetry SDK, as a program
// that does not use Lens would build them. Each iteration of either side,
// in the same process environment (benchEnv):
//
//   - builds one resource and gives it to both providers, each of which
//     merges it over resource.Environment() — the SDK's own parse of the
//     carrier, once per provider on both sides (docs/resource.md#sdk-provider-merge);
//   - builds a tracer provider whose spans go through the SDK's batch span
//     processor (default batch size 512, default queue size 2048) to
//     discardExporter{}, and a meter provider with a new
//     sdkmetric.ManualReader;
//   - installs no OpenTelemetry globals;
//   - shuts both providers down.
//
// The plain SDK builds its resource as a user would, with
// resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK()):
// the carrier's 11 keys and telemetry.sdk.*, 14 attributes. What the Lens
// side does on top — and what its figure therefore includes — is what Lens
// is for:
//
//   - the resource of docs/resource.md#resource-precedence: the carrier decoded by the Lens parser,
//     the base map, live detection (host name: uname; PID: getpid; a stat of
//     the Kubernetes secrets path; the Slurm keys of the carrier), type
//     reconstruction and the derived service.instance.id — 20 attributes,
//     which also makes each provider's merge a little dearer;
//   - the span drop gate and the resource-stamping exporter; the batch
//     processor's queue is 64 spans longer than the gate's limit of 2048,
//     which makes its channel buffer 40 KiB instead of 32 KiB;
//   - the check for carrier keys that only the SDK's parser produces (run
//     because a metric reader is passed);
//   - the one-setup-per-process guard;
//   - a Shutdown bounded by DefaultShutdownTimeout (a context.WithTimeout)
//     that shuts the providers down concurrently; the plain side calls
//     Shutdown on each provider in turn with a context without deadline.
//
// No nvidia-smi runs (benchEnv sets CUDA_VISIBLE_DEVICES) and the
// Kubernetes secrets path does not exist, so detection takes the same
// branches on every machine. Options are built inside the loop on both
// sides, as a program calling Setup once would build them.
func BenchmarkSetupShutdown(b *testing.B) {
	benchEnv(b)
	ctx := context.Background()
	b.Run("lens", func(b *testing.B) {
		cfg := lens.DefaultConfig()
		cfg.Enabled = true
		cfg.RunID = "exp-1"
		b.ReportAllocs()
		for b.Loop() {
			h, err := lens.Setup(ctx, cfg,
				lens.WithSpanExporter(discardExporter{}),
				lens.WithMetricReader(metric.NewManualReader()),
				lens.WithDetectOptions(detect.WithKubernetesSecretsPath("/nonexistent")),
				lens.WithoutGlobals())
			if err != nil {
				b.Fatal(err)
			}
			if err := h.Shutdown(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sdkSetupShutdown(b, ctx)
		}
	})
}

// sdkSetupShutdown is what the plain OpenTelemetry SDK does for one Setup
// and Shutdown: a resource from the environment and the SDK's attributes,
// a tracer provider with a batcher and a meter provider with a manual
// reader, both shut down.
func sdkSetupShutdown(b *testing.B, ctx context.Context) {
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		b.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(discardExporter{}))
	mp := metric.NewMeterProvider(metric.WithResource(res), metric.WithReader(metric.NewManualReader()))
	if err := tp.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
	if err := mp.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSetupShutdownSameResource isolates the cost of Lens's providers
// (drop gate, resource-stamping exporter, Handle) from the cost of
// assembling the resource: the plain SDK builds the same providers on the
// resource Lens assembled once, outside the loop; "lens" is the same as in
// BenchmarkSetupShutdown.
func BenchmarkSetupShutdownSameResource(b *testing.B) {
	benchEnv(b)
	ctx := context.Background()
	cfg := lens.Config{RunID: "exp-1"}
	res, err := lens.NewResource(ctx, cfg, lens.WithDetectOptions(detect.WithKubernetesSecretsPath("/nonexistent")))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(discardExporter{}))
		mp := metric.NewMeterProvider(metric.WithResource(res), metric.WithReader(metric.NewManualReader()))
		if err := tp.Shutdown(ctx); err != nil {
			b.Fatal(err)
		}
		if err := mp.Shutdown(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSetupDisabled is the cost of a disabled Setup and Shutdown.
func BenchmarkSetupDisabled(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h, _ := lens.Setup(ctx, lens.Config{})
		_ = h.Shutdown(ctx)
	}
}

// BenchmarkResource compares the Lens resource assembly (carrier, base map,
// detection, type reconstruction, instance id) with the SDK's env+sdk
// resource.
func BenchmarkResource(b *testing.B) {
	benchEnv(b)
	ctx := context.Background()
	b.Run("lens", func(b *testing.B) {
		cfg := lens.Config{RunID: "exp-1"}
		opt := lens.WithDetectOptions(detect.WithKubernetesSecretsPath("/nonexistent"))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := lens.NewResource(ctx, cfg, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSpan compares starting and ending a span through Lens's drop gate
// and resource-stamping exporter with the plain SDK batcher.
func BenchmarkSpan(b *testing.B) {
	benchEnv(b)
	ctx := context.Background()
	b.Run("lens", func(b *testing.B) {
		cfg := lens.DefaultConfig()
		cfg.Enabled = true
		cfg.MetricsDisabled = true
		cfg.RunID = "exp-1"
		h, err := lens.Setup(ctx, cfg, lens.WithSpanExporter(discardExporter{}),
			lens.WithDetectOptions(detect.WithKubernetesSecretsPath("/nonexistent")),
			lens.WithoutGlobals(), lens.WithAllowReinit())
		if err != nil {
			b.Fatal(err)
		}
		defer h.Shutdown(ctx)
		tr := h.Tracer("bench")
		b.ReportAllocs()
		for b.Loop() {
			_, s := tr.Start(ctx, "span")
			s.End()
		}
	})
	b.Run("sdk", func(b *testing.B) {
		res, _ := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK())
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(discardExporter{}))
		defer tp.Shutdown(ctx)
		tr := tp.Tracer("bench")
		b.ReportAllocs()
		for b.Loop() {
			_, s := tr.Start(ctx, "span")
			s.End()
		}
	})
}

// BenchmarkScaleSetup measures an enabled Setup+Shutdown against the size of
// the carrier, beside one carrier.Parse of the same text (which Setup must
// cost a small constant times) and the plain OpenTelemetry SDK doing its
// own setup with the same carrier. The carrier has N entries of 10-byte
// escaped values (scalegen.Text: the inputs of the carrier scale
// benchmarks, N = 1, 1,000, 100,000 and 1,000,000; 34 MB at 1,000,000).
// Names follow the carrier scale benchmarks:
//
//	BenchmarkScaleSetup/entries=1000000/value=10B/shape=escaped/lens-setup
//
// The sides:
//
//   - lens-setup: Setup and Shutdown as in BenchmarkSetupShutdown (span
//     exporter discardExporter{}, a metric ManualReader, no globals, no
//     Kubernetes path), with the carrier given through
//     lens.WithEnv(environ.Map{...}) together with CUDA_VISIBLE_DEVICES; the
//     process environment holds no carrier, so the SDK's own parse of it
//     (the meter provider's resource.Environment(), the check for keys only
//     the SDK's parser produces) finds nothing.
//   - lens-setup-osenv: the same Setup with the carrier in the process
//     environment (b.Setenv) and no WithEnv, as a real process has it: Lens
//     parses it from os.Getenv, and the SDK parses it once more for the meter
//     provider (docs/resource.md#sdk-provider-merge), and Setup compares
//     the SDK's keys with the resource (the ManualReader makes it). The
//     tracer provider takes no resource, and the SDK's default resource is
//     computed once per process, before the loop: the "setup-osenv" and
//     "setup-otlp" operations of tools/scale (scripts/scale-report.sh)
//     measure the first Setup of a fresh process.
//   - carrier-parse: carrier.Parse of the text.
//   - otel-sdk: BenchmarkSetupShutdown's plain SDK side (resource.New with
//     WithFromEnv and WithTelemetrySDK, then the two providers, each merging
//     resource.Environment() under it), with the carrier in the process
//     environment.
//
// The 1,000,000-entry case is skipped with -short. Run them with, e.g.,
//
//	go test -run '^$' -bench '^BenchmarkScaleSetup' -benchtime 1x -count 3 .
func BenchmarkScaleSetup(b *testing.B) {
	// The generated carriers have no nv.dl.rank: Setup warns about it.
	discardLogger := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	b.Setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
	b.Setenv("OTEL_SERVICE_NAME", "")
	b.Setenv(carrier.EnvVar, "")
	cfg := lens.DefaultConfig()
	cfg.Enabled = true
	cfg.RunID = "exp-1"
	setup := func(b *testing.B, opts ...lens.SetupOption) {
		opts = append(opts, lens.WithLogger(discardLogger), lens.WithSpanExporter(discardExporter{}),
			lens.WithMetricReader(metric.NewManualReader()),
			lens.WithDetectOptions(detect.WithKubernetesSecretsPath("/nonexistent")),
			lens.WithoutGlobals())
		h, err := lens.Setup(ctx, cfg, opts...)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Shutdown(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for _, n := range []int{1, 1000, 100_000, 1_000_000} {
		text := scalegen.Text(n, 10, scalegen.Escaped)
		env := environ.Map{carrier.EnvVar: text, "CUDA_VISIBLE_DEVICES": "0,1,2,3"}
		b.Run(fmt.Sprintf("entries=%d/value=10B/shape=escaped", n), func(b *testing.B) {
			if n >= 1_000_000 && testing.Short() {
				b.Skip("-short: the 1,000,000-entry carrier is skipped")
			}
			b.Run("lens-setup", func(b *testing.B) {
				if m, _ := lens.ResourceAttributes(ctx, cfg, lens.WithEnv(env), lens.WithLogger(discardLogger)); m.Len() < n {
					b.Fatalf("the resource has %d attributes, want at least %d", m.Len(), n)
				}
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					setup(b, lens.WithEnv(env))
				}
			})
			b.Run("lens-setup-osenv", func(b *testing.B) {
				b.Setenv(carrier.EnvVar, text)
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					setup(b)
				}
			})
			b.Run("carrier-parse", func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					carrier.Parse(text)
				}
			})
			b.Run("otel-sdk", func(b *testing.B) {
				b.Setenv(carrier.EnvVar, text)
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					sdkSetupShutdown(b, ctx)
				}
			})
		})
	}
}
