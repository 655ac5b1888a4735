package carrier_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
)

// benchEntries is a realistic launcher carrier: 24 entries with Slurm keys,
// nv.dl.* keys, UUIDs, and values that need escaping (',', '=', '/', ' ',
// ':', '[', ']').
var benchEntries = []attr.Entry{
	{Key: "service.name", Value: attr.String("nv.dl.launch")},
	{Key: "service.version", Value: attr.String("0.3.0")},
	{Key: "nemo.run.id", Value: attr.String("exp/2026-01,seed=7")},
	{Key: "nv.dl.job.uuid", Value: attr.String("6f1c2a9e-3b4d-5e8f-9a0b-1c2d3e4f5a6b")},
	{Key: "nv.dl.run.uuid", Value: attr.String("0d9c8b7a-6f5e-5d4c-8b3a-291807f6e5d4")},
	{Key: "nv.dl.rank", Value: attr.Int(3)},
	{Key: "nv.dl.local_rank", Value: attr.Int(3)},
	{Key: "nv.dl.world_size", Value: attr.Int(64)},
	{Key: "nv.dl.role", Value: attr.String("worker")},
	{Key: "nv.dl.launch.container.image", Value: attr.String("nvcr.io/nvidia/nemo:25.04")},
	{Key: "slurm.job.id", Value: attr.Int(4242001)},
	{Key: "slurm.job.id.raw", Value: attr.String("4242001")},
	{Key: "slurm.job.name", Value: attr.String("train llama,70b")},
	{Key: "slurm.array.job_id", Value: attr.Int(4242000)},
	{Key: "slurm.array.task_id", Value: attr.Int(1)},
	{Key: "slurm.array.count", Value: attr.Int(4)},
	{Key: "slurm.nnodes", Value: attr.Int(8)},
	{Key: "slurm.nodelist", Value: attr.String("node-[001-008]")},
	{Key: "slurm.partition", Value: attr.String("batch")},
	{Key: "slurm.cluster.name", Value: attr.String("eos")},
	{Key: "slurm.step.id", Value: attr.Int(0)},
	{Key: "host.gpu.count", Value: attr.Int(8)},
	{Key: "deployment.environment.name", Value: attr.String("prod")},
	{Key: "nv.dl.checkpoint.enabled", Value: attr.Bool(true)},
}

func benchMap() *attr.Map { return attr.NewMap(benchEntries...) }

func benchText(b *testing.B) string {
	b.Helper()
	text, dropped := carrier.Format(benchMap())
	if len(dropped) != 0 || carrier.Parse(text).Len() != len(benchEntries) {
		b.Fatalf("bad benchmark carrier %q (dropped %v)", text, dropped)
	}
	return text
}

// BenchmarkParse compares Parse with what the OpenTelemetry Go SDK does
// with the same variable: resource.New with the environment detector, which
// reads OTEL_RESOURCE_ATTRIBUTES from the process environment.
func BenchmarkParse(b *testing.B) {
	text := benchText(b)
	b.Run("lens", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			carrier.Parse(text)
		}
	})
	b.Run("otel-sdk", func(b *testing.B) {
		b.Setenv(carrier.EnvVar, text) // restored when the benchmark ends
		ctx := context.Background()
		r, err := resource.New(ctx, resource.WithFromEnv())
		if err != nil || r.Len() != len(benchEntries) {
			b.Fatalf("SDK parsed %d attributes, %v", r.Len(), err)
		}
		b.ReportAllocs()
		for b.Loop() {
			resource.New(ctx, resource.WithFromEnv())
		}
	})
}

func BenchmarkFormat(b *testing.B) {
	m := benchMap()
	b.ReportAllocs()
	for b.Loop() {
		carrier.Format(m)
	}
}

// BenchmarkExtend is what a launcher does per child: parse the inherited
// carrier, compose, format.
func BenchmarkExtend(b *testing.B) {
	text := benchText(b)
	defaults := attr.NewMap(
		attr.Entry{Key: "nv.dl.role", Value: attr.String("worker")},
		attr.Entry{Key: "nv.dl.restart.count", Value: attr.Int(0)},
	)
	overrides := attr.NewMap(
		attr.Entry{Key: "nv.dl.rank", Value: attr.Int(17)},
		attr.Entry{Key: "nv.dl.local_rank", Value: attr.Int(1)},
		attr.Entry{Key: "service.instance.id", Value: attr.String("6f1c2a9e-3b4d-5e8f-9a0b-1c2d3e4f5a6b-17")},
	)
	b.ReportAllocs()
	for b.Loop() {
		carrier.Extend(text, defaults, overrides)
	}
}
