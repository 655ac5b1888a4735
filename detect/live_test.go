package detect_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// TestLiveGPU runs the live nvidia-smi paths on a machine with NVIDIA GPUs.
// It is opt-in (LENS_LIVE_GPU=1) because it depends on the hardware.
func TestLiveGPU(t *testing.T) {
	if os.Getenv("LENS_LIVE_GPU") != "1" {
		t.Skip("set LENS_LIVE_GPU=1 on a machine with NVIDIA GPUs to run the live nvidia-smi checks")
	}
	ctx := context.Background()
	list, err := exec.Command("nvidia-smi", "-L").Output()
	if err != nil {
		t.Fatalf("nvidia-smi -L: %v", err)
	}
	want := countListedGPUs(string(list))
	n, ok := detect.NvidiaSMIGPUCount(ctx)
	if !ok || n != want {
		t.Errorf("NvidiaSMIGPUCount = %d, %v; nvidia-smi -L lists %d", n, ok, want)
	}
	local := detect.Local(ctx, detect.WithEnv(environ.Map{}))
	t.Logf("DetectLocal (live probe): %v", local)
	if v, _ := local.Get("host.gpu.count"); v.AsInt64() != int64(want) {
		t.Errorf("host.gpu.count = %v, want %d", v, want)
	}
	for rank := range want {
		gpu := detect.GPU(context.Background(), rankOpt(&rank), detect.WithEnv(environ.Map{}))
		t.Logf("DetectGPU(%d): %v", rank, gpu)
		for _, k := range []string{"nv.gpu.index", "nv.gpu.model", "nv.gpu.uuid", "nv.gpu.pci_bus_id",
			"nv.gpu.compute_capability", "nv.gpu.memory_total", "nv.gpu.driver_version"} {
			if !gpu.Has(k) {
				t.Errorf("DetectGPU(%d) lacks %s", rank, k)
			}
		}
		if v, _ := gpu.Get("nv.gpu.uuid"); !strings.HasPrefix(v.AsString(), "GPU-") || !strings.Contains(string(list), v.AsString()) {
			t.Errorf("uuid %v not in nvidia-smi -L", v)
		}
	}
	if gpu := detect.GPU(context.Background(), detect.WithEnv(environ.Map{"CUDA_VISIBLE_DEVICES": "GPU-x"})); gpu.Len() != 0 {
		t.Errorf("UUID-style CUDA_VISIBLE_DEVICES: %v", gpu)
	}
	full := detect.All(ctx)
	t.Logf("Detect (zero Options): %v", full)
}

// countListedGPUs counts the GPUs in the output of `nvidia-smi -L`: one
// "GPU <index>: <name> (UUID: GPU-…)" line per physical GPU; the MIG devices
// of a GPU are indented lines beneath it and are not counted, as
// --query-gpu=count does not count them.
func countListedGPUs(list string) int {
	n := 0
	for line := range strings.Lines(list) {
		if strings.HasPrefix(line, "GPU ") {
			n++
		}
	}
	return n
}

func TestCountListedGPUs(t *testing.T) {
	t.Parallel()
	list := "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-a)\n" +
		"  MIG 3g.40gb     Device  0: (UUID: MIG-b)\n" +
		"  MIG 3g.40gb     Device  1: (UUID: MIG-c)\n" +
		"GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-d)\n"
	if n := countListedGPUs(list); n != 2 {
		t.Errorf("countListedGPUs = %d, want 2", n)
	}
	if n := countListedGPUs("No devices were found\n"); n != 0 {
		t.Errorf("countListedGPUs(no devices) = %d", n)
	}
}
