package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/collectortest"
	"github.com/nemolens/lens-go/lensconv"
)

// TestExecHungProbeKeepsSpan (issue 25 item 4): telemetry on,
// CUDA_VISIBLE_DEVICES unset, an nvidia-smi that hangs (with a child in its
// process group), a collector that answers: the span is still exported,
// without host.gpu.count, stderr says so, and no process of the probe
// outlives lens. On 85caa10 lens waited out the whole flush for the probe
// and exported nothing.
func TestExecHungProbeKeepsSpan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	smi := "#!/bin/sh\nsleep 3600 &\necho $! > '" + pidFile + ".tmp'\nmv '" + pidFile + ".tmp' '" + pidFile + "'\nwait\n"
	syscall.ForkLock.RLock() // no fork keeps the script open for writing (ETXTBSY)
	err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(smi), 0o755)
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	c := collectortest.NewHTTP(t, collectortest.OK)
	env := telemetryEnv(c.Endpoint, "http/protobuf", map[string]string{
		"PATH":                    dir + ":" + os.Getenv("PATH"),
		"LENS_NVIDIA_PROCFS":      filepath.Join(dir, "gpus"), // no driver tree: nvidia-smi decides
		"OTEL_BSP_EXPORT_TIMEOUT": "60000",
	})
	// The probe is stopped at half of --flush-timeout (5 s here), which
	// leaves the export as long as lens's default flush timeout: it is
	// the probe's hang that is under test, not how fast a loaded machine
	// exports (with 2 s, the export had 1 s).
	r := runBin(t, env, "", "exec", "--flush-timeout", "10s", "--", "true")
	if r.code != 0 {
		t.Fatalf("lens exec: %v", r)
	}
	span := exportedSpan(t, c)
	if span.GetName() != "lens exec true" {
		t.Errorf("span %q", span.GetName())
	}
	for _, req := range c.TraceRequests() {
		for _, rs := range req.GetResourceSpans() {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.GetKey() == "host.gpu.count" || strings.HasPrefix(kv.GetKey(), "nv.gpu.") {
					t.Errorf("the resource has %s from a probe that never answered", kv.GetKey())
				}
			}
		}
	}
	if !strings.Contains(r.stderr, "GPU probe") || !strings.Contains(r.stderr, "without host.gpu.count") {
		t.Errorf("stderr does not say that the span went without the GPU attributes:\n%s", r.stderr)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the fake nvidia-smi never ran: %v", err)
	}
	child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	// lens has exited: it waited for the probe's group to be killed. A
	// killed child not yet reaped by init is a zombie, not a live process.
	for deadline := time.Now().Add(guard); ; time.Sleep(time.Millisecond) {
		if st := procState(child); st == "" || st == "Z" || st == "X" {
			break
		} else if time.Now().After(deadline) {
			_ = syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("the probe's child (pid %d) outlived lens, state %q", child, st)
		}
	}
}

// The GPUs of testdata/gpu (a fake driver tree and nvidia-smi).
const (
	testGPU0 = "GPU-6d2d4f4e-1c6f-4b1e-9d5e-6a1b2c3d4e01"
	testGPU1 = "GPU-9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c02"
)

