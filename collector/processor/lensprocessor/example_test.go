package lensprocessor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/nemolens/lens-go/collector/processor/lensprocessor"
)

// A span from a process with a plain OpenTelemetry SDK (its resource has
// process.pid and service.name only) gets the job of its Slurm task. The
// example reads a fake /proc; a Collector reads the node's.
func Example() {
	root, _ := os.MkdirTemp("", "proc")
	defer os.RemoveAll(root)
	dir := filepath.Join(root, "4711")
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "stat"), []byte("4711 (python) S 1 4711 4711 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "environ"), []byte("SLURM_JOB_ID=4242\x00SLURM_CLUSTER_NAME=c1\x00SLURM_PROCID=1\x00SLURM_NTASKS=2\x00SLURM_STEP_ID=0\x00"), 0o644)

	f := lensprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*lensprocessor.Config)
	cfg.ProcRoot = root
	cfg.Hostname = "node1"
	cfg.RankFrom = "slurm"
	cfg.GPU.Enabled = false
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		panic(err)
	}
	_ = p.Start(context.Background(), nil)
	defer p.Shutdown(context.Background())

	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutInt("process.pid", 4711)
	rs.Resource().Attributes().PutStr("service.name", "trainer")
	rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("step")
	_ = p.ConsumeTraces(context.Background(), td)

	attrs := sink.AllTraces()[0].ResourceSpans().At(0).Resource().Attributes()
	for _, k := range []string{"service.name", "slurm.job.id", "nemo.run.id", "nv.dl.rank", "nv.dl.world_size", "nv.dl.job.uuid", "host.name"} {
		v, _ := attrs.Get(k)
		fmt.Printf("%s=%s\n", k, v.AsString())
	}
	// Output:
	// service.name=trainer
	// slurm.job.id=4242
	// nemo.run.id=4242
	// nv.dl.rank=1
	// nv.dl.world_size=2
	// nv.dl.job.uuid=0be3ad98-acba-5223-a341-d89d36507a12
	// host.name=node1
}
