package lensprocessor_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/resourceprocessor"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/nemolens/lens-go/collector/processor/lensprocessor"
)

// benchProc writes a fake /proc with one Slurm task (pid 200) and returns
// its root.
func benchProc(b *testing.B) string {
	b.Helper()
	root := filepath.Join(b.TempDir(), "proc")
	dir := filepath.Join(root, "200")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	stat := "200 (python) S 1 200 200 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 600 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	env := "SLURM_JOB_ID=4242\x00SLURM_CLUSTER_NAME=c1\x00SLURM_PROCID=1\x00SLURM_NTASKS=2\x00SLURM_LOCALID=1\x00SLURM_STEP_ID=0\x00SLURM_JOB_NAME=train\x00HOME=/home/u\x00"
	for name, text := range map[string]string{"stat": stat, "environ": env, "cgroup": "0::/user.slice\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// benchTask starts a real process of a Slurm task (sleep, with the
// task's variables) for the lens processor to read from the real /proc,
// and returns its pid.
func benchTask(b *testing.B) int {
	b.Helper()
	cmd := exec.Command("sleep", "3600")
	cmd.Env = []string{"SLURM_JOB_ID=4242", "SLURM_CLUSTER_NAME=c1", "SLURM_PROCID=1", "SLURM_NTASKS=2",
		"SLURM_LOCALID=1", "SLURM_STEP_ID=0", "SLURM_JOB_NAME=train", "PATH=/usr/bin:/bin"}
	if err := cmd.Start(); err != nil {
		b.Skip("sleep:", err)
	}
	b.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// processors returns the configurations: "lens" reads the real /proc
// (a cached process is checked by its pidfd), "lens-fakeproc" a fake tree
// (checked by /proc/<pid>/stat's start time, as without pidfds), and
// "resource" is the contrib resource processor inserting one attribute.
func processors(b *testing.B, pid *int) map[string]component.Config {
	b.Helper()
	lc := lensprocessor.NewFactory().CreateDefaultConfig().(*lensprocessor.Config)
	lc.Hostname = "node1"
	lc.RankFrom = "slurm"
	lc.GPU.Enabled = false
	fake := *lc
	fake.ProcRoot = benchProc(b)
	rc := resourceprocessor.NewFactory().CreateDefaultConfig()
	conf := confmap.NewFromStringMap(map[string]any{"attributes": []any{
		map[string]any{"key": "deployment.environment", "value": "prod", "action": "insert"},
	}})
	if err := conf.Unmarshal(rc); err != nil {
		b.Fatal(err)
	}
	// resource-same: the contrib processor inserting as many attributes as
	// the lens processor sets for this task (the same resource work, from a
	// static list instead of the process's job).
	var same []any
	for _, k := range []string{"nemo.run.id", "nv.dl.rank", "nv.dl.world_size", "nv.dl.local_rank", "slurm.job.id",
		"slurm.job.id.raw", "slurm.array.job_id", "slurm.array.task_id", "slurm.array.count", "slurm.job.name",
		"slurm.cluster.name", "slurm.ntasks", "slurm.restart_count", "nv.dl.job.uuid", "host.name"} {
		same = append(same, map[string]any{"key": k, "value": "v", "action": "insert"})
	}
	rcSame := resourceprocessor.NewFactory().CreateDefaultConfig()
	if err := confmap.NewFromStringMap(map[string]any{"attributes": same}).Unmarshal(rcSame); err != nil {
		b.Fatal(err)
	}
	*pid = 200
	if lc.ProcRoot == "/proc" {
		*pid = benchTask(b)
	}
	return map[string]component.Config{"lens": lc, "lens-fakeproc": &fake, "resource": rc, "resource-same": rcSame}
}

func factory(name string) processor.Factory {
	if strings.HasPrefix(name, "resource") {
		return resourceprocessor.NewFactory()
	}
	return lensprocessor.NewFactory()
}

// BenchmarkTraces: per span, a batch of one process's resource with
// spansPerResource spans, the resource's own attributes put back before
// each batch (as each batch from a receiver is new). Both processors in
// one run; compare their ns/span.
func BenchmarkTraces(b *testing.B) {
	for _, spans := range []int{1, 10, 100, 512} {
		for _, name := range []string{"resource", "resource-same", "lens", "lens-fakeproc"} {
			b.Run(fmt.Sprintf("%s/spans=%d", name, spans), func(b *testing.B) {
				var pid int
				cfg := processors(b, &pid)[name]
				if name == "lens-fakeproc" {
					pid = 200
				}
				f := factory(name)
				p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Start(context.Background(), nil); err != nil {
					b.Fatal(err)
				}
				defer p.Shutdown(context.Background())
				td := ptrace.NewTraces()
				rs := td.ResourceSpans().AppendEmpty()
				own := pcommon.NewMap()
				own.PutInt("process.pid", int64(pid))
				own.PutStr("service.name", "trainer")
				own.PutStr("telemetry.sdk.language", "python")
				own.CopyTo(rs.Resource().Attributes())
				ss := rs.ScopeSpans().AppendEmpty()
				for i := range spans {
					ss.Spans().AppendEmpty().SetName(fmt.Sprint("step", i))
				}
				if err := p.ConsumeTraces(context.Background(), td); err != nil { // warm
					b.Fatal(err)
				}
				if _, ok := rs.Resource().Attributes().Get("deployment.environment"); !ok && name == "resource" {
					b.Fatal("resource processor did nothing")
				}
				if _, ok := rs.Resource().Attributes().Get("slurm.job.id"); !ok && name != "resource" {
					b.Fatal("lens processor did nothing")
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuTime()
				for b.Loop() {
					own.CopyTo(rs.Resource().Attributes())
					if err := p.ConsumeTraces(context.Background(), td); err != nil {
						b.Fatal(err)
					}
				}
				reportPer(b, cpu0, spans, "span")
			})
		}
	}
}

// BenchmarkMetrics: per data point, one process's resource with points
// gauge points.
func BenchmarkMetrics(b *testing.B) {
	for _, points := range []int{10, 100, 512} {
		for _, name := range []string{"resource", "resource-same", "lens", "lens-fakeproc"} {
			b.Run(fmt.Sprintf("%s/points=%d", name, points), func(b *testing.B) {
				var pid int
				cfg := processors(b, &pid)[name]
				if name == "lens-fakeproc" {
					pid = 200
				}
				f := factory(name)
				p, err := f.CreateMetrics(context.Background(), processortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Start(context.Background(), nil); err != nil {
					b.Fatal(err)
				}
				defer p.Shutdown(context.Background())
				md := pmetric.NewMetrics()
				rm := md.ResourceMetrics().AppendEmpty()
				own := pcommon.NewMap()
				own.PutInt("process.pid", int64(pid))
				own.PutStr("service.name", "trainer")
				own.CopyTo(rm.Resource().Attributes())
				dps := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty().SetEmptyGauge().DataPoints()
				for i := range points {
					dps.AppendEmpty().SetIntValue(int64(i))
				}
				if err := p.ConsumeMetrics(context.Background(), md); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuTime()
				for b.Loop() {
					own.CopyTo(rm.Resource().Attributes())
					if err := p.ConsumeMetrics(context.Background(), md); err != nil {
						b.Fatal(err)
					}
				}
				reportPer(b, cpu0, points, "point")
			})
		}
	}
}

// cpuTime is the CPU time (user and system) the process has used: on a
// loaded machine a syscall's wait for a CPU inflates wall time, not this.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportPer reports wall and CPU nanoseconds per item (span, point).
func reportPer(b *testing.B, cpu0 time.Duration, items int, item string) {
	n := float64(b.N * items)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/"+item)
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/n, "cpu-ns/"+item)
}
