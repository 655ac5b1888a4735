package detect_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

func ExampleJobUUID() {
	// The batch step of job 12 on cluster "probe" and a requeued srun step of
	// the same job share the job UUID; the run UUID changes with the requeue.
	batch := environ.Map{"SLURM_CLUSTER_NAME": "probe", "SLURM_JOB_ID": "12"}
	requeued := environ.Map{"SLURM_CLUSTER_NAME": "probe", "SLURM_JOB_ID": "12", "SLURM_RESTART_COUNT": "1", "SLURM_STEP_ID": "0"}

	fmt.Println(detect.JobUUIDName(batch), detect.JobUUID(batch))
	fmt.Println(detect.JobUUID(requeued) == detect.JobUUID(batch))
	name, _ := detect.RunUUIDName(requeued, "")
	run, _ := detect.RunUUID(requeued, "")
	fmt.Println(name, run)
	_, ok := detect.RunUUID(environ.Map{}, "")
	fmt.Println("outside Slurm without a run id:", ok)
	// Output:
	// nemo.lens.job/probe/12 20ac1e80-62b1-5b9d-acf2-c86e9b65c4a3
	// true
	// nemo.lens.run/probe/12/sr1 e0640bc0-2749-5bc0-9da8-3c42e343dc7e
	// outside Slurm without a run id: false
}

func ExampleAll() {
	// An srun task inside an sbatch script (as Slurm 22.05 sets it) whose
	// launcher put the authoritative node count into the carrier.
	env := environ.Map{
		"SLURM_JOB_ID": "3", "SLURM_JOB_NAME": "b2.sh", "SLURM_CLUSTER_NAME": "probe",
		"SLURM_JOB_PARTITION": "debug", "SLURM_JOB_NUM_NODES": "1", "SLURM_NTASKS": "2",
		"SLURM_STEP_ID": "0", "SLURMD_NODENAME": "localhost",
		"CUDA_VISIBLE_DEVICES":     "0,1,2,3",
		"OTEL_RESOURCE_ATTRIBUTES": "slurm.nnodes=2,nv.dl.rank=1",
	}
	m := detect.All(context.Background(), detect.WithEnv(env), detect.WithHostname(func() (string, error) { return "node01", nil }), detect.WithPID(4242), detect.WithKubernetesSecretsPath(os.DevNull+"/none"))
	for k, v := range m.All() {
		fmt.Printf("%s=%v (%v)\n", k, v, v.Kind())
	}
	// Output:
	// host.name=node01 (string)
	// process.pid=4242 (int64)
	// host.gpu.count=4 (int64)
	// slurm.nnodes=2 (int64)
	// slurm.job.id=3 (string)
	// slurm.job.id.raw=3 (string)
	// slurm.array.job_id=3 (string)
	// slurm.array.task_id=0 (string)
	// slurm.array.count=1 (int64)
	// slurm.job.name=b2.sh (string)
	// slurm.cluster.name=probe (string)
	// slurm.partition=debug (string)
	// slurm.ntasks=2 (int64)
	// slurm.restart_count=0 (int64)
	// nv.dl.job.uuid=0461fb81-10eb-5506-9e9d-16b03959c379 (string)
}

func ExampleDetector() {
	opts := []detect.Option{detect.WithEnv(environ.Map{"SLURM_JOB_ID": "99", "SLURM_NTASKS": "8"}), detect.WithHostname(func() (string, error) { return "node01", nil }), detect.WithPID(4242), detect.WithGPUCount(func(context.Context) (int, bool) { return 0, false })}
	r, err := resource.New(context.Background(),
		resource.WithDetectors(detect.SlurmDetector(opts...)))
	if err != nil {
		panic(err)
	}
	for _, kv := range r.Attributes() {
		fmt.Printf("%s=%s (%s)\n", kv.Key, kv.Value.String(), kv.Value.Type())
	}
	fmt.Printf("schema URL: %q\n", r.SchemaURL())
	// Output:
	// nv.dl.job.uuid=6182dd4c-2425-518e-96d1-34c342b051b7 (STRING)
	// slurm.array.count=1 (INT64)
	// slurm.array.job_id=99 (STRING)
	// slurm.array.task_id=0 (STRING)
	// slurm.job.id=99 (STRING)
	// slurm.job.id.raw=99 (STRING)
	// slurm.ntasks=8 (INT64)
	// slurm.restart_count=0 (INT64)
	// schema URL: ""
}