func testdataPath(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExecGPUIdentity: lens exec's span resource carries the GPUs the
// command may use, from the fake driver tree, and from the fake nvidia-smi
// when there is no tree; a malformed variable is named on stderr and the
// span goes without them.
func TestExecGPUIdentity(t *testing.T) {
	t.Parallel()
	tree := testdataPath(t, "gpu/gpus")
	smiPath := testdataPath(t, "gpu/bin") + ":" + os.Getenv("PATH")
	cases := []struct {
		name   string
		env    map[string]string
		want   map[string]string // resource keys; "" absent
		stderr string
	}{
		{"procfs, CUDA_VISIBLE_DEVICES=1", map[string]string{"LENS_NVIDIA_PROCFS": tree, "CUDA_VISIBLE_DEVICES": "1"},
			map[string]string{"nv.gpu.visible.uuid": testGPU1, "nv.gpu.visible.index": "1", "nv.gpu.visible.device": "nvidia0",
				"nv.gpu.visible.pci_bus_id": "00000000:0F:00.0", "nv.gpu.visible.model": "NVIDIA A100-SXM4-80GB"}, ""},
		{"procfs, Slurm step renumbered", map[string]string{"LENS_NVIDIA_PROCFS": tree, "SLURM_STEP_GPUS": "1", "CUDA_VISIBLE_DEVICES": "0"},
			map[string]string{"nv.gpu.visible.uuid": testGPU1, "nv.gpu.visible.index": "1"}, ""},
		{"nvidia-smi, no CUDA_VISIBLE_DEVICES", map[string]string{"LENS_NVIDIA_PROCFS": tree + "-absent", "PATH": smiPath},
			map[string]string{"nv.gpu.visible.uuid": testGPU0 + "," + testGPU1, "nv.gpu.visible.index": "0,1", "nv.gpu.visible.device": "", "host.gpu.count": "2"}, ""},
		{"no driver", map[string]string{"LENS_NVIDIA_PROCFS": tree + "-absent", "CUDA_VISIBLE_DEVICES": "0"},
			map[string]string{"nv.gpu.visible.uuid": ""}, ""},
		{"bad NVIDIA_VISIBLE_DEVICES", map[string]string{"LENS_NVIDIA_PROCFS": tree, "NVIDIA_VISIBLE_DEVICES": "GPU-nope", "CUDA_VISIBLE_DEVICES": "0"},
			map[string]string{"nv.gpu.visible.uuid": ""}, "NVIDIA_VISIBLE_DEVICES"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"NEMO_LENS_ENABLED": "true", "OTEL_TRACES_EXPORTER": "console"}
			for k, v := range c.env {
				env[k] = v
			}
			r := runBin(t, env, "", "exec", "--", "true")
			if r.code != 0 {
				t.Fatalf("lens exec: %v", r)
			}
			spans := consoleSpans(t, r.stderr)
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1:\n%s", len(spans), r.stderr)
			}
			for k, want := range c.want {
				got := spans[0].resource(k)
				switch {
				case want == "" && got != nil:
					t.Errorf("%s = %v, want none", k, got)
				case k == "host.gpu.count" && got != float64(2):
					t.Errorf("%s = %v, want 2", k, got)
				case want != "" && k != "host.gpu.count" && got != want:
					t.Errorf("%s = %v, want %q", k, got, want)
				}
			}
			lines := 0
			for l := range strings.SplitSeq(r.stderr, "\n") {
				if strings.HasPrefix(l, "lens exec:") {
					lines++
					if c.stderr == "" || !strings.Contains(l, c.stderr) || !strings.Contains(l, "without nv.gpu.visible") {
						t.Errorf("stderr line %q", l)
					}
				}
			}
			if c.stderr != "" && lines != 1 {
				t.Errorf("%d lines from lens on stderr, want 1 naming %s:\n%s", lines, c.stderr, r.stderr)
			}
		})
	}
}

// TestGPUProbeStoppedWhenItsTimeIsUp: gpuProbe.complete, the half of
// --flush-timeout over (a context already done), with a probe process whose
// nvidia-smi blocks until it is killed and with one whose nvidia-smi has
// already answered: the first is stopped before complete returns, the span
// goes without host.gpu.count and stderr says so; the second's count is
// kept, without a word. Ordering, not durations (docs/exec.md#gpu-probe).
func TestGPUProbeStoppedWhenItsTimeIsUp(t *testing.T) {
	t.Parallel()
	over, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		smi     string
		answers bool // the probe has answered before its time is up
	}{
		{"blocks", "#!/bin/sh\nexec sleep 3600\n", false},
		{"answers", "#!/bin/sh\nprintf '4\\n4\\n4\\n4\\n'\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeScript(t, filepath.Join(dir, "nvidia-smi"), tc.smi)
			env := environ.Map{
				"LENS_NVIDIA_PROCFS": testdataPath(t, "gpu/gpus"),
				"PATH":               dir + ":" + os.Getenv("PATH"),
			}
			var stderr bytes.Buffer
			a := &app{stderr: &stderr, env: env}
			g := a.startGPUProbe(true)
			if tc.answers {
				<-g.done
			} else {
				<-g.idDone // the count probe runs
			}
			attrs := attr.NewMap()
			g.complete(over, a, attrs)
			if !finished(g.done) {
				t.Fatal("complete returned with the probe still running")
			}
			v, ok := attrs.Get(lensconv.HostGPUCount)
			if tc.answers && (!ok || v.AsInt64() != 4) || !tc.answers && ok {
				t.Errorf("%s = %v, %v; want it only from the probe that answered", lensconv.HostGPUCount, v, ok)
			}
			said := strings.Contains(stderr.String(), "had not finished within half of --flush-timeout") && strings.Contains(stderr.String(), lensconv.HostGPUCount)
			if said == tc.answers {
				t.Errorf("stderr %q; want the stopped probe reported, and only it", stderr.String())
			}
		})
	}
}

