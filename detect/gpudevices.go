package detect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/lensconv"
)

// The variables [VisibleGPUs] reads, and the names and values of its rules
// (docs/detection.md#gpu-devices).
const (
	envCUDADeviceOrder       = "CUDA_DEVICE_ORDER"
	envNvidiaVisibleDevices  = "NVIDIA_VISIBLE_DEVICES"
	envSlurmStepGPUs         = "SLURM_STEP_GPUS"
	envSlurmJobGPUs          = "SLURM_JOB_GPUS"
	envNvidiaProcfs          = "LENS_NVIDIA_PROCFS"
	sourceProcfs             = "procfs"
	sourceNvidiaSMI          = "nvidia-smi"
	gpuUUIDPrefix            = "GPU-"
	migUUIDPrefix            = "MIG-"
	cudaDeviceOrderPCIBusID  = "PCI_BUS_ID"
	nvidiaVisibleDevicesAll  = "all"
	nvidiaVisibleDevicesNone = "none"
	nvidiaVisibleDevicesVoid = "void"
	hwTypeGPU                = "gpu"
	hwVendorNVIDIA           = "NVIDIA"
	characterDevicePrefix    = "nvidia"
	unknown                  = -1
	gpuListSeparator         = ","
)

// GPUDevice is one GPU a process may use, as [VisibleGPUs] finds it.
type GPUDevice struct {
	// Ordinal is the device's CUDA ordinal in the process: 0 is cuda:0.
	Ordinal int
	// Index is the node-level NVML index (the PCI bus order of the node's
	// GPUs, DCGM's gpu label); -1 when it is not known (a container given
	// its GPUs by UUID).
	Index int
	// UUID is the GPU's UUID, "GPU-…"; for a MIG instance, its parent's.
	UUID string
	// Model is the model name, "NVIDIA H100 80GB HBM3".
	Model string
	// PCIBusID is the PCI bus id in NVML's form, "00000000:81:00.0".
	PCIBusID string
	// Minor is the minor number of /dev/nvidia<Minor>; -1 when unknown
	// (nvidia-smi does not list it).
	Minor int
	// MIG is the MIG instance's id, "MIG-…", or "" for a whole GPU.
	MIG string
	// Source is where the device was found: "procfs" (the driver's
	// /proc/driver/nvidia/gpus) or "nvidia-smi".
	Source string
}

// Device returns "nvidia<Minor>", the name of the character device (DCGM's
// device label), or "" when the minor number is unknown.
func (d GPUDevice) Device() string {
	if d.Minor < 0 {
		return ""
	}
	return characterDevicePrefix + strconv.Itoa(d.Minor)
}

// InfoAttributes returns the attributes of one point of a per-GPU info
// series (docs/detection.md#gpu-devices): hw.id (the UUID), hw.type "gpu",
// hw.vendor "NVIDIA", hw.model, hw.name ("nvidia<minor>", when known),
// nv.gpu.index (int, when known), nv.gpu.uuid, nv.gpu.pci_bus_id,
// nv.gpu.model, nv.gpu.ordinal (int), nv.gpu.device (when known) and
// nv.gpu.mig_uuid (a MIG instance only), in that order.
func (d GPUDevice) InfoAttributes() *attr.Map {
	m := attr.WithCapacity(12)
	m.SetString(lensconv.HWID, d.UUID)
	m.SetString(lensconv.HWType, hwTypeGPU)
	m.SetString(lensconv.HWVendor, hwVendorNVIDIA)
	m.SetString(lensconv.HWModel, d.Model)
	dev := d.Device()
	if dev != "" {
		m.SetString(lensconv.HWName, dev)
	}
	if d.Index >= 0 {
		m.Set(lensconv.NVGPUIndex, attr.Int(d.Index))
	}
	m.SetString(lensconv.NVGPUUUID, d.UUID)
	m.SetString(lensconv.NVGPUPCIBusID, d.PCIBusID)
	m.SetString(lensconv.NVGPUModel, d.Model)
	m.Set(lensconv.NVGPUOrdinal, attr.Int(d.Ordinal))
	if dev != "" {
		m.SetString(lensconv.NVGPUDevice, dev)
	}
	if d.MIG != "" {
		m.SetString(lensconv.NVGPUMIGUUID, d.MIG)
	}
	return m
}

