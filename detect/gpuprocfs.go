package detect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nemolens/lens-go/internal/bounded"
	"github.com/nemolens/lens-go/internal/pytext"
)

// DefaultNvidiaProcfs is the directory where the NVIDIA kernel driver lists
// the GPUs it shows this process, one subdirectory per GPU named by its PCI
// bus id, each with an "information" file (docs/detection.md#gpu-devices).
const DefaultNvidiaProcfs = "/proc/driver/nvidia/gpus"

// maxInformationFile caps what is read of one information file: the driver
// writes a dozen short lines.
const maxInformationFile = 64 << 10

// ProcfsBound bounds the reading of the driver's procfs tree by
// [VisibleGPUs], as [DefaultNvidiaSMITimeout] bounds nvidia-smi: a read
// answers in microseconds, and one that has not answered by then (a driver
// whose GPU fell off the bus) is abandoned (docs/detection.md#gpu-devices).
const ProcfsBound = 5 * time.Second

var (
	errNoDriverTree = errors.New("no NVIDIA driver tree")
	errNoNvidiaSMI  = errors.New("nvidia-smi is not in PATH")
)

// boundedProcfsGPUs is procfsGPUs bounded by ctx and ProcfsBound: when
// either ends first, the read is abandoned (its goroutine goes on alone)
// and the failure is a *GPUError naming dir.
func boundedProcfsGPUs(ctx context.Context, dir string) ([]GPUDevice, error) {
	ctx, cancel := context.WithTimeout(ctx, ProcfsBound)
	defer cancel()
	devs, err := bounded.Within(ctx, func() ([]GPUDevice, error) { return procfsGPUs(dir) })
	if _, ok := errors.AsType[*GPUError](err); err != nil && !ok {
		return nil, &GPUError{Source: dir, Err: fmt.Errorf("the driver did not answer: %w", err)}
	}
	return devs, err
}

// procfsGPUs reads every GPU of the driver tree dir, in PCI bus order,
// leaving out the GPUs the driver marks excluded (NVML does not number
// them). An absent tree wraps errNoDriverTree; an unreadable or malformed
// one is a *GPUError naming the directory or the file.
func procfsGPUs(dir string) ([]GPUDevice, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &GPUError{Source: dir, Err: errNoDriverTree}
	}
	if err != nil {
		return nil, &GPUError{Source: dir, Err: unwrapPath(err)}
	}
	type located struct {
		bus [4]uint64
		dev GPUDevice
	}
	devs := make([]located, 0, len(entries))
	uuids := make(map[string]string, len(entries))
	for _, e := range entries {
		path := filepath.Join(dir, e.Name(), "information")
		data, err := readInformation(path)
		if err != nil {
			return nil, &GPUError{Source: path, Err: err}
		}
		d, bus, excluded, err := parseInformation(data)
		if err != nil {
			return nil, &GPUError{Source: path, Err: err}
		}
		if excluded {
			continue
		}
		if other, dup := uuids[d.UUID]; dup {
			return nil, gpuErrorf(path, "GPU UUID %s is also the UUID of %s", d.UUID, other)
		}
		uuids[d.UUID] = path
		devs = append(devs, located{bus, d})
	}
	slices.SortFunc(devs, func(a, b located) int { return slices.Compare(a.bus[:], b.bus[:]) })
	out := make([]GPUDevice, len(devs))
	for i, l := range devs {
		out[i] = l.dev
	}
	return out, nil
}

// readInformation reads a regular file of at most maxInformationFile
// bytes, never waiting on it: a FIFO or a device is refused
// (bounded.ReadFile).
func readInformation(path string) ([]byte, error) {
	data, err := bounded.ReadFile(path, maxInformationFile)
	if err != nil {
		return nil, unwrapPath(err)
	}
	return data, nil
}

// unwrapPath drops the path of a *fs.PathError: the GPUError names it.
func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

// parseInformation reads the driver's "key: value" lines (keys and values
// trimmed; the first of a repeated key counts; lines without a colon and
// unknown keys are skipped). Model, GPU UUID (GPU-…) and Bus Location
// (domain:bus:device.function in hex) are required; Device Minor is read
// when present; "GPU Excluded: Yes" marks a GPU NVML does not number.
func parseInformation(data []byte) (d GPUDevice, bus [4]uint64, excluded bool, err error) {
	if !utf8.Valid(data) {
		return d, bus, false, errors.New("not valid UTF-8")
	}
	fields := make(map[string]string, 12)
	for line := range strings.SplitSeq(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k = pytext.TrimSpace(k)
		if _, dup := fields[k]; !dup {
			fields[k] = pytext.TrimSpace(v)
		}
	}
	d = GPUDevice{Index: unknown, Minor: unknown, Source: sourceProcfs}
	if d.Model = fields["Model"]; d.Model == "" {
		return d, bus, false, errors.New(`no "Model:" line`)
	}
	if d.UUID = fields["GPU UUID"]; !strings.HasPrefix(d.UUID, gpuUUIDPrefix) || strings.ContainsAny(d.UUID, ", ") {
		return d, bus, false, fmt.Errorf(`"GPU UUID:" is %q, not GPU-…`, d.UUID)
	}
	loc := fields["Bus Location"]
	var ok bool
	if bus, ok = parseBusID(loc); !ok {
		return d, bus, false, fmt.Errorf(`"Bus Location:" is %q, not domain:bus:device.function`, loc)
	}
	d.PCIBusID = formatBusID(bus)
	if v, ok := fields["Device Minor"]; ok {
		n, ok := decimal(v)
		if !ok {
			return d, bus, false, fmt.Errorf(`"Device Minor:" is %q, not a number`, v)
		}
		d.Minor = n
	}
	excluded = strings.EqualFold(fields["GPU Excluded"], "Yes")
	return d, bus, excluded, nil
}

