package detect_test

import (
	"context"
	"maps"
	"testing"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"

	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/carrier"
)

// benchCarrier is a realistic 20-entry carrier written by a launcher.
const benchCarrier = "service.name=nemo,nemo.run.id=exp%2F2026-01%2Cseed%3D7,nemo.user.id=alice," +
	"deployment.environment=prod,nv.dl.rank=1,nv.dl.world_size=16,nv.dl.local_rank=1,nv.dl.role=trainer," +
	"nv.dl.provider.name=mcore,nv.dl.topology.size.tp=2,nv.dl.topology.size.pp=4,nv.dl.topology.size.dp=2," +
	"nv.dl.launch.container.image=nvcr.io%2Fnvidia%2Fnemo%3A25.04,slurm.job.id=3,slurm.nnodes=2," +
	"slurm.ntasks=16,slurm.job.name=b2.sh,nv.dl.job.uuid=0461fb81-10eb-5506-9e9d-16b03959c379," +
	"nv.dl.run.uuid=820a232c-53cf-5c54-83a0-bb2fd8bb0877,wandb.project=gpt"

// benchEnv is the environment of srun task 1 inside an sbatch script,
// captured from Slurm 22.05 (vector capture.02-sbatch.srun-n2.task1), plus
// eight GPUs and the carrier.
func benchEnv(b *testing.B) environ.Map {
	vs, err := vectorsByID("capture.02-sbatch.srun-n2.task1.detect_slurm")
	if err != nil {
		b.Fatal(err)
	}
	env := environ.Map(maps.Clone(vs.Env))
	env["CUDA_VISIBLE_DEVICES"] = "0,1,2,3,4,5,6,7"
	env["OTEL_RESOURCE_ATTRIBUTES"] = benchCarrier
	return env
}

func BenchmarkDetect(b *testing.B) {
	ctx := context.Background()
	env := benchEnv(b)
	if n := carrier.Parse(benchCarrier).Len(); n != 20 {
		b.Fatalf("carrier has %d entries", n)
	}
	b.Setenv(carrier.EnvVar, benchCarrier)

	// Live host name, PID and Kubernetes path check (no injected shortcuts);
	// CUDA_VISIBLE_DEVICES is set, so nvidia-smi never runs.
	opts := []detect.Option{detect.WithEnv(env)}
	b.Run("lens", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			detect.All(ctx, opts...)
		}
	})
	b.Run("lens-osenv", func(b *testing.B) {
		for k, v := range env {
			b.Setenv(k, v)
		}
		b.ReportAllocs()
		for b.Loop() {
			detect.All(ctx)
		}
	})
	b.Run("lens-resource", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := resource.New(ctx, resource.WithDetectors(detect.Detector(opts...))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("otel-sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := resource.New(ctx, resource.WithFromEnv(), resource.WithHost(),
				resource.WithProcessPID(), resource.WithTelemetrySDK()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDeriveJobUUID(b *testing.B) {
	env := environ.Map{"SLURM_CLUSTER_NAME": "probe", "SLURM_JOB_ID": "12345"}
	b.ReportAllocs()
	for b.Loop() {
		detect.JobUUID(env)
	}
}

func BenchmarkNormalize(b *testing.B) {
	parsed := carrier.Parse(benchCarrier)
	b.ReportAllocs()
	for b.Loop() {
		detect.Normalize(parsed)
	}
}