// VisibleGPUAttributes returns the resource attributes of devs
// (docs/detection.md#gpu-devices): nv.gpu.visible.uuid, .index, .pci_bus_id,
// .model, .device and .mig_uuid, each a comma-separated list with one item
// per device in the order of devs. .index and .device are omitted when one
// of their items is unknown, .mig_uuid when no device is a MIG instance; no
// device gives an empty map.
func VisibleGPUAttributes(devs []GPUDevice) *attr.Map {
	m := attr.WithCapacity(6)
	if len(devs) == 0 {
		return m
	}
	list := func(item func(GPUDevice) (string, bool)) (string, bool) {
		var b strings.Builder
		for i, d := range devs {
			s, ok := item(d)
			if !ok {
				return "", false
			}
			if i > 0 {
				b.WriteString(gpuListSeparator)
			}
			b.WriteString(s)
		}
		return b.String(), true
	}
	add := func(key string, item func(GPUDevice) (string, bool)) {
		if s, ok := list(item); ok {
			m.SetString(key, s)
		}
	}
	add(lensconv.NVGPUVisibleUUID, func(d GPUDevice) (string, bool) { return d.UUID, true })
	add(lensconv.NVGPUVisibleIndex, func(d GPUDevice) (string, bool) { return strconv.Itoa(d.Index), d.Index >= 0 })
	add(lensconv.NVGPUVisiblePCIBusID, func(d GPUDevice) (string, bool) { return d.PCIBusID, true })
	add(lensconv.NVGPUVisibleModel, func(d GPUDevice) (string, bool) { return d.Model, true })
	add(lensconv.NVGPUVisibleDevice, func(d GPUDevice) (string, bool) { return d.Device(), d.Minor >= 0 })
	if slices.ContainsFunc(devs, func(d GPUDevice) bool { return d.MIG != "" }) {
		add(lensconv.NVGPUVisibleMIG, func(d GPUDevice) (string, bool) { return d.MIG, true })
	}
	return m
}

// ErrNoGPUDriver is returned (wrapped) by [VisibleGPUs] when there is no
// NVIDIA driver to ask: no driver tree in procfs and no nvidia-smi in PATH.
// A machine without NVIDIA GPUs gives it; it is no fault.
var ErrNoGPUDriver = errors.New("no NVIDIA driver (no driver tree, no nvidia-smi)")

// GPUError is a failure of [VisibleGPUs] that names its source: a file of
// the driver tree, a variable (NVIDIA_VISIBLE_DEVICES, SLURM_STEP_GPUS, …)
// or nvidia-smi.
type GPUError struct {
	// Source is the file path, the variable's name or "nvidia-smi".
	Source string
	// Err is what is wrong with it.
	Err error
}

func (e *GPUError) Error() string { return e.Source + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *GPUError) Unwrap() error { return e.Err }

func gpuErrorf(source, format string, args ...any) error {
	return &GPUError{Source: source, Err: fmt.Errorf(format, args...)}
}

// VisibleGPUs returns the physical GPUs this process may use, in the order
// CUDA numbers them for it, by the rules of docs/detection.md#gpu-devices:
// the node's GPUs from the driver's procfs tree (LENS_NVIDIA_PROCFS, else
// /proc/driver/nvidia/gpus; [WithNvidiaProcfs]) or, when that tree is
// absent, unreadable or malformed, from nvidia-smi ([WithNvidiaSMI]), then
// narrowed by NVIDIA_VISIBLE_DEVICES, SLURM_STEP_GPUS or SLURM_JOB_GPUS and
// CUDA_VISIBLE_DEVICES (with CUDA_DEVICE_ORDER).
//
// No device visible is an empty list and no error. A failure is an error:
// [ErrNoGPUDriver] (wrapped) when neither backend exists, a [*GPUError]
// naming the file, variable or tool otherwise (joined with the procfs
// failure when nvidia-smi failed too). It never panics; ctx bounds
// nvidia-smi, which runs only when the procfs tree cannot be used or a MIG
// id must be resolved.
//
// Options used: WithEnv, WithNvidiaProcfs, WithNvidiaSMI.
func VisibleGPUs(ctx context.Context, opts ...Option) ([]GPUDevice, error) {
	c := newConfig(opts)
	smi := NvidiaSMI{}
	if c.smi != nil {
		smi = *c.smi
	}
	dir := c.nvidiaProcfs
	if dir == "" {
		dir, _ = environ.NonEmpty(c.env, envNvidiaProcfs)
	}
	if dir == "" {
		dir = DefaultNvidiaProcfs
	}
	node, err := nodeGPUs(ctx, dir, smi)
	if err != nil {
		return nil, err
	}
	r := resolver{env: c.env, node: node, smi: smi, ctx: ctx}
	return r.visible()
}

