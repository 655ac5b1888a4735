package detect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/logx"
	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/lensconv"
)

// NVML is the part of the NVIDIA Management Library that [GPU] uses.
// Inject a fake in tests; [NvidiaSMI.Query] provides a live implementation
// backed by the nvidia-smi tool.
type NVML interface {
	// DeviceByIndex returns the device with the given NVML (physical) index,
	// the index nvidia-smi shows, which ignores CUDA_VISIBLE_DEVICES.
	DeviceByIndex(index int) (NVMLDevice, error)
	// DriverVersion returns the driver version, e.g. "550.54.15".
	DriverVersion() (string, error)
}

// NVMLDevice is one GPU. Every method may fail independently (a field the
// device does not support).
type NVMLDevice interface {
	// Name returns the model name, e.g. "NVIDIA H100 80GB HBM3".
	Name() (string, error)
	// UUID returns the device UUID, e.g. "GPU-…".
	UUID() (string, error)
	// Serial returns the board serial number.
	Serial() (string, error)
	// PCIBusID returns the PCI bus id, e.g. "00000000:81:00.0".
	PCIBusID() (string, error)
	// CUDAComputeCapability returns the compute capability, e.g. 9 and 0.
	CUDAComputeCapability() (major, minor int, err error)
	// MemoryTotal returns the total device memory in bytes.
	MemoryTotal() (uint64, error)
}

const (
	envLocalRank    = "LOCAL_RANK"
	envSlurmLocalID = "SLURM_LOCALID"
)

// GPU returns the identity of the GPU this worker uses (the reference's
// detect_gpu, docs/detection.md#type-reconstruction-keys; provisional). It is not called by [All]; consumers
// call it.
//
// The local rank is the one of [WithLocalRank] when given, else LOCAL_RANK, else
// SLURM_LOCALID (each when non-empty), else 0, parsed leniently as Python's
// int() does (underscores, any-script digits); a parse failure gives 0.
// CUDA_VISIBLE_DEVICES (trimmed) empty or absent: the physical index is the
// local rank. Otherwise the local rank selects an item of the comma-separated
// list (Python's negative-index quirk applies: -1 is the last item), which,
// trimmed, must be an integer; a UUID-style item or a rank beyond the list
// gives an empty map.
//
// Keys, in order: nv.gpu.index (int, the physical index), nv.gpu.model and
// nv.gpu.uuid (required: a failure gives an empty map), then, each omitted
// when its NVML call fails, nv.gpu.serial, nv.gpu.pci_bus_id,
// nv.gpu.compute_capability ("major.minor"), nv.gpu.memory_total (int,
// bytes) and nv.gpu.driver_version. Any other NVML failure gives an empty
// map; nothing is returned as an error.
//
// ctx bounds the live nvidia-smi query (which also has its own 5-second
// timeout). Options used: WithEnv, WithLocalRank, WithNVML, WithLogger.
func GPU(ctx context.Context, opts ...Option) *attr.Map {
	c := newConfig(opts)
	env := c.env
	out := &attr.Map{}
	fail := func(reason string) *attr.Map {
		logx.Logger(c.logger, logx.Local).Debug("no GPU identity: " + reason)
		return out
	}
	rank := int64(0)
	if c.localRank != nil {
		rank = int64(*c.localRank)
	} else {
		for _, name := range [...]string{envLocalRank, envSlurmLocalID} {
			if v, ok := environ.NonEmpty(env, name); ok {
				rank, _ = pytext.Int(v) // failure → 0
				break
			}
		}
	}
	physical := rank
	cvd, _ := env.LookupEnv(envCUDAVisibleDevices)
	if cvd = pytext.TrimSpace(cvd); cvd != "" {
		items := strings.Split(cvd, ",")
		i := rank
		if i < 0 {
			i += int64(len(items))
		}
		if i < 0 || i >= int64(len(items)) {
			return fail(fmt.Sprintf("local rank %d is outside CUDA_VISIBLE_DEVICES=%q", rank, cvd))
		}
		var ok bool
		if physical, ok = pytext.Int(pytext.TrimSpace(items[i])); !ok {
			return fail(fmt.Sprintf("CUDA_VISIBLE_DEVICES item %q is not an integer index", items[i]))
		}
	}
	if physical < math.MinInt32 || physical > math.MaxInt32 {
		return fail(fmt.Sprintf("device index %d is out of range", physical))
	}
	nvml := c.nvml
	if nvml == nil {
		var err error
		if nvml, err = (NvidiaSMI{}).Query(ctx); err != nil {
			return fail(err.Error())
		}
	}
	dev, err := nvml.DeviceByIndex(int(physical))
	if err != nil {
		return fail(err.Error())
	}
	model, err := dev.Name()
	if err != nil {
		return fail(err.Error())
	}
	uuid, err := dev.UUID()
	if err != nil {
		return fail(err.Error())
	}
	out.Set(lensconv.NVGPUIndex, attr.Int64(physical))
	out.Set(lensconv.NVGPUModel, attr.String(model))
	out.Set(lensconv.NVGPUUUID, attr.String(uuid))
	if s, err := dev.Serial(); err == nil {
		out.Set(lensconv.NVGPUSerial, attr.String(s))
	}
	if s, err := dev.PCIBusID(); err == nil {
		out.Set(lensconv.NVGPUPCIBusID, attr.String(s))
	}
	if major, minor, err := dev.CUDAComputeCapability(); err == nil {
		out.Set(lensconv.NVGPUComputeCapability, attr.String(strconv.Itoa(major)+"."+strconv.Itoa(minor)))
	}
	if b, err := dev.MemoryTotal(); err == nil && b <= math.MaxInt64 {
		out.Set(lensconv.NVGPUMemoryTotal, attr.Int64(int64(b)))
	}
	if s, err := nvml.DriverVersion(); err == nil {
		out.Set(lensconv.NVGPUDriverVersion, attr.String(s))
	}
	return out
}

