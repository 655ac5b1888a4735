package e2e_test

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
)

// TestSlurmBoundedReads (issue 35): in a real Slurm step, `srun lens exec
// -- sh -c 'echo hi'` with telemetry on returns with the command's status
// and output, its span exported, when the NVIDIA driver's information file
// is a FIFO and when nvidia-smi never answers (the GPU probe is stopped at
// half of --flush-timeout and nothing of it outlives the step). On edd0320
// the first had not returned after 45 s. What is expected — "hi", status
// 0, the message naming the FIFO — comes from the setup, not from lens.
func TestSlurmBoundedReads(t *testing.T) {
	elapsed(t)
	gate(t)
	lens := lensBinary(t)
	c := needCluster(t, 1)
	dir := outDir(t)

	// A copy of the fake driver tree with a FIFO for GPU 0's information.
	tree := filepath.Join(dir, "gpus")
	if out, err := exec.Command("cp", "-r", filepath.Join(repoRoot(), "cmd", "lens", "testdata", "gpu", "gpus"), tree).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	fifo := filepath.Join(tree, "0000:07:00.0", "information")
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	// An nvidia-smi that records its pid and never answers.
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "smi.pid")
	smi := "#!/bin/sh\necho $$ > '" + pidFile + ".tmp'\nmv '" + pidFile + ".tmp' '" + pidFile + "'\nexec sleep 3600\n"
	if err := os.WriteFile(filepath.Join(bin, "nvidia-smi"), []byte(smi), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		env  []string
		says string // on the step's output (lens's stderr)
	}{
		{"information FIFO", []string{"LENS_NVIDIA_PROCFS=" + tree, "CUDA_VISIBLE_DEVICES=0"}, fifo + ": not a regular file (a FIFO)"},
		{"nvidia-smi never answers", []string{"LENS_NVIDIA_PROCFS=" + filepath.Join(dir, "absent"), "PATH=" + bin + ":" + os.Getenv("PATH")},
			"the GPU probe had not finished within half of --flush-timeout and was stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			name := uniqueName("lens-bounds")
			out := filepath.Join(dir, name+".out")
			env := lensEnv(c.Env(), append([]string{"NEMO_LENS_ENABLED=true", "OTEL_TRACES_EXPORTER=console",
				"NEMO_LENS_METRICS_ENABLED=false"}, tc.env...)...)
			cmd := exec.CommandContext(ctx, "srun", "-N1", "-n1", "--job-name="+name, "--output="+out,
				lens, "exec", "--flush-timeout", "10s", "--", "sh", "-c", "echo hi")
			cmd.Env = env
			var srunOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &srunOut, &srunOut
			err := cmd.Run()
			step, _ := readString(out)
			if ctx.Err() != nil {
				_, _ = c.Run(context.Background(), nil, "scancel", "--name="+name)
				t.Fatalf("srun lens exec had not returned after 3 minutes\nstep output:\n%s%s", step, c.LogTail(20))
			}
			if err != nil {
				t.Fatalf("srun: %v\n%s\nstep output:\n%s", err, srunOut.String(), step)
			}
			if !strings.Contains(step, "hi\n") {
				t.Errorf("the command's output is missing:\n%s", step)
			}
			if !strings.Contains(step, tc.says) {
				t.Errorf("lens does not say %q:\n%s", tc.says, step)
			}
			if !strings.Contains(step, `"Name":"lens exec sh"`) {
				t.Errorf("no span exported:\n%s", step)
			}
		})
	}
	// The probe's nvidia-smi does not outlive its step: killed with the
	// probe's process group, it is gone or a zombie awaiting init.
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the fake nvidia-smi never ran: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || bytes.Contains(st, []byte(") Z ")) {
			break
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the probe's nvidia-smi (pid %d) outlived its step: %s", pid, st)
		}
	}
}
