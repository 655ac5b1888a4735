package lens_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/resources"
)

// benchCarrier is a typical launcher carrier.
const benchCarrier = "nv.dl.rank=3,nv.dl.world_size=8,nv.dl.local_rank=3,nv.dl.role=trainer," +
	"slurm.job.id=12345,slurm.nnodes=2,slurm.ntasks=16,nv.dl.job.uuid=9d61581a-b1c5-55ff-90da-50a3f091d47a," +
	"nemo.run.id=exp-2026-01,launcher.id=abc,k8s.pod.name=old-pod"

// discardExporter drops spans.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// benchEnv puts the carrier in the real process environment, so that both
// sides pay for the SDK's own re-parse (SPEC §11.2), and sets
// CUDA_VISIBLE_DEVICES so that detection does not run nvidia-smi.
func benchEnv(b *testing.B) {
	b.Setenv("OTEL_RESOURCE_ATTRIBUTES", benchCarrier)
	b.Setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
	b.Setenv("OTEL_SERVICE_NAME", "")
}

// BenchmarkSetupShutdown compares an enabled Setup+Shutdown (traces and
// metrics, discarding exporter, manual reader, live host facts) with the
// same providers built by hand with the plain SDK.
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
				lens.WithDetectOptions(resources.Options{KubernetesSecretsPath: "/nonexistent"}),
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
			res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK())
			if err != nil {
				b.Fatal(err)
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res),
				sdktrace.WithBatcher(discardExporter{}))
			mp := metric.NewMeterProvider(metric.WithResource(res), metric.WithReader(metric.NewManualReader()))
			if err := tp.Shutdown(ctx); err != nil {
				b.Fatal(err)
			}
			if err := mp.Shutdown(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
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
	res, err := lens.NewResource(ctx, cfg, lens.WithDetectOptions(resources.Options{KubernetesSecretsPath: "/nonexistent"}))
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
		opt := lens.WithDetectOptions(resources.Options{KubernetesSecretsPath: "/nonexistent"})
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
		cfg.MetricsEnabled = false
		cfg.RunID = "exp-1"
		h, err := lens.Setup(ctx, cfg, lens.WithSpanExporter(discardExporter{}),
			lens.WithDetectOptions(resources.Options{KubernetesSecretsPath: "/nonexistent"}),
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
