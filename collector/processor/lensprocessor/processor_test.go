package lensprocessor

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/bounded"
)

const node = "node1"

// taskEnv is the environment of the second task of a Slurm step.
var taskEnv = map[string]string{
	"SLURM_JOB_ID": "4242", "SLURM_CLUSTER_NAME": "c1", "SLURM_PROCID": "1", "SLURM_NTASKS": "2",
	"SLURM_LOCALID": "1", "SLURM_STEP_ID": "0", "SLURM_JOB_NAME": "train", "SLURM_JOB_NUM_NODES": "1",
	"HOME": "/home/u", "PATH": "/usr/bin",
}

// plainEnv is the environment of a process outside any job.
var plainEnv = map[string]string{"HOME": "/root", "PATH": "/usr/bin"}

func testProcessor(t *testing.T, f *fakeProc, rankFrom string, open func(string) (*os.File, error)) (*lensProcessor, *observer.ObservedLogs) {
	t.Helper()
	cfg := createDefaultConfig()
	cfg.ProcRoot = f.root
	cfg.Hostname = node
	cfg.RankFrom = rankFrom
	cfg.ResolveTimeout = time.Minute // a hang guard: local reads finish at once
	cfg.GPU.Enabled = false
	core, logs := observer.New(zapcore.DebugLevel)
	p := newLensProcessor(cfg, zap.New(core))
	if open != nil {
		p.fs.open = open
		p.res.fs.open = open
	}
	return p, logs
}

// stamped returns the resource attributes of a span batch from a resource
// with attrs after p.
func stamped(t *testing.T, p *lensProcessor, attrs map[string]any) map[string]any {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	if err := rs.Resource().Attributes().FromRaw(attrs); err != nil {
		t.Fatal(err)
	}
	rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("step")
	out, err := p.processTraces(context.Background(), td)
	if err != nil {
		t.Fatal(err)
	}
	return out.ResourceSpans().At(0).Resource().Attributes().AsRaw()
}

// want is what lens's detection gives env, with the node's host.name, over
// the sender's own attributes.
func want(t *testing.T, env map[string]string, rankFrom string, own map[string]any) map[string]any {
	t.Helper()
	m, _ := lens.JobAttributes(context.Background(), environ.Map(env), rankFrom,
		detect.WithKubernetesSecretsPath(filepath.Join(t.TempDir(), "absent")))
	out := map[string]any{"host.name": node}
	for k, v := range m.All() {
		switch {
		case v.Kind().String() == "int64":
			out[k] = v.AsInt64()
		default:
			out[k] = v.AsString()
		}
	}
	maps.Copy(out, own)
	return out
}

func TestEnvironOnParent(t *testing.T) {
	t.Parallel()
	f := newFakeProc(t)
	f.add(1, 0, 1, plainEnv, "")
	f.add(100, 1, 500, plainEnv, "")   // slurmstepd: no job variables
	f.add(200, 100, 600, taskEnv, "")  // the task
	f.add(300, 200, 700, plainEnv, "") // a worker that cleared its environment
	p, _ := testProcessor(t, f, detect.RankFromSlurm, nil)
	own := map[string]any{"process.pid": int64(300), "service.name": "loader"}
	got := stamped(t, p, own)
	if w := want(t, taskEnv, detect.RankFromSlurm, own); !maps.Equal(got, w) {
		t.Errorf("resource =\n%v\nwant\n%v", got, w)
	}
	if got["nv.dl.rank"] != int64(1) || got["slurm.job.id"] != "4242" || got["nemo.run.id"] != "4242" {
		t.Errorf("rank, job or run missing: %v", got)
	}
}

func TestOutsideAnyJob(t *testing.T) {
	t.Parallel()
	f := newFakeProc(t)
	f.add(1, 0, 1, plainEnv, "")
	f.add(50, 1, 10, plainEnv, "")
	p, _ := testProcessor(t, f, "", nil)
	own := map[string]any{"process.pid": int64(50)}
	if got := stamped(t, p, own); !maps.Equal(got, own) {
		t.Errorf("a process outside any job got %v", got)
	}
	gone := map[string]any{"process.pid": int64(51)}
	if got := stamped(t, p, gone); !maps.Equal(got, gone) {
		t.Errorf("a process that is gone got %v", got)
	}
	nopid := map[string]any{"service.name": "x"}
	if got := stamped(t, p, nopid); !maps.Equal(got, nopid) {
		t.Errorf("a resource without process.pid got %v", got)
	}
}

func TestNeverOverwrite(t *testing.T) {
	t.Parallel()
	f := newFakeProc(t)
	f.add(1, 0, 1, plainEnv, "")
	f.add(200, 1, 600, taskEnv, "")
	p, _ := testProcessor(t, f, detect.RankFromSlurm, nil)
	own := map[string]any{"process.pid": int64(200), "slurm.job.id": "sender", "nv.dl.rank": int64(7), "host.name": node}
	got := stamped(t, p, own)
	for k, v := range own {
		if got[k] != v {
			t.Errorf("%s = %v, want the sender's %v", k, got[k], v)
		}
	}
	if got["slurm.job.name"] != "train" {
		t.Errorf("the missing keys are not added: %v", got)
	}
}