// ErrNVMLField is returned (wrapped) by the nvidia-smi-backed [NVML] for a
// field the device does not report ("[N/A]", "[Not Supported]", …) and for a
// device index that does not exist.
var ErrNVMLField = errors.New("nvidia-smi: value not available")

// smiFields are the columns of the live query, in order.
var smiFields = [...]string{"index", "name", "uuid", "serial", "pci.bus_id", "compute_cap", "memory.total", "driver_version"}

// Query runs nvidia-smi once and returns a snapshot of every GPU as an
// [NVML]:
//
//	nvidia-smi --query-gpu=index,name,uuid,serial,pci.bus_id,compute_cap,memory.total,driver_version \
//	    --format=csv,noheader,nounits
//
// When that fails with a non-zero exit status (drivers older than the
// compute_cap field), it retries once without compute_cap; compute
// capabilities are then unavailable. A field printed as "[N/A]", "N/A" or
// "[Not Supported]" fails with [ErrNVMLField].
//
// Each run has the bounds of [NvidiaSMI] (timeout, 1 MiB output cap,
// process-group kill); only a non-zero exit status, not a timeout or an
// oversized output, leads to the retry. The output must be valid UTF-8 and
// is split into lines as [NvidiaSMI.GPUCount] splits it; blank lines are
// skipped.
//
// Divergence from NVML: nvidia-smi reports memory.total in MiB, so
// MemoryTotal is that number times 1048576 (NVML gives exact bytes; the two
// agree whenever the total is a whole number of MiB). The index, PCI bus id
// format ("00000000:81:00.0") and the other strings are the NVML values.
func (n NvidiaSMI) Query(ctx context.Context) (NVML, error) {
	fields := smiFields[:]
	out, err := n.run(ctx, "--query-gpu="+strings.Join(fields, ","), "--format=csv,noheader,nounits")
	if _, exit := errors.AsType[*exec.ExitError](err); exit && ctx.Err() == nil {
		fields = []string{"index", "name", "uuid", "serial", "pci.bus_id", "memory.total", "driver_version"}
		out, err = n.run(ctx, "--query-gpu="+strings.Join(fields, ","), "--format=csv,noheader,nounits")
	}
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi query: %w", err)
	}
	lines, ok := outputLines(out)
	if !ok {
		return nil, errors.New("nvidia-smi query: output is not valid UTF-8")
	}
	snap := &smiSnapshot{devices: map[int]smiDevice{}}
	for line := range lines {
		if pytext.TrimSpace(line) == "" {
			continue
		}
		cols := strings.Split(line, ",")
		if len(cols) != len(fields) {
			return nil, fmt.Errorf("nvidia-smi query: unexpected line %q", line)
		}
		d := smiDevice{}
		for i, f := range fields {
			d[f] = strings.TrimSpace(cols[i])
		}
		idx, err := strconv.Atoi(d["index"])
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi query: bad index in %q", line)
		}
		snap.devices[idx] = d
		if snap.driver == "" {
			snap.driver = d["driver_version"]
		}
	}
	if len(snap.devices) == 0 {
		return nil, errors.New("nvidia-smi query: no GPU listed")
	}
	return snap, nil
}

type smiSnapshot struct {
	devices map[int]smiDevice
	driver  string
}

func (s *smiSnapshot) DeviceByIndex(index int) (NVMLDevice, error) {
	d, ok := s.devices[index]
	if !ok {
		return nil, fmt.Errorf("%w: no GPU with index %d", ErrNVMLField, index)
	}
	return d, nil
}

func (s *smiSnapshot) DriverVersion() (string, error) { return smiValue(s.driver, "driver_version") }

// smiDevice maps query field names to the printed values.
type smiDevice map[string]string

func smiValue(v, field string) (string, error) {
	switch v {
	case "", "N/A", "[N/A]", "[Not Supported]", "[Unknown Error]", "[Insufficient Permissions]", "[GPU is lost]":
		return "", fmt.Errorf("%w: %s is %q", ErrNVMLField, field, v)
	}
	return v, nil
}

func (d smiDevice) Name() (string, error)     { return smiValue(d["name"], "name") }
func (d smiDevice) UUID() (string, error)     { return smiValue(d["uuid"], "uuid") }
func (d smiDevice) Serial() (string, error)   { return smiValue(d["serial"], "serial") }
func (d smiDevice) PCIBusID() (string, error) { return smiValue(d["pci.bus_id"], "pci.bus_id") }

func (d smiDevice) CUDAComputeCapability() (int, int, error) {
	v, err := smiValue(d["compute_cap"], "compute_cap")
	if err != nil {
		return 0, 0, err
	}
	maj, mi, ok := strings.Cut(v, ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(mi)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%w: compute_cap is %q", ErrNVMLField, v)
	}
	return a, b, nil
}

func (d smiDevice) MemoryTotal() (uint64, error) {
	v, err := smiValue(d["memory.total"], "memory.total")
	if err != nil {
		return 0, err
	}
	mib, err := strconv.ParseUint(v, 10, 64)
	if err != nil || mib > math.MaxUint64>>20 {
		return 0, fmt.Errorf("%w: memory.total is %q", ErrNVMLField, v)
	}
	return mib << 20, nil
}