// nodeGPUs lists the GPUs the driver shows this process, in PCI bus order
// (their NVML indices): procfs first, nvidia-smi as the fallback.
func nodeGPUs(ctx context.Context, dir string, smi NvidiaSMI) ([]GPUDevice, error) {
	node, procErr := boundedProcfsGPUs(ctx, dir)
	if procErr == nil {
		return node, nil
	}
	node, smiErr := smi.listGPUs(ctx)
	if smiErr == nil {
		return node, nil
	}
	if errors.Is(procErr, errNoDriverTree) && errors.Is(smiErr, errNoNvidiaSMI) {
		return nil, fmt.Errorf("%w: %s is absent and nvidia-smi is not in PATH", ErrNoGPUDriver, dir)
	}
	return nil, errors.Join(procErr, smiErr)
}

// resolver narrows the node's GPUs by the environment.
type resolver struct {
	env  environ.Lookuper
	node []GPUDevice // PCI bus order; Index = position unless a container says otherwise
	smi  NvidiaSMI
	ctx  context.Context
	migs map[string]string // MIG id → parent UUID, from nvidia-smi -L, read once
}

func (r *resolver) visible() ([]GPUDevice, error) {
	for i := range r.node {
		r.node[i].Index = i
	}
	base, err := r.nvidiaVisible()
	if err != nil || len(base) == 0 {
		return nil, err
	}
	base, slurm, err := r.slurm(base)
	if err != nil {
		return nil, err
	}
	cvd, present := r.env.LookupEnv(envCUDAVisibleDevices)
	var out []GPUDevice
	if !present {
		if err := r.checkOrder(base, false); err != nil {
			return nil, err
		}
		out = base
	} else {
		if out, err = r.cudaVisible(base, slurm, cvd); err != nil {
			return nil, err
		}
	}
	out = slices.Clone(out)
	for i := range out {
		out[i].Ordinal = i
	}
	return out, nil
}

// checkOrder fails when CUDA's order of base is unknown: CUDA numbers the
// devices fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, and lens-go
// knows that order only when every device is the same model (then it is the
// PCI bus order). indices says whether CUDA_VISIBLE_DEVICES holds indices.
func (r *resolver) checkOrder(base []GPUDevice, indices bool) error {
	if v, _ := r.env.LookupEnv(envCUDADeviceOrder); pytext.TrimSpace(v) == cudaDeviceOrderPCIBusID {
		return nil
	}
	for _, d := range base[1:] {
		if d.Model != base[0].Model {
			what := "the order of the devices"
			if indices {
				what = "which device an index of " + envCUDAVisibleDevices + " means"
			}
			return gpuErrorf(envCUDADeviceOrder, "unset with GPUs of different models (%q, %q): CUDA numbers them fastest first, so %s is not known; set %s=%s",
				base[0].Model, d.Model, what, envCUDADeviceOrder, cudaDeviceOrderPCIBusID)
		}
	}
	return nil
}