// parseBusID reads "dddd:bb:dd.f" (hex; the domain up to 8 digits, the bus
// and device up to 2, the function 1), the form of procfs and of nvidia-smi.
func parseBusID(s string) (bus [4]uint64, ok bool) {
	dom, rest, ok1 := strings.Cut(s, ":")
	b, rest, ok2 := strings.Cut(rest, ":")
	dev, fn, ok3 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || !ok3 {
		return bus, false
	}
	for i, part := range [...]struct {
		s   string
		max int
	}{{dom, 8}, {b, 2}, {dev, 2}, {fn, 1}} {
		if part.s == "" || len(part.s) > part.max {
			return bus, false
		}
		n, err := strconv.ParseUint(part.s, 16, 32)
		if err != nil {
			return bus, false
		}
		bus[i] = n
	}
	return bus, true
}

// formatBusID writes NVML's form of a PCI bus id: "00000000:81:00.0".
func formatBusID(bus [4]uint64) string {
	return fmt.Sprintf("%08X:%02X:%02X.%X", bus[0], bus[1], bus[2], bus[3])
}

// listGPUs lists the GPUs nvidia-smi shows, by their NVML index:
//
//	nvidia-smi --query-gpu=index,uuid,pci.bus_id,name --format=csv,noheader
//
// with the bounds of [NvidiaSMI]. Minor numbers are unknown.
func (n NvidiaSMI) listGPUs(ctx context.Context) ([]GPUDevice, error) {
	out, err := n.run(ctx, "--query-gpu=index,uuid,pci.bus_id,name", "--format=csv,noheader")
	if err != nil {
		return nil, smiError(err)
	}
	lines, ok := outputLines(out)
	if !ok {
		return nil, gpuErrorf(sourceNvidiaSMI, "output is not valid UTF-8")
	}
	var devs []GPUDevice
	for line := range lines {
		if pytext.TrimSpace(line) == "" {
			continue
		}
		cols := strings.SplitN(line, ",", 4)
		if len(cols) != 4 {
			return nil, gpuErrorf(sourceNvidiaSMI, "unexpected line %q", line)
		}
		idx, ok1 := decimal(pytext.TrimSpace(cols[0]))
		uuid := pytext.TrimSpace(cols[1])
		bus, ok2 := parseBusID(pytext.TrimSpace(cols[2]))
		model := pytext.TrimSpace(cols[3])
		if !ok1 || !ok2 || !strings.HasPrefix(uuid, gpuUUIDPrefix) || model == "" {
			return nil, gpuErrorf(sourceNvidiaSMI, "unexpected line %q", line)
		}
		if idx != len(devs) {
			return nil, gpuErrorf(sourceNvidiaSMI, "line %q: index %d where %d was expected", line, idx, len(devs))
		}
		devs = append(devs, GPUDevice{Index: idx, UUID: uuid, Model: model, PCIBusID: formatBusID(bus), Minor: unknown, Source: sourceNvidiaSMI})
	}
	return devs, nil
}

// listMIG maps each MIG instance's id to its parent GPU's UUID, from
//
//	nvidia-smi -L
//
// whose "GPU n: MODEL (UUID: GPU-…)" lines are each followed by the GPU's
// "  MIG PROFILE Device m: (UUID: MIG-…)" lines.
func (n NvidiaSMI) listMIG(ctx context.Context) (map[string]string, error) {
	out, err := n.run(ctx, "-L")
	if err != nil {
		return nil, smiError(err)
	}
	lines, ok := outputLines(out)
	if !ok {
		return nil, gpuErrorf(sourceNvidiaSMI, "output of -L is not valid UTF-8")
	}
	migs := map[string]string{}
	parent := ""
	for line := range lines {
		_, id, ok := strings.Cut(line, "(UUID: ")
		if !ok {
			continue
		}
		id, _, _ = strings.Cut(id, ")")
		switch trimmed := pytext.TrimSpace(line); {
		case strings.HasPrefix(trimmed, "GPU ") && strings.HasPrefix(id, gpuUUIDPrefix):
			parent = id
		case strings.HasPrefix(trimmed, "MIG ") && strings.HasPrefix(id, migUUIDPrefix) && parent != "":
			migs[id] = parent
		}
	}
	return migs, nil
}

// smiError names nvidia-smi in a run's failure; a missing tool wraps
// errNoNvidiaSMI.
func smiError(err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return &GPUError{Source: sourceNvidiaSMI, Err: errNoNvidiaSMI}
	}
	return &GPUError{Source: sourceNvidiaSMI, Err: err}
}
