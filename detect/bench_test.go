package detect_test

import (
	"context"
	"maps"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/scalegen"
	"github.com/nemolens/lens-go/lensconv"
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

// BenchmarkScaleDetect measures detect.All against the size of the carrier
// it finds in the environment, side by side with the OpenTelemetry Go SDK
// doing the same job (resource.New with WithFromEnv, WithHost,
// WithProcessPID and WithTelemetrySDK, which reads the carrier from the
// process environment) and with a single-pass floor (detectFloor). The cases
// and names are those of the carrier scale benchmarks (carrier/bench_test.go):
//
//	BenchmarkScaleDetect/entries=1000/value=10B/shape=escaped/lens
//	BenchmarkScaleDetect/entries=1000/value=10B/shape=escaped/otel-sdk
//	BenchmarkScaleDetect/entries=1000/value=10B/shape=escaped/floor
//
// The environment is the Slurm task of scalegen.SlurmTask (rank 1234 of a
// 10,000-task job, eight GPUs in CUDA_VISIBLE_DEVICES, so nvidia-smi never
// runs); its carrier is the launcher's 19 entries (scalegen.LauncherCarrier,
// which hold 8 of the allowlisted Slurm and nv.dl keys Detect decodes)
// followed by the N generated entries of the case (scalegen.Text: keys
// nv.dl.key.NNNNNN, which Detect must scan but does not keep). Host name, PID
// and the Kubernetes path are live on every side. Only the plain and
// escaped shapes are measured: Detect decodes no generated value, so the
// other shapes change nothing on the Lens side. Run them with, e.g.,
//
//	go test -run '^$' -bench '^BenchmarkScaleDetect' -benchtime 200ms ./detect/
func BenchmarkScaleDetect(b *testing.B) {
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	b.Cleanup(func() { otel.SetErrorHandler(prev) })
	ctx := context.Background()
	allow := make(map[string]bool)
	for _, k := range lensconv.InheritedKeys() {
		allow[k] = true
	}
	for _, c := range scalegen.Cases(scalegen.Plain, scalegen.Escaped) {
		env := environ.Map(scalegen.SlurmTask())
		text := scalegen.LauncherCarrier + "," + scalegen.Text(c.Entries, c.Size, c.Shape)
		env[carrier.EnvVar] = text
		b.Run(c.String(), func(b *testing.B) {
			b.Setenv(carrier.EnvVar, text)
			b.Run("lens", func(b *testing.B) {
				if m := detect.All(ctx, detect.WithEnv(env)); !m.Has("slurm.job.name") || !m.Has(lensconv.HostName) {
					b.Fatalf("detect.All found no Slurm job: %v", m.Keys())
				}
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					detect.All(ctx, detect.WithEnv(env))
				}
			})
			b.Run("otel-sdk", func(b *testing.B) {
				r, err := resource.New(ctx, resource.WithFromEnv(), resource.WithHost(),
					resource.WithProcessPID(), resource.WithTelemetrySDK())
				if want := 19 + c.Entries + 3 + 2; err != nil || r.Len() != want {
					b.Fatalf("the SDK's resource has %d attributes, want %d (%v)", r.Len(), want, err)
				}
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					resource.New(ctx, resource.WithFromEnv(), resource.WithHost(),
						resource.WithProcessPID(), resource.WithTelemetrySDK())
				}
			})
			b.Run("floor", func(b *testing.B) {
				if got := detectFloor(env, allow); len(got) != 2+8+len(floorSlurmVars) {
					b.Fatalf("the floor found %d attributes", len(got))
				}
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					detectFloor(env, allow)
				}
			})
		})
	}
}

// floorSlurmVars are the Slurm variables the floor copies.
var floorSlurmVars = []string{
	"SLURM_JOB_ID", "SLURM_JOB_NAME", "SLURM_CLUSTER_NAME", "SLURM_JOB_PARTITION",
	"SLURM_NNODES", "SLURM_NTASKS", "SLURM_JOB_USER", "SLURM_STEP_ID",
	"SLURM_TOPOLOGY_ADDR", "SLURM_TOPOLOGY_ADDR_PATTERN",
}

type floorAttr struct{ key, value string }

// detectFloor does the kind of work Detect does, in one pass and without
// the reference's rules: the host name and the PID, the carrier split on
// ',' and '=' with only the allowlisted keys kept and their values
// percent-decoded (no trimming, no duplicate handling, no integer check),
// then ten Slurm variables copied as they are (no derivation, no merge).
func detectFloor(env environ.Map, allow map[string]bool) []floorAttr {
	host, _ := os.Hostname()
	out := make([]floorAttr, 0, 32)
	out = append(out, floorAttr{"host.name", host}, floorAttr{"process.pid", strconv.Itoa(os.Getpid())})
	text := env[carrier.EnvVar]
	for text != "" {
		var seg string
		seg, text, _ = strings.Cut(text, ",")
		if k, v, ok := strings.Cut(seg, "="); ok && allow[k] {
			out = append(out, floorAttr{k, floorDecode(v)})
		}
	}
	for _, name := range floorSlurmVars {
		if v, ok := env[name]; ok {
			out = append(out, floorAttr{name, v})
		}
	}
	return out
}

// floorDecode turns every %XY with two hex digits into its byte.
func floorDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	unhex := func(c byte) byte {
		switch {
		case '0' <= c && c <= '9':
			return c - '0'
		case 'a' <= c && c <= 'f':
			return c - 'a' + 10
		case 'A' <= c && c <= 'F':
			return c - 'A' + 10
		}
		return 0xff
	}
	buf := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if hi, lo := unhex(s[i+1]), unhex(s[i+2]); hi|lo < 16 {
				buf = append(buf, hi<<4|lo)
				i += 2
				continue
			}
		}
		buf = append(buf, s[i])
	}
	return string(buf)
}
