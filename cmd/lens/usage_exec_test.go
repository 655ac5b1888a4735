//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/usage"
)

// burn is the helper mode burn=C,M: it spends C ms of CPU time (its own,
// as getrusage counts it) and holds M MiB, every page written, then prints
// what getrusage(RUSAGE_SELF) counts for it at the end as its last line,
// "usage " and a selfUsage in JSON, and exits 0. What it uses depends on
// neither the machine's load nor its speed.
func burn(arg string) int {
	c, m, _ := strings.Cut(arg, ",")
	cpuMS, err1 := strconv.Atoi(c)
	mib, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "burn=C,M: bad argument", arg)
		return 97
	}
	buf := make([]byte, mib<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = byte(i)
	}
	x := uint64(1)
	var ru syscall.Rusage
	for {
		for range 1 << 16 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		if ru.Utime.Nano()+ru.Stime.Nano() >= int64(cpuMS)*1e6 {
			break
		}
	}
	// Keep buf and x alive to the end.
	fmt.Println(len(buf), buf[len(buf)-4096], x&1)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	out, _ := json.Marshal(selfUsage{ru.Utime.Nano() + ru.Stime.Nano(), ru.Maxrss})
	fmt.Println("usage " + string(out))
	return 0
}

// selfUsage is what helper mode burn= counts for itself at its end.
type selfUsage struct{ CPUNanos, MaxRSSKiB int64 }

// TestExecUsage: lens exec's span carries the command's CPU time and peak
// memory as wait4 reports them: at least what the command counted for
// itself (getrusage) at its end — wait4 adds only its exit — and not half
// as much again (lens's own usage, or a count taken twice, would be). The
// command is compared with its own accounting in the same run, never with
// another run of it: two runs differ by more than any margin on a busy
// machine (issue 36).
func TestExecUsage(t *testing.T) {
	t.Parallel()
	const cpuMS, mib = 300, 64
	mode := fmt.Sprintf("burn=%d,%d", cpuMS, mib)

	r := runBin(t, helperEnv(mode, map[string]string{
		"NEMO_LENS_ENABLED":  "true",
		"NEMO_LENS_EXPORTER": "console",
	}), "", "exec", "--", self(t))
	if r.code != 0 {
		t.Fatalf("lens exec: %v", r)
	}
	spans := consoleSpans(t, r.stderr)
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1: %s", len(spans), r.stderr)
	}
	var self selfUsage
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if u, ok := strings.CutPrefix(lines[len(lines)-1], "usage "); !ok || json.Unmarshal([]byte(u), &self) != nil || self.CPUNanos < cpuMS*1e6 {
		t.Fatalf("the command's last line is not its usage (\"usage\" and at least %d ms of CPU time in JSON): stdout %q", cpuMS, r.stdout)
	}
	wantCPU := float64(self.CPUNanos) / 1e9
	wantPeak := float64(self.MaxRSSKiB * 1024)
	s := spans[0]
	num := func(key string) float64 {
		v, ok := s.attr(key).(float64) // JSON numbers
		if !ok {
			t.Fatalf("span attribute %s = %v (%T), want a number; attributes %+v", key, s.attr(key), s.attr(key), s.Attributes)
		}
		return v
	}
	gotCPU := num(usage.CPUTimeUser) + num(usage.CPUTimeSystem)
	gotPeak := num(usage.MemoryPeak)
	within := func(what string, got, want float64) {
		if got < want || got > 1.5*want {
			t.Errorf("%s: span %v, the command's own count at its end %v: want at least that and at most 1.5 times", what, got, want)
		}
	}
	within("CPU seconds", gotCPU, wantCPU)
	within("peak RSS bytes", gotPeak, wantPeak)
	if gotPeak < mib<<20 {
		t.Errorf("peak RSS %v B, below the %d MiB the command held", gotPeak, mib)
	}
	for _, key := range []string{usage.PagingFaultsMinor, usage.PagingFaultsMajor, usage.DiskIORead, usage.DiskIOWrite,
		usage.ContextSwitchesVoluntary, usage.ContextSwitchesInvoluntary} {
		if v := num(key); v < 0 {
			t.Errorf("%s = %v, want ≥ 0", key, v)
		}
	}
	// The command wrote every page of 64 MiB: at least that many minor
	// faults (4 KiB pages).
	if v := num(usage.PagingFaultsMinor); v < mib<<8 {
		t.Errorf("%s = %v, want ≥ %d", usage.PagingFaultsMinor, v, mib<<8)
	}
	if v := s.attr(usage.CgroupMemoryPeak); v != nil {
		// Only where the test runs alone in a cgroup v2 of its own: never
		// lens's, which holds the test binary too.
		t.Errorf("%s = %v on a span of a lens that shares its cgroup", usage.CgroupMemoryPeak, v)
	}
}