// nvidiaVisible applies NVIDIA_VISIBLE_DEVICES, the container runtime's
// choice, to the node's GPUs.
func (r *resolver) nvidiaVisible() ([]GPUDevice, error) {
	v, _ := r.env.LookupEnv(envNvidiaVisibleDevices)
	v = pytext.TrimSpace(v)
	switch v {
	case "", nvidiaVisibleDevicesAll:
		return r.node, nil
	case nvidiaVisibleDevicesNone, nvidiaVisibleDevicesVoid:
		return nil, nil
	}
	items := splitItems(v)
	indices, allIndices := decimalItems(items)
	if allIndices {
		distinct := sortedDistinct(indices)
		switch {
		case len(distinct) == len(r.node):
			// The container's view: the driver lists exactly the named
			// GPUs, in PCI bus order, which is also the order of their
			// node-level indices.
			base := slices.Clone(r.node)
			for k := range base {
				base[k].Index = distinct[k]
			}
			return base, nil
		case distinct[len(distinct)-1] < len(r.node):
			// The host's view: the driver lists every GPU of the node.
			base := make([]GPUDevice, 0, len(distinct))
			for _, i := range distinct {
				base = append(base, r.node[i])
			}
			return base, nil
		}
		return nil, gpuErrorf(envNvidiaVisibleDevices, "names %d GPUs by index (%q) and the driver lists %d", len(distinct), v, len(r.node))
	}
	lookup := newUUIDIndex(r.node)
	base := make([]GPUDevice, 0, len(items))
	seen := make(map[[2]string]bool, len(items))
	for _, item := range items {
		d, ok, err := r.byID(lookup, item)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, gpuErrorf(envNvidiaVisibleDevices, "item %q names no GPU the driver lists (items are all indices or all GPU-/MIG- ids)", item)
		}
		if key := [2]string{d.UUID, d.MIG}; !seen[key] {
			seen[key] = true
			base = append(base, d)
		}
	}
	if distinctUUIDs(base) == len(r.node) {
		// Possibly the container's view: its positions are not the node's
		// indices.
		for k := range base {
			base[k].Index = unknown
		}
	}
	sortByBus(base, r.node)
	return base, nil
}

// slurm applies SLURM_STEP_GPUS, else SLURM_JOB_GPUS: node-level indices of
// the step's (or job's) GPUs. It returns the narrowed devices in PCI bus
// order and the variable's indices in their given order.
func (r *resolver) slurm(base []GPUDevice) ([]GPUDevice, []int, error) {
	name := envSlurmStepGPUs
	v, ok := environ.NonEmpty(r.env, name)
	if !ok {
		name = envSlurmJobGPUs
		if v, ok = environ.NonEmpty(r.env, name); !ok {
			return base, nil, nil
		}
	}
	indices, all := decimalItems(splitItems(v))
	if !all {
		return nil, nil, gpuErrorf(name, "%q is not a list of GPU indices", v)
	}
	byIndex := make(map[int]GPUDevice, len(base))
	for _, d := range base {
		if d.Index >= 0 {
			byIndex[d.Index] = d
		}
	}
	distinct := sortedDistinct(indices)
	out := make([]GPUDevice, 0, len(distinct))
	for _, i := range distinct {
		d, ok := byIndex[i]
		if !ok {
			return nil, nil, gpuErrorf(name, "names GPU %d, which the driver does not list for this process", i)
		}
		out = append(out, d)
	}
	return out, indices, nil
}

// cudaVisible applies CUDA_VISIBLE_DEVICES to base as CUDA does: items are
// read in order until the first that names no device (CUDA ignores it and
// every later one); an index is a position in CUDA's order of base, except
// under Slurm when the list is the node-level list of SLURM_*_GPUS itself
// (no device constraint: nothing was renumbered).
func (r *resolver) cudaVisible(base []GPUDevice, slurm []int, cvd string) ([]GPUDevice, error) {
	cvd = pytext.TrimSpace(cvd)
	if cvd == "" {
		return nil, nil
	}
	items := splitItems(cvd)
	indices, allIndices := decimalItems(items)
	nodeLevel := allIndices && slurm != nil && slices.Equal(indices, slurm)
	var byIndex map[int]GPUDevice
	if nodeLevel {
		byIndex = make(map[int]GPUDevice, len(base))
		for _, d := range base {
			byIndex[d.Index] = d
		}
	}
	var lookup uuidIndex
	orderChecked := false
	out := make([]GPUDevice, 0, len(items))
	seen := make(map[[2]string]bool, len(items))
	for _, item := range items {
		var d GPUDevice
		var ok bool
		if i, isIndex := decimal(item); isIndex {
			switch {
			case nodeLevel:
				d, ok = byIndex[i]
			default:
				if !orderChecked {
					if err := r.checkOrder(base, true); err != nil {
						return nil, err
					}
					orderChecked = true
				}
				if i < len(base) {
					d, ok = base[i], true
				}
			}
		} else {
			if lookup.sorted == nil {
				lookup = newUUIDIndex(base)
			}
			var err error
			if d, ok, err = r.byID(lookup, item); err != nil {
				return nil, err
			}
		}
		key := [2]string{d.UUID, d.MIG}
		if !ok || seen[key] {
			break // CUDA ignores this item and the rest
		}
		seen[key] = true
		out = append(out, d)
	}
	return out, nil
}

