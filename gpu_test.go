package lens_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// writeGPUTree writes a fake /proc/driver/nvidia/gpus with one GPU per
// bus id, in the driver's format, and returns its path.
func writeGPUTree(t *testing.T, gpus map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "gpus")
	minor := 0
	for bus, uuid := range gpus {
		if err := os.MkdirAll(filepath.Join(dir, bus), 0o755); err != nil {
			t.Fatal(err)
		}
		info := "Model: \t\t NVIDIA H100\nGPU UUID: \t " + uuid + "\nBus Location: \t " + bus + "\nDevice Minor: \t " + string(rune('0'+minor)) + "\n"
		minor++
		if err := os.WriteFile(filepath.Join(dir, bus, "information"), []byte(info), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestWithGPUDevices: the GPU identity is in the resource only with
// WithGPUDevices (the reference's resource has no such keys), mapped
// through CUDA_VISIBLE_DEVICES; a malformed variable leaves the keys out
// with a warning naming it.
func TestWithGPUDevices(t *testing.T) {
	t.Parallel()
	tree := writeGPUTree(t, map[string]string{"0000:18:00.0": "GPU-aaaa", "0000:3b:00.0": "GPU-bbbb"})
	logger, logs := newCapture()
	opts := append(detectOptions(t, defaultLive), detect.WithNvidiaProcfs(tree),
		detect.WithNvidiaSMI(detect.NvidiaSMI{Path: filepath.Join(t.TempDir(), "nvidia-smi")}))
	ctx, cfg := context.Background(), enabledConfig()
	for _, c := range []struct {
		name    string
		env     environ.Map
		on      bool
		uuid    string // "": absent
		warning string
	}{
		{"off", environ.Map{"CUDA_VISIBLE_DEVICES": "1"}, false, "", ""},
		{"on, CUDA_VISIBLE_DEVICES=1", environ.Map{"CUDA_VISIBLE_DEVICES": "1"}, true, "GPU-bbbb", ""},
		{"on, every GPU", environ.Map{}, true, "GPU-aaaa,GPU-bbbb", ""},
		{"on, bad SLURM_STEP_GPUS", environ.Map{"SLURM_STEP_GPUS": "x"}, true, "", "SLURM_STEP_GPUS"},
	} {
		ro := []lens.ResourceOption{lens.WithEnv(c.env), lens.WithLogger(logger), lens.WithDetectOptions(opts...)}
		if c.on {
			ro = append(ro, lens.WithGPUDevices())
		}
		before := len(logs())
		got, err := lens.ResourceAttributes(ctx, cfg, ro...)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := got.Get("nv.gpu.visible.uuid"); v.AsString() != c.uuid || ok != (c.uuid != "") {
			t.Errorf("%s: nv.gpu.visible.uuid = %v (present %v), want %q", c.name, v, ok, c.uuid)
		}
		warned := false
		for _, r := range logs()[before:] {
			if strings.Contains(r.Msg, "GPU identity") {
				warned = c.warning != "" && strings.Contains(r.Msg, c.warning)
				if !warned {
					t.Errorf("%s: unexpected warning %q", c.name, r.Msg)
				}
			}
		}
		if c.warning != "" && !warned {
			t.Errorf("%s: no warning naming %s", c.name, c.warning)
		}
	}
}
