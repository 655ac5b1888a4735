package detect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/testvectors"
)

func expectedMap(t *testing.T, v testvectors.Vector) *attr.Map {
	t.Helper()
	want, err := v.ExpectedMap()
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// noGPU is a GPU probe that fails, so tests never start nvidia-smi.
func noGPU(context.Context) (int, bool) { return 0, false }

func TestVectorsDetectSlurm(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "detect_slurm") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			want := expectedMap(t, v)
			got := detect.Slurm(context.Background(), detect.WithEnv(environ.Map(v.Env)))
			if !got.Equal(want) {
				t.Errorf("DetectSlurm(%v)\n got %v\nwant %v", v.Env, got, want)
			}
		})
	}
}

func TestVectorsDetectKubernetes(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "detect_kubernetes") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			want := expectedMap(t, v)
			secrets := filepath.Join(t.TempDir(), "kubernetes.io")
			if v.SecretsPathExists {
				if err := os.Mkdir(secrets, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			got := detect.Kubernetes(context.Background(), detect.WithEnv(environ.Map(v.Env)), detect.WithKubernetesSecretsPath(secrets))
			if !got.Equal(want) {
				t.Errorf("DetectKubernetes(%v)\n got %v\nwant %v", v.Env, got, want)
			}
		})
	}
}

func TestVectorsGPUCount(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "gpu_count") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			want, none, err := v.ExpectedValue()
			if err != nil {
				t.Fatal(err)
			}
			probed := false
			got := detect.Local(context.Background(), detect.WithEnv(environ.Map(v.Env)), detect.WithHostname(func() (string, error) { return "h", nil }), detect.WithPID(1), detect.WithGPUCount(func(context.Context) (int, bool) { probed = true; return 0, false }))
			n, ok := got.Get("host.gpu.count")
			switch {
			case none && ok:
				t.Errorf("host.gpu.count = %v, want absent", n)
			case !none && !n.Equal(want):
				t.Errorf("host.gpu.count = %v (present %v), want %v", n, ok, want)
			}
			if _, present := v.Env["CUDA_VISIBLE_DEVICES"]; present && probed {
				t.Error("the GPU probe ran although CUDA_VISIBLE_DEVICES is present")
			}
		})
	}
}

func TestVectorsJobUUID(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "job_uuid") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			want, _, err := v.ExpectedString()
			if err != nil {
				t.Fatal(err)
			}
			env := environ.Map(v.Env)
			if got := detect.JobUUIDName(env); got != v.Name {
				t.Errorf("JobUUIDName = %q, want %q", got, v.Name)
			}
			if got := detect.JobUUID(env); got != want {
				t.Errorf("DeriveJobUUID = %q, want %q", got, want)
			}
		})
	}
}

func TestVectorsRunUUID(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "run_uuid") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			want, none, err := v.ExpectedString()
			if err != nil {
				t.Fatal(err)
			}
			runID := ""
			if v.RunID != nil {
				runID = *v.RunID
			}
			env := environ.Map(v.Env)
			name, nameOK := detect.RunUUIDName(env, runID)
			got, ok := detect.RunUUID(env, runID)
			if none {
				if ok || nameOK || got != "" {
					t.Errorf("DeriveRunUUID = %q, %v (name %q, %v); want none", got, ok, name, nameOK)
				}
				return
			}
			if !nameOK || name != v.Name {
				t.Errorf("RunUUIDName = %q, %v; want %q", name, nameOK, v.Name)
			}
			if !ok || got != want {
				t.Errorf("DeriveRunUUID = %q, %v; want %q", got, ok, want)
			}
		})
	}
}