// TestExecCgroupMemoryPeak: the span carries the cgroup's memory.peak
// when lens's cgroup v2 holds lens alone before the command starts and
// after it ends (docs/usage.md#cgroup); never otherwise, nor when the
// proc file system is another PID namespace's (its self link names another
// pid than lens's: docs/usage.md#pid-namespace), which stderr says once.
// The cgroup tree is a fake one under app.fsRoot.
func TestExecCgroupMemoryPeak(t *testing.T) {
	t.Parallel()
	const pid, peak = 4242, "734003200"
	for _, tc := range []struct {
		name, cgroup, procs string
		want                any
		self                string // proc/self's target, when not ""
	}{
		{"alone", "0::/slurm/job_7/step_0/task_1\n", "4242\n", float64(734003200), ""},
		{"alone, this namespace's proc", "0::/slurm/job_7/step_0/task_1\n", "4242\n", float64(734003200), "4242"},
		{"another namespace's proc", "0::/slurm/job_7/step_0/task_1\n", "4242\n", nil, "777"},
		{"shared with another rank", "0::/slurm/job_7/step_0/user\n", "4242\n4243\n", nil, ""},
		{"cgroup v1 only", "4:memory:/slurm/job_7\n", "4242\n", nil, ""},
		{"deleted cgroup", "0::/slurm/job_7 (deleted)\n", "4242\n", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			write := func(rel, content string) {
				p := filepath.Join(root, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("proc/4242/cgroup", tc.cgroup)
			if tc.self != "" {
				if err := os.Symlink(tc.self, filepath.Join(root, "proc", "self")); err != nil {
					t.Fatal(err)
				}
			}
			for _, dir := range []string{"slurm/job_7/step_0/task_1", "slurm/job_7/step_0/user", "slurm/job_7"} {
				write("sys/fs/cgroup/"+dir+"/cgroup.procs", tc.procs)
				write("sys/fs/cgroup/"+dir+"/memory.peak", peak+"\n")
			}
			var stdout, stderr bytes.Buffer
			a := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
				env: environ.Map{"NEMO_LENS_ENABLED": "true", "NEMO_LENS_EXPORTER": "console", "PATH": os.Getenv("PATH"),
					"CUDA_VISIBLE_DEVICES": "", helperEnvName: "exit=0"},
				getpid: func() int { return pid }, fsRoot: root}
			if code := a.main(context.Background(), []string{"exec", "--", self(t)}); code != 0 {
				t.Fatalf("lens exec: exit %d; stderr %s", code, stderr.String())
			}
			spans := consoleSpans(t, stderr.String())
			if len(spans) != 1 {
				t.Fatalf("%d spans: %s", len(spans), stderr.String())
			}
			if got := spans[0].attr(usage.CgroupMemoryPeak); got != tc.want {
				t.Errorf("%s = %v, want %v", usage.CgroupMemoryPeak, got, tc.want)
			}
			said := strings.Count(stderr.String(), "another PID namespace's")
			if want := map[bool]int{true: 1}[tc.self == "777"]; said != want {
				t.Errorf("stderr names another PID namespace %d times, want %d:\n%s", said, want, stderr.String())
			}
		})
	}
}