func TestOtherNodeUntouched(t *testing.T) {
	t.Parallel()
	f := newFakeProc(t)
	f.add(1, 0, 1, plainEnv, "")
	f.add(200, 1, 600, taskEnv, "")
	p, _ := testProcessor(t, f, "", nil)
	own := map[string]any{"process.pid": int64(200), "host.name": "node2"}
	if got := stamped(t, p, own); !maps.Equal(got, own) {
		t.Errorf("another node's process got %v", got)
	}
	fq := map[string]any{"process.pid": int64(200), "host.name": node + ".cluster.example"}
	if got := stamped(t, p, fq); got["slurm.job.id"] != "4242" {
		t.Errorf("this node's fully qualified name: %v", got)
	}
}

// TestPidReuse: a pid that another job's process takes (another start
// time) never gets the old job's attributes.
func TestPidReuse(t *testing.T) {
	t.Parallel()
	f := newFakeProc(t)
	f.add(1, 0, 1, plainEnv, "")
	f.add(200, 1, 600, taskEnv, "")
	p, _ := testProcessor(t, f, "", nil)
	own := map[string]any{"process.pid": int64(200)}
	if got := stamped(t, p, own); got["slurm.job.id"] != "4242" {
		t.Fatalf("first process: %v", got)
	}
	other := maps.Clone(taskEnv)
	other["SLURM_JOB_ID"] = "5353"
	f.add(200, 1, 9000, other, "")
	if got := stamped(t, p, own); got["slurm.job.id"] != "5353" || got["nemo.run.id"] != "5353" {
		t.Errorf("reused pid: %v, want job 5353", got)
	}
	f.add(200, 1, 9100, plainEnv, "")
	if got := stamped(t, p, own); !maps.Equal(got, own) {
		t.Errorf("reused by a process outside any job: %v", got)
	}
	if n := p.cache.len(); n != 1 {
		t.Errorf("cache holds %d entries, want 1 (the pid's latest process)", n)
	}
}

// denyEnviron opens like the processor but refuses every environ file
// with EACCES, as the kernel does to a Collector without root or
// CAP_SYS_PTRACE.
func denyEnviron(path string) (*os.File, error) {
	if filepath.Base(path) == "environ" {
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.EACCES}
	}
	return bounded.Open(path)
}

func TestCgroupFallback(t *testing.T) {
	t.Parallel()
	f := newFakeProc(t)
	f.add(1, 0, 1, plainEnv, "")
	v2 := "0::/system.slice/node1_slurmstepd.scope/job_4242/step_0/user/task_1\n"
	f.add(200, 1, 600, taskEnv, v2)
	f.add(201, 1, 601, taskEnv, "0::/system.slice/node1_slurmstepd.scope/job_4242/step_0/user/task_0\n")
	p, logs := testProcessor(t, f, detect.RankFromSlurm, denyEnviron)
	got := stamped(t, p, map[string]any{"process.pid": int64(200)})
	w := map[string]any{"process.pid": int64(200), "slurm.job.id": "4242", "slurm.job.id.raw": "4242",
		"nemo.run.id": "4242", "nv.dl.rank": int64(1), "host.name": node}
	if !maps.Equal(got, w) {
		t.Errorf("cgroup fallback =\n%v\nwant\n%v", got, w)
	}
	if got := stamped(t, p, map[string]any{"process.pid": int64(201)}); got["nv.dl.rank"] != int64(0) {
		t.Errorf("second task: %v", got)
	}
	said := logs.FilterMessageSnippet("cannot read a process's environment").Len()
	if said != 1 {
		t.Errorf("the fallback was said %d times, want once", said)
	}
}

func TestCgroupV1AndSLUID(t *testing.T) {
	t.Parallel()
	f := newFakeProc(t)
	f.add(1, 0, 1, plainEnv, "")
	v1 := "12:memory:/slurm/uid_1000/job_77/step_batch/task_0\n11:freezer:/slurm/uid_1000/job_77/step_batch\n"
	f.add(10, 1, 5, taskEnv, v1)
	sluid := "0::/system.slice/slurmstepd.scope/sEKNKTV3WPV500/step_3/user/task_special\n"
	f.add(20, 1, 6, taskEnv, sluid) // readable: teaches the SLUID's job id
	f.add(30, 1, 7, taskEnv, sluid) // unreadable below
	f.add(40, 1, 8, taskEnv, "0::/system.slice/slurmstepd.scope/sAAAAAAAAAAAA0/step_0/user/task_2\n")
	open := func(path string) (*os.File, error) {
		if strings.Contains(path, "/20/") {
			return bounded.Open(path)
		}
		return denyEnviron(path)
	}
	p, _ := testProcessor(t, f, "", open)
	if got := stamped(t, p, map[string]any{"process.pid": int64(10)}); got["slurm.job.id"] != "77" || got["nv.dl.rank"] != nil {
		t.Errorf("cgroup v1 (no rank_from: no rank): %v", got)
	}
	if got := stamped(t, p, map[string]any{"process.pid": int64(20)}); got["slurm.job.id"] != "4242" {
		t.Errorf("readable process in a SLUID cgroup: %v", got)
	}
	got := stamped(t, p, map[string]any{"process.pid": int64(30)})
	if got["slurm.job.id"] != "4242" || got["slurm.sluid"] != "sEKNKTV3WPV500" {
		t.Errorf("SLUID mapped through a readable process's SLURM_JOB_ID: %v", got)
	}
	got = stamped(t, p, map[string]any{"process.pid": int64(40)})
	if got["slurm.job.id"] != nil || got["slurm.sluid"] != "sAAAAAAAAAAAA0" {
		t.Errorf("unknown SLUID: %v, want slurm.sluid alone", got)
	}
}

