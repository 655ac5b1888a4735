//go:build unix

package detect_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// fakeTool writes an executable shell script into a temporary directory and
// returns its path.
//
// The tests that write or start such scripts are deliberately not parallel:
// a process forked by another goroutine while a script is still open for
// writing inherits that descriptor until its exec, and executing the script
// meanwhile fails with ETXTBSY ("text file busy", golang/go#22315).
// Sequential top-level tests never overlap the parallel ones.
func fakeTool(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nvidia-smi")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// untimedSMI runs path with a timeout far longer than any run takes, so that
// no result depends on how fast a loaded machine runs the fake tool; a run
// that hangs is ended by go test's own -timeout.
func untimedSMI(path string) detect.NvidiaSMI {
	return detect.NvidiaSMI{Path: path, Timeout: time.Hour}
}

// waitUntil polls cond until it holds, as long as the test may run (go
// test's -timeout, less a margin to report the failure).
func waitUntil(t *testing.T, what string, cond func() bool) bool {
	t.Helper()
	deadline, bounded := t.Deadline()
	deadline = deadline.Add(-10 * time.Second)
	for !cond() {
		if bounded && time.Now().After(deadline) {
			t.Errorf("%s: still not true when the test is about to time out", what)
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func TestNvidiaSMIGPUCount(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args")
	cases := []struct {
		name   string
		body   string
		want   int
		wantOK bool
	}{
		{"eight GPUs", `echo "$@" > ` + argsFile + `; for i in 1 2 3 4 5 6 7 8; do echo 8; done`, 8, true},
		{"blank lines ignored", `printf '2\n\n  \r\n2\n'`, 2, true},
		{"no output", `exit 0`, 0, false},
		{"only blank lines", `printf '\n \n\t\n'`, 0, false},
		{"non-zero exit", `echo 1; echo 1; exit 3`, 0, false},
		{"error text on stderr only", `echo "NVIDIA-SMI has failed" >&2`, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, ok := untimedSMI(fakeTool(t, c.body)).GPUCount(context.Background())
			if n != c.want || ok != c.wantOK {
				t.Errorf("GPUCount = %d, %v; want %d, %v", n, ok, c.want, c.wantOK)
			}
		})
	}
	args, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(args)); got != "--query-gpu=count --format=csv,noheader" {
		t.Errorf("arguments %q", got)
	}
}

func TestNvidiaSMIMissingTool(t *testing.T) {
	for _, path := range []string{filepath.Join(t.TempDir(), "nvidia-smi"), "lens-go-no-such-tool"} {
		if n, ok := (detect.NvidiaSMI{Path: path}).GPUCount(context.Background()); ok || n != 0 {
			t.Errorf("%s: GPUCount = %d, %v", path, n, ok)
		}
	}
	// A file that is not executable.
	path := filepath.Join(t.TempDir(), "nvidia-smi")
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := (detect.NvidiaSMI{Path: path}).GPUCount(context.Background()); ok {
		t.Error("a non-executable file counted")
	}
}

func TestNvidiaSMITimeout(t *testing.T) {
	// The tool prints a count, then its child (which holds the output
	// pipe) runs far longer than the timeout: the timeout ends the run
	// with no count. Without it the run would count 1 after 300 s.
	path := fakeTool(t, "echo 1; sleep 300")
	n, ok := detect.NvidiaSMI{Path: path, Timeout: 200 * time.Millisecond}.GPUCount(context.Background())
	if ok || n != 0 {
		t.Errorf("GPUCount = %d, %v; want the timeout to fail it", n, ok)
	}
}

func TestNvidiaSMIContextCancel(t *testing.T) {
	// The tool prints a count and then sleeps; the context is cancelled
	// once it has printed. Without the cancellation the run would count 1
	// after 300 s (its own timeout is an hour away).
	started := filepath.Join(t.TempDir(), "started")
	path := fakeTool(t, "echo 1; touch "+started+"; exec sleep 300")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		waitUntil(t, "the tool started", func() bool { _, err := os.Stat(started); return err == nil })
	}()
	if n, ok := untimedSMI(path).GPUCount(ctx); ok || n != 0 {
		t.Errorf("GPUCount = %d, %v after cancel", n, ok)
	}
	// Already cancelled: nothing runs.
	marker := filepath.Join(t.TempDir(), "ran")
	path = fakeTool(t, "touch "+marker+"; echo 1")
	if _, ok := (detect.NvidiaSMI{Path: path}).GPUCount(ctx); ok {
		t.Error("a cancelled context still counted")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the tool ran under a cancelled context")
	}
}

func TestDetectLocalWithFakeNvidiaSMI(t *testing.T) {
	smi := untimedSMI(fakeTool(t, "echo 4; echo 4; echo 4; echo 4"))
	got := detect.Local(context.Background(), detect.WithEnv(environ.Map{}), detect.WithHostname(fixedHost), detect.WithPID(1), detect.WithGPUCount(smi.GPUCount))
	if v, _ := got.Get("host.gpu.count"); !v.Equal(attr.Int(4)) {
		t.Errorf("host.gpu.count = %v", v)
	}
	// CUDA_VISIBLE_DEVICES present: the tool is never started.
	marker := filepath.Join(t.TempDir(), "ran")
	smi = detect.NvidiaSMI{Path: fakeTool(t, "touch "+marker+"; echo 1")}
	detect.Local(context.Background(), detect.WithEnv(environ.Map{"CUDA_VISIBLE_DEVICES": ""}), detect.WithHostname(fixedHost), detect.WithPID(1), detect.WithGPUCount(smi.GPUCount))
	if _, err := os.Stat(marker); err == nil {
		t.Error("nvidia-smi ran although CUDA_VISIBLE_DEVICES is present")
	}
}

func TestNvidiaSMIGPUCountLive(t *testing.T) {
	// The live probe against an independent count: the GPUs that
	// `nvidia-smi -L` lists (skipped without an nvidia-smi on PATH).
	want, listed := listedGPUs(t)
	n, ok := detect.NvidiaSMIGPUCount(context.Background())
	switch {
	case !listed && ok:
		t.Errorf("NvidiaSMIGPUCount = %d, true, but nvidia-smi -L failed", n)
	case listed && want == 0 && ok:
		t.Errorf("NvidiaSMIGPUCount = %d, true, but nvidia-smi -L lists no GPU", n)
	case listed && want > 0 && (!ok || n != want):
		t.Errorf("NvidiaSMIGPUCount = %d, %v; nvidia-smi -L lists %d GPUs", n, ok, want)
	}
}

func TestKubernetesSecretsPathNeverOpened(t *testing.T) {
	t.Parallel()
	// Opening a FIFO for reading blocks until a writer appears: detection
	// must only check that the path exists.
	fifo := filepath.Join(t.TempDir(), "kubernetes.io")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	// A writer that opens the FIFO, records that it could, and closes it:
	// its open completes only when a reader opens the FIFO, and it
	// releases a reader blocked in open or read, so detection never hangs.
	// A reader that reads gets its end only after the record, so a read is
	// always seen, without any wait or timeout (a bare open and close may
	// end before the record is made).
	opened := make(chan struct{}, 1)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		opened <- struct{}{} // before the close that ends a reader's read
		f.Close()
	}()
	got := detect.Kubernetes(context.Background(), detect.WithEnv(environ.Map{"K8S_POD_NAME": "p"}), detect.WithKubernetesSecretsPath(fifo))
	select {
	case <-opened:
		t.Error("DetectKubernetes opened the secrets path")
	default:
	}
	if want := m("k8s.pod.name", "p"); !got.Equal(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Release the writer: open the FIFO for reading without blocking.
	if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		<-writerDone
		r.Close()
	}
}