func TestVectorsNormalize(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "normalize") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			in, err := v.InputMap()
			if err != nil {
				t.Fatal(err)
			}
			want := expectedMap(t, v)
			before := in.Clone()
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			got, warned := detect.Normalize(in, detect.WithLogger(logger))
			if !got.Equal(want) {
				t.Errorf("Normalize(%v)\n got %v\nwant %v", in, got, want)
			}
			if !in.Equal(before) {
				t.Errorf("input modified: %v", in)
			}
			if !slices.Equal(warned, v.Warned) {
				t.Errorf("warned %v, want %v", warned, v.Warned)
			}
			lines := nonEmptyLines(logs.String())
			if len(lines) != len(v.Warned) {
				t.Errorf("%d log lines for %d warned keys:\n%s", len(lines), len(v.Warned), logs.String())
			}
			for i, key := range v.Warned {
				if i >= len(lines) {
					break
				}
				line := lines[i]
				for _, sub := range []string{"level=WARN", key, "requires a base-10 integer", "invalid value is preserved", "logger=nemo.lens.semconv.resources"} {
					if !strings.Contains(line, sub) {
						t.Errorf("warning %q lacks %q", line, sub)
					}
				}
			}
		})
	}
}

func nonEmptyLines(s string) []string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

// fakeNVML implements detect.NVML from a vector's nvml object.
type fakeNVML struct {
	Driver  *string                   `json:"driver_version"`
	Devices map[string]fakeNVMLDevice `json:"devices"`
}

type fakeNVMLDevice struct {
	Model             *string `json:"model"`
	UUID_             *string `json:"uuid"`
	Serial_           *string `json:"serial"`
	PCIBusID_         *string `json:"pci_bus_id"`
	ComputeCapability []int   `json:"compute_capability"`
	MemoryTotal_      *uint64 `json:"memory_total"`
}

var errFake = errors.New("fake NVML: call failed")

func (f fakeNVML) DeviceByIndex(i int) (detect.NVMLDevice, error) {
	d, ok := f.Devices[strconv.Itoa(i)]
	if !ok {
		return nil, fmt.Errorf("%w: no device %d", errFake, i)
	}
	return d, nil
}

func (f fakeNVML) DriverVersion() (string, error) { return str(f.Driver) }

func str(p *string) (string, error) {
	if p == nil {
		return "", errFake
	}
	return *p, nil
}

func (d fakeNVMLDevice) Name() (string, error)     { return str(d.Model) }
func (d fakeNVMLDevice) UUID() (string, error)     { return str(d.UUID_) }
func (d fakeNVMLDevice) Serial() (string, error)   { return str(d.Serial_) }
func (d fakeNVMLDevice) PCIBusID() (string, error) { return str(d.PCIBusID_) }
func (d fakeNVMLDevice) CUDAComputeCapability() (int, int, error) {
	if len(d.ComputeCapability) != 2 {
		return 0, 0, errFake
	}
	return d.ComputeCapability[0], d.ComputeCapability[1], nil
}
func (d fakeNVMLDevice) MemoryTotal() (uint64, error) {
	if d.MemoryTotal_ == nil {
		return 0, errFake
	}
	return *d.MemoryTotal_, nil
}

func TestVectorsDetectGPU(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "detect_gpu") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			var nvml fakeNVML
			if err := json.Unmarshal(v.NVML, &nvml); err != nil {
				t.Fatal(err)
			}
			want := expectedMap(t, v)
			var rank *int
			if v.LocalRank != nil {
				r := int(*v.LocalRank)
				rank = &r
			}
			got := detect.GPU(context.Background(), rankOpt(rank), detect.WithEnv(environ.Map(v.Env)), detect.WithNVML(nvml))
			if !got.Equal(want) {
				t.Errorf("DetectGPU\n got %v\nwant %v", got, want)
			}
		})
	}
}

func vectorsByID(id string) (testvectors.Vector, error) {
	f, err := testvectors.Load()
	if err != nil {
		return testvectors.Vector{}, err
	}
	for _, v := range f.Vectors {
		if v.ID == id {
			return v, nil
		}
	}
	return testvectors.Vector{}, fmt.Errorf("no vector %q", id)
}
