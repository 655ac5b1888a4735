package detect_test

import (
	"context"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

func fakeDevices(n int) fakeNVML {
	driver := "550.54.15"
	f := fakeNVML{Driver: &driver, Devices: map[string]fakeNVMLDevice{}}
	for i := range n {
		model, uuid := "NVIDIA H100", "GPU-"+string(rune('a'+i))
		f.Devices[string(rune('0'+i))] = fakeNVMLDevice{Model: &model, UUID_: &uuid}
	}
	return f
}

func TestDetectGPUIndex(t *testing.T) {
	nvml := fakeDevices(8)
	ip := func(i int) *int { return &i }
	cases := []struct {
		name  string
		rank  *int
		env   environ.Map
		index int64 // -1: empty result
	}{
		{"rank argument, no CUDA_VISIBLE_DEVICES", ip(3), environ.Map{}, 3},
		{"LOCAL_RANK", nil, environ.Map{"LOCAL_RANK": "2", "SLURM_LOCALID": "5"}, 2},
		{"empty LOCAL_RANK falls to SLURM_LOCALID", nil, environ.Map{"LOCAL_RANK": "", "SLURM_LOCALID": "5"}, 5},
		{"SLURM_LOCALID", nil, environ.Map{"SLURM_LOCALID": "1"}, 1},
		{"nothing: rank 0", nil, environ.Map{}, 0},
		{"lenient parse", nil, environ.Map{"LOCAL_RANK": " +0_1 "}, 1},
		{"non-ASCII digits", nil, environ.Map{"LOCAL_RANK": "٣"}, 3},
		{"parse failure gives 0", nil, environ.Map{"LOCAL_RANK": "x", "SLURM_LOCALID": "5"}, 0},
		{"argument beats LOCAL_RANK", ip(0), environ.Map{"LOCAL_RANK": "4"}, 0},
		{"visible list", ip(1), environ.Map{"CUDA_VISIBLE_DEVICES": " 4, 5 "}, 5},
		{"blank visible list", ip(6), environ.Map{"CUDA_VISIBLE_DEVICES": "  "}, 6},
		{"negative index quirk", ip(-1), environ.Map{"CUDA_VISIBLE_DEVICES": "4,5,7"}, 7},
		{"negative beyond the list", ip(-4), environ.Map{"CUDA_VISIBLE_DEVICES": "4,5,7"}, -1},
		{"rank beyond the list", ip(2), environ.Map{"CUDA_VISIBLE_DEVICES": "0,1"}, -1},
		{"UUID entry", ip(0), environ.Map{"CUDA_VISIBLE_DEVICES": "GPU-123,1"}, -1},
		{"empty entry", ip(1), environ.Map{"CUDA_VISIBLE_DEVICES": "0,,2"}, -1},
		{"missing device", ip(9), environ.Map{}, -1},
		{"negative rank without a list", ip(-1), environ.Map{}, -1},
		{"huge index", nil, environ.Map{"LOCAL_RANK": "99999999999"}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := detect.GPU(context.Background(), rankOpt(c.rank), detect.WithEnv(c.env), detect.WithNVML(nvml))
			if c.index < 0 {
				if got.Len() != 0 {
					t.Errorf("got %v, want empty", got)
				}
				return
			}
			if v, _ := got.Get("nv.gpu.index"); !v.Equal(attr.Int64(c.index)) {
				t.Errorf("got %v, want index %d", got, c.index)
			}
		})
	}
}

func TestDetectGPURequiredAndOptional(t *testing.T) {
	model, uuid, serial := "M", "GPU-1", "S"
	mem := uint64(80 << 30)
	zero := 0
	cases := []struct {
		name string
		nvml fakeNVML
		want *attr.Map
	}{
		{"no model", fakeNVML{Devices: map[string]fakeNVMLDevice{"0": {UUID_: &uuid}}}, m()},
		{"no uuid", fakeNVML{Devices: map[string]fakeNVMLDevice{"0": {Model: &model}}}, m()},
		{"required only", fakeNVML{Devices: map[string]fakeNVMLDevice{"0": {Model: &model, UUID_: &uuid}}},
			m("nv.gpu.index", 0, "nv.gpu.model", "M", "nv.gpu.uuid", "GPU-1")},
		{"some optional", fakeNVML{Devices: map[string]fakeNVMLDevice{"0": {Model: &model, UUID_: &uuid, Serial_: &serial, ComputeCapability: []int{8, 6}, MemoryTotal_: &mem}}},
			m("nv.gpu.index", 0, "nv.gpu.model", "M", "nv.gpu.uuid", "GPU-1", "nv.gpu.serial", "S",
				"nv.gpu.compute_capability", "8.6", "nv.gpu.memory_total", 80<<30)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := detect.GPU(context.Background(), rankOpt(&zero), detect.WithEnv(environ.Map{}), detect.WithNVML(c.nvml))
			if !got.Equal(c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

// rankOpt is WithLocalRank(*r), or no option for nil.
func rankOpt(r *int) detect.Option {
	if r == nil {
		return nil
	}
	return detect.WithLocalRank(*r)
}