func TestNvidiaSMIQuery(t *testing.T) {
	const line = "%d, NVIDIA H100 80GB HBM3, GPU-%d, 165%d, 00000000:1%d:00.0, 9.0, 81559, 550.54.15"
	body := ""
	for i := range 4 {
		body += "echo '" + strings.NewReplacer("%d", string(rune('0'+i))).Replace(line) + "'; "
	}
	smi := untimedSMI(fakeTool(t, body))
	nvml, err := smi.Query(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rank := 1
	got := detect.GPU(context.Background(), rankOpt(&rank), detect.WithEnv(environ.Map{"CUDA_VISIBLE_DEVICES": "3,2"}), detect.WithNVML(nvml))
	want := attr.NewMap(
		attr.Entry{Key: "nv.gpu.index", Value: attr.Int(2)},
		attr.Entry{Key: "nv.gpu.model", Value: attr.String("NVIDIA H100 80GB HBM3")},
		attr.Entry{Key: "nv.gpu.uuid", Value: attr.String("GPU-2")},
		attr.Entry{Key: "nv.gpu.serial", Value: attr.String("1652")},
		attr.Entry{Key: "nv.gpu.pci_bus_id", Value: attr.String("00000000:12:00.0")},
		attr.Entry{Key: "nv.gpu.compute_capability", Value: attr.String("9.0")},
		attr.Entry{Key: "nv.gpu.memory_total", Value: attr.Int64(81559 << 20)},
		attr.Entry{Key: "nv.gpu.driver_version", Value: attr.String("550.54.15")},
	)
	if !got.Equal(want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	// Live default path through GPUOptions with the fake tool is not
	// reachable (it uses PATH); unsupported fields are omitted.
	smi = untimedSMI(fakeTool(t, "echo '0, GeForce, GPU-x, [N/A], 00000000:01:00.0, [N/A], [N/A], 535.1'"))
	nvml, err = smi.Query(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got = detect.GPU(context.Background(), detect.WithEnv(environ.Map{}), detect.WithNVML(nvml))
	want = attr.NewMap(
		attr.Entry{Key: "nv.gpu.index", Value: attr.Int(0)},
		attr.Entry{Key: "nv.gpu.model", Value: attr.String("GeForce")},
		attr.Entry{Key: "nv.gpu.uuid", Value: attr.String("GPU-x")},
		attr.Entry{Key: "nv.gpu.pci_bus_id", Value: attr.String("00000000:01:00.0")},
		attr.Entry{Key: "nv.gpu.driver_version", Value: attr.String("535.1")},
	)
	if !got.Equal(want) {
		t.Errorf("N/A fields: got %v\nwant %v", got, want)
	}
	// Old drivers without compute_cap: the query is retried without it.
	old := fakeTool(t, `case "$1" in *compute_cap*) echo 'Field "compute_cap" is not a valid field to query.'; exit 2;; esac
echo '0, Tesla V100, GPU-v, 123, 00000000:02:00.0, 16160, 470.1'`)
	nvml, err = untimedSMI(old).Query(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got = detect.GPU(context.Background(), detect.WithEnv(environ.Map{}), detect.WithNVML(nvml))
	if _, ok := got.Get("nv.gpu.compute_capability"); ok || got.Len() != 7 {
		t.Errorf("old driver: %v", got)
	}
	for _, body := range []string{"exit 1", "echo 'garbage'", "exit 0", "echo 'x, a, b, c, d, 9.0, 1, 2'"} {
		if _, err := untimedSMI(fakeTool(t, body)).Query(context.Background()); err == nil {
			t.Errorf("Query with %q succeeded", body)
		}
	}
}

// listedGPUs runs `nvidia-smi -L` from PATH, a listing independent of the
// count query, and returns the number of GPUs it lists; ok is false when it
// fails (no driver, no device). It skips the test when PATH holds no
// nvidia-smi.
func listedGPUs(t *testing.T) (n int, ok bool) {
	t.Helper()
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		t.Skip("no nvidia-smi on PATH: the live GPU count cannot be compared with nvidia-smi -L on this machine")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	list, err := exec.CommandContext(ctx, path, "-L").Output()
	if err != nil {
		t.Logf("nvidia-smi -L: %v", err)
		return 0, false
	}
	return countListedGPUs(string(list)), true
}