func TestCgroupCrossCheck(t *testing.T) {
	t.Parallel()
	f := newFakeProc(t)
	f.add(1, 0, 1, plainEnv, "")
	f.add(200, 1, 600, taskEnv, "0::/system.slice/slurmstepd.scope/job_99/step_0/user/task_0\n")
	p, logs := testProcessor(t, f, "", nil)
	got := stamped(t, p, map[string]any{"process.pid": int64(200)})
	if got["slurm.job.id"] != "99" || got["slurm.job.name"] != nil {
		t.Errorf("environ says 4242, cgroup 99: %v, want the cgroup's job alone", got)
	}
	if logs.FilterMessageSnippet("is not the job of its cgroup").Len() != 1 {
		t.Errorf("the disagreement is not said")
	}
}

// TestNonRegularEnviron: a FIFO where environ should be is refused at
// once (a blocking open would hang this test until its deadline).
func TestNonRegularEnviron(t *testing.T) {
	t.Parallel()
	f := newFakeProc(t)
	f.add(1, 0, 1, plainEnv, "")
	f.add(200, 1, 600, taskEnv, "")
	path := filepath.Join(f.root, "200", "environ")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	p, _ := testProcessor(t, f, "", nil)
	if _, err := p.fs.environ(200); !errors.Is(err, bounded.ErrNotRegular) {
		t.Errorf("environ of a FIFO: %v, want bounded.ErrNotRegular", err)
	}
	if info := p.res.resolve(context.Background(), 200); len(info.attrs) != 0 {
		t.Errorf("resolved %v from a FIFO", info.attrs)
	}
}

func TestEnvironBounded(t *testing.T) {
	t.Parallel()
	data := []byte("A=1\x00SLURM_JOB_ID=7\x00LONG=xxxxxxxx")
	if m := parseEnviron(data, true); m["SLURM_JOB_ID"] != "7" || len(m) != 2 {
		t.Errorf("cut environ: %v, want the complete entries", m)
	}
	if m := parseEnviron([]byte("A=1\x00A=2\x00=x\x00B"), false); m["A"] != "2" || len(m) != 1 {
		t.Errorf("duplicates and junk: %v", m)
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	if _, err := parseStat([]byte("12 (x) S")); err == nil {
		t.Error("short stat parsed")
	}
	if _, err := parseStat([]byte("garbage")); err == nil {
		t.Error("garbage parsed")
	}
}

func TestLRUBound(t *testing.T) {
	t.Parallel()
	var evicted []int
	c := newLRU[int](2, func(v int) { evicted = append(evicted, v) })
	c.add(1, 10)
	c.add(2, 20)
	c.get(1, nil)
	c.add(3, 30)
	if _, ok := c.get(2, nil); ok {
		t.Error("the least recently used entry was kept")
	}
	if _, ok := c.get(1, nil); !ok {
		t.Error("a recently used entry was dropped")
	}
	if _, ok := c.get(3, func(v int) bool { return v != 30 }); ok {
		t.Error("an invalid entry was served")
	}
	if c.len() != 1 || !slices.Equal(evicted, []int{20, 30}) {
		t.Errorf("len %d, evicted %v; want 1, [20 30]", c.len(), evicted)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	if err := createDefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for _, from := range append(detect.RankSources(), "") {
		c := createDefaultConfig()
		c.RankFrom = from
		if err := c.Validate(); err != nil {
			t.Errorf("rank_from %q: %v", from, err)
		}
	}
	for name, mod := range map[string]func(*Config){
		"rank_from":            func(c *Config) { c.RankFrom = "pbs" },
		"proc_root":            func(c *Config) { c.ProcRoot = "proc" },
		"cache_size":           func(c *Config) { c.CacheSize = 0 },
		"resolve_timeout":      func(c *Config) { c.ResolveTimeout = time.Hour },
		"max_environ_bytes":    func(c *Config) { c.MaxEnvironBytes = 10 },
		"gpu.refresh_interval": func(c *Config) { c.GPU.RefreshInterval = 0 },
		"gpu: info_series":     func(c *Config) { c.GPU.InfoSeries = false },
		"gpu.labels":           func(c *Config) { c.GPU.Labels = nil },
		"gpu.nvidia_procfs":    func(c *Config) { c.GPU.NvidiaProcfs = "rel" },
	} {
		c := createDefaultConfig()
		mod(c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming it", name, err)
		}
	}
}