func ExampleNormalize() {
	parsed := carrier.Parse("nv.dl.rank=7,nv.dl.world_size=1_0,slurm.nnodes=8,nemo.run.id=007")
	// Log without time stamps so the output is stable.
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	out, warned := detect.Normalize(parsed, detect.WithLogger(logger))
	for k, v := range out.All() {
		fmt.Printf("%s=%v (%v)\n", k, v, v.Kind())
	}
	fmt.Println("warned:", warned)
	// Output:
	// level=WARN msg="resource attribute nv.dl.world_size requires a base-10 integer; the invalid value is preserved" logger=nemo.lens.semconv.resources key=nv.dl.world_size value=1_0 kind=string
	// nv.dl.rank=7 (int64)
	// nv.dl.world_size=1_0 (string)
	// slurm.nnodes=8 (string)
	// nemo.run.id=007 (string)
	// warned: [nv.dl.world_size]
}

func ExampleExplanation() {
	e := &detect.Explanation{}
	detect.Slurm(context.Background(), detect.WithEnv(environ.Map{
		"SLURM_JOB_ID": "12", "SLURM_JOB_NUM_NODES": "4", "SLURM_STEP_ID": "0", "SLURMD_NODENAME": "n1",
		"OTEL_RESOURCE_ATTRIBUTES": "slurm.nnodes=abc",
	}), detect.WithExplanation(e))
	for _, key := range []string{"slurm.nnodes", "slurm.head_node.name", "nv.dl.job.uuid"} {
		o, _ := e.Origin(key)
		fmt.Printf("%s: source %q notes %q\n", o.Key, o.Source, o.Notes)
	}
	// Output:
	// slurm.nnodes: source "env SLURM_JOB_NUM_NODES" notes ["carrier value \"abc\" for slurm.nnodes is not a base-10 integer; used SLURM_JOB_NUM_NODES"]
	// slurm.head_node.name: source "" notes ["SLURM_STEP_ID is set (inside a step)"]
	// nv.dl.job.uuid: source "derived (UUIDv5 of \"nemo.lens.job/nocluster/12\")" notes []
}

// The GPUs a process may use, as resource attributes: here a process
// that CUDA_VISIBLE_DEVICES gives the node's GPU 1, on a (fake) driver tree
// of two GPUs.
func ExampleVisibleGPUs() {
	dir, _ := os.MkdirTemp("", "gpus")
	defer os.RemoveAll(dir)
	for i, uuid := range []string{"GPU-6d2d4f4e", "GPU-9a0b1c2d"} {
		bus := fmt.Sprintf("0000:%02x:00.0", 7+8*i)
		_ = os.MkdirAll(filepath.Join(dir, bus), 0o755)
		info := "Model: \t\t NVIDIA A100-SXM4-80GB\nGPU UUID: \t " + uuid + "\nBus Location: \t " + bus + "\nDevice Minor: \t " + fmt.Sprint(1-i) + "\n"
		_ = os.WriteFile(filepath.Join(dir, bus, "information"), []byte(info), 0o644)
	}
	devs, err := detect.VisibleGPUs(context.Background(),
		detect.WithEnv(environ.Map{"CUDA_VISIBLE_DEVICES": "1"}), detect.WithNvidiaProcfs(dir))
	if err != nil {
		fmt.Println(err)
		return
	}
	for k, v := range detect.VisibleGPUAttributes(devs).All() {
		fmt.Printf("%s=%s\n", k, v)
	}
	// Output:
	// nv.gpu.visible.uuid=GPU-9a0b1c2d
	// nv.gpu.visible.index=1
	// nv.gpu.visible.pci_bus_id=00000000:0F:00.0
	// nv.gpu.visible.model=NVIDIA A100-SXM4-80GB
	// nv.gpu.visible.device=nvidia0
}