// byID finds the device an item names by id: "GPU-…" (the UUID or a prefix
// of it that names one device), "MIG-GPU-<uuid>/<gi>/<ci>" (the MIG id of
// drivers before R470) or "MIG-<uuid>" (its parent found with nvidia-smi
// -L). ok is false when the item names no device of lookup; err is nvidia-smi's
// failure to list MIG instances.
func (r *resolver) byID(lookup uuidIndex, item string) (GPUDevice, bool, error) {
	switch {
	case strings.HasPrefix(item, gpuUUIDPrefix):
		d, ok := lookup.find(item)
		return d, ok, nil
	case strings.HasPrefix(item, migUUIDPrefix+gpuUUIDPrefix):
		parent, _, _ := strings.Cut(item[len(migUUIDPrefix):], "/")
		d, ok := lookup.exact(parent)
		d.MIG = item
		return d, ok, nil
	case strings.HasPrefix(item, migUUIDPrefix):
		if r.migs == nil {
			migs, err := r.smi.listMIG(r.ctx)
			if err != nil {
				return GPUDevice{}, false, err
			}
			r.migs = migs
		}
		parent, ok := r.migs[item]
		if !ok {
			return GPUDevice{}, false, nil
		}
		d, ok := lookup.exact(parent)
		d.MIG = item
		return d, ok, nil
	}
	return GPUDevice{}, false, nil
}

// uuidIndex finds devices by UUID or unique UUID prefix in O(log n).
type uuidIndex struct {
	sorted []GPUDevice // by UUID
}

func newUUIDIndex(devs []GPUDevice) uuidIndex {
	s := slices.Clone(devs)
	slices.SortFunc(s, func(a, b GPUDevice) int { return strings.Compare(a.UUID, b.UUID) })
	if s == nil {
		s = []GPUDevice{}
	}
	return uuidIndex{sorted: s}
}

func (x uuidIndex) exact(uuid string) (GPUDevice, bool) {
	i, ok := slices.BinarySearchFunc(x.sorted, uuid, func(d GPUDevice, u string) int { return strings.Compare(d.UUID, u) })
	if !ok {
		return GPUDevice{}, false
	}
	return x.sorted[i], true
}

// find returns the device whose UUID is uuid or, failing that, the only one
// whose UUID starts with it (CUDA accepts a unique prefix).
func (x uuidIndex) find(uuid string) (GPUDevice, bool) {
	i, ok := slices.BinarySearchFunc(x.sorted, uuid, func(d GPUDevice, u string) int { return strings.Compare(d.UUID, u) })
	if ok {
		return x.sorted[i], true
	}
	if i < len(x.sorted) && strings.HasPrefix(x.sorted[i].UUID, uuid) &&
		(i+1 == len(x.sorted) || !strings.HasPrefix(x.sorted[i+1].UUID, uuid)) {
		return x.sorted[i], true
	}
	return GPUDevice{}, false
}

func distinctUUIDs(devs []GPUDevice) int {
	seen := make(map[string]bool, len(devs))
	for _, d := range devs {
		seen[d.UUID] = true
	}
	return len(seen)
}

// sortByBus orders devs as their parents appear in node (PCI bus order),
// MIG instances of one GPU in their given order.
func sortByBus(devs []GPUDevice, node []GPUDevice) {
	pos := make(map[string]int, len(node))
	for i, d := range node {
		pos[d.UUID] = i
	}
	slices.SortStableFunc(devs, func(a, b GPUDevice) int { return pos[a.UUID] - pos[b.UUID] })
}

// splitItems splits a device list at commas, trimming each item.
func splitItems(v string) []string {
	items := strings.Split(v, gpuListSeparator)
	for i, s := range items {
		items[i] = pytext.TrimSpace(s)
	}
	return items
}

// decimal parses a non-negative decimal index (ASCII digits, at most 9).
func decimal(s string) (int, bool) {
	if !isDecimal(s) || len(s) > 9 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// decimalItems parses every item as an index; all is false when one is not.
func decimalItems(items []string) (indices []int, all bool) {
	indices = make([]int, 0, len(items))
	for _, s := range items {
		n, ok := decimal(s)
		if !ok {
			return nil, false
		}
		indices = append(indices, n)
	}
	return indices, len(indices) > 0
}

func sortedDistinct(v []int) []int {
	s := slices.Clone(v)
	slices.Sort(s)
	return slices.Compact(s)
}
