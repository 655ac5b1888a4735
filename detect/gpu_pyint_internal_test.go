package detect

import (
	"context"
	"errors"
	"testing"

	"github.com/nemolens/lens-go/environ"
)

// oneGPUPerIndex is an NVML whose every index is a GPU named after it.
type oneGPUPerIndex struct{}

type indexGPU int

func (oneGPUPerIndex) DeviceByIndex(i int) (NVMLDevice, error) {
	if i < 0 || i > 9 {
		return nil, errors.New("no such device")
	}
	return indexGPU(i), nil
}
func (oneGPUPerIndex) DriverVersion() (string, error) { return "550.54.15", nil }

func (d indexGPU) Name() (string, error)                    { return "NVIDIA H100", nil }
func (d indexGPU) UUID() (string, error)                    { return "GPU-" + string(rune('0'+d)), nil }
func (d indexGPU) Serial() (string, error)                  { return "", errors.New("n/a") }
func (d indexGPU) PCIBusID() (string, error)                { return "", errors.New("n/a") }
func (d indexGPU) CUDAComputeCapability() (int, int, error) { return 0, 0, errors.New("n/a") }
func (d indexGPU) MemoryTotal() (uint64, error)             { return 0, errors.New("n/a") }

// TestGPULocalRankPythonInt: the reference reads LOCAL_RANK with int(s)
// (failure → rank 0), so U+001C–U+001F around it make the rank 0 while
// non-ASCII whitespace is ignored.
func TestGPULocalRankPythonInt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		localRank string
		index     int64
	}{
		{"2", 2}, {" 2 ", 2}, {"\u00a02\u3000", 2}, {"\v2\f", 2}, {"0_2", 2}, {"٢", 2},
		{"\x1c2", 0}, {"2\x1f", 0}, {"2.0", 0},
	}
	for _, c := range cases {
		got := GPU(context.Background(), WithEnv(environ.Map{"LOCAL_RANK": c.localRank}), WithNVML(oneGPUPerIndex{}))
		v, ok := got.Get("nv.gpu.index")
		if !ok || v.AsInt64() != c.index {
			t.Errorf("LOCAL_RANK=%q: nv.gpu.index = %v (present %v), want %d", c.localRank, v, ok, c.index)
		}
	}
}