// writeScript writes an executable script at path, under syscall.ForkLock:
// no process forked meanwhile keeps it open for writing (ETXTBSY,
// golang/go#22315).
func writeScript(t *testing.T, path, text string) {
	t.Helper()
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, []byte(text), 0o755)
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
}

// TestGPUProbeOutlivesSentFaults: SIGSEGV, SIGBUS and SIGILL sent to the GPU
// probe process (as a step-wide scancel --signal sends them to every
// process of the step) while its nvidia-smi runs do not crash it: the count
// nvidia-smi gives once the signal has been sent still arrives.
func TestGPUProbeOutlivesSentFaults(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			started, answer := filepath.Join(dir, "started"), filepath.Join(dir, "answer")
			writeScript(t, filepath.Join(dir, "nvidia-smi"), "#!/bin/sh\n: > '"+started+"'\nwhile [ ! -e '"+answer+"' ]; do sleep 0.01; done\nprintf '4\\n4\\n4\\n4\\n'\n")
			env := environ.Map{"LENS_NVIDIA_PROCFS": testdataPath(t, "gpu/gpus"), "PATH": dir + ":" + os.Getenv("PATH")}
			var stderr bytes.Buffer
			a := &app{stderr: &stderr, env: env}
			g := a.startGPUProbe(true)
			defer g.stop()
			for deadline := time.Now().Add(guard); ; time.Sleep(time.Millisecond) {
				if _, err := os.Stat(started); err == nil {
					break
				} else if time.Now().After(deadline) {
					t.Fatal("the probe's nvidia-smi never ran")
				}
			}
			if err := syscall.Kill(g.child.Pid(), sig); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(answer, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			<-g.done
			if !g.ok || g.n != 4 {
				t.Errorf("count %d, %v after %v; want 4 from a probe that survived it", g.n, g.ok, sig)
			}
		})
	}
}

// TestGPUProbeEndsWithLens: lens exec killed with SIGKILL (nothing of lens
// runs after it) while its GPU probe's nvidia-smi hangs with a child of its
// own: the probe sees its input pipe from lens end and kills its process
// group, that child with it (bounded.EndWithParent). Without it the child
// outlives lens for good.
func TestGPUProbeEndsWithLens(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "smi.pid")
	// nvidia-smi leaves a child of its own in the probe's group, which its
	// 5-second timeout (that kills the tool alone) does not end.
	writeScript(t, filepath.Join(dir, "nvidia-smi"), "#!/bin/sh\nsleep 3600 &\necho $! > '"+pidFile+".tmp'\nmv '"+pidFile+".tmp' '"+pidFile+"'\nwait\n")
	cmd := exec.Command(lensBin, "exec", "--", "sleep", "3600")
	cmd.Env = cliEnv(map[string]string{"PATH": dir + ":" + os.Getenv("PATH"), "NEMO_LENS_ENABLED": "true",
		"OTEL_TRACES_EXPORTER": "console", "LENS_NVIDIA_PROCFS": filepath.Join(dir, "absent")})
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the test kills lens's sleep by group
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	var smi int
	for deadline := time.Now().Add(guard); smi == 0; time.Sleep(time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			smi, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		} else if time.Now().After(deadline) {
			t.Fatal("the probe's nvidia-smi never ran")
		}
	}
	t.Cleanup(func() { _ = syscall.Kill(smi, syscall.SIGKILL) })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for deadline := time.Now().Add(guard); ; time.Sleep(time.Millisecond) {
		if st := procState(smi); st == "" || st == "Z" || st == "X" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the child of the probe's nvidia-smi (pid %d) outlived lens, state %q", smi, st)
		}
	}
}
