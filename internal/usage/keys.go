package usage

// The exec span's usage attributes (docs/usage.md#span-attributes). The
// OpenTelemetry semantic conventions define these quantities as metrics
// only (process.cpu.time with cpu.mode, process.paging.faults with
// system.paging.fault.type, …); lens-go names each span attribute after
// its metric, with the metric attribute's value as the last part
// (docs/compatibility.md#divergence-exec-usage).
const (
	// CPUTimeUser is the user CPU time in seconds (double): ru_utime.
	CPUTimeUser = "process.cpu.time.user"
	// CPUTimeSystem is the system CPU time in seconds (double): ru_stime.
	CPUTimeSystem = "process.cpu.time.system"
	// MemoryPeak is the peak resident set size in bytes (int): ru_maxrss
	// (KiB on Linux) × 1024, the largest of the command's and of every
	// descendant it waited for.
	MemoryPeak = "process.memory.peak"
	// PagingFaultsMinor and PagingFaultsMajor are the page faults (int):
	// ru_minflt and ru_majflt.
	PagingFaultsMinor = "process.paging.faults.minor"
	PagingFaultsMajor = "process.paging.faults.major"
	// DiskIORead and DiskIOWrite are the bytes read from and written to
	// storage (int): ru_inblock and ru_oublock, which Linux counts in
	// 512-byte units, × 512.
	DiskIORead  = "process.disk.io.read"
	DiskIOWrite = "process.disk.io.write"
	// ContextSwitchesVoluntary and ContextSwitchesInvoluntary are the
	// context switches (int): ru_nvcsw and ru_nivcsw.
	ContextSwitchesVoluntary   = "process.context_switches.voluntary"
	ContextSwitchesInvoluntary = "process.context_switches.involuntary"
	// CgroupMemoryPeak is the memory.peak of the cgroup v2 that holds this
	// rank alone, in bytes (int); absent otherwise (docs/usage.md#cgroup).
	CgroupMemoryPeak = "process.cgroup.memory.peak"
)

// The per-rank metrics while the command runs (docs/usage.md#metrics).
const (
	// MetricCPUTime is the semantic conventions' process.cpu.time (s,
	// counter, cpu.mode user or system) of the command's process tree.
	MetricCPUTime = "process.cpu.time"
	// MetricMemoryUsage is the semantic conventions' process.memory.usage
	// (By, up-down counter): the summed RSS of the command's process tree.
	MetricMemoryUsage = "process.memory.usage"
	// MetricUp is 1 while the command runs, 0 once it has ended.
	MetricUp = "lens.exec.up"
	// MetricExitCode is the exit status lens reports (process.exit.code on
	// the span), observed once the command has ended.
	MetricExitCode = "lens.exec.exit.code"
	// MetricGPUInfo is 1 for each GPU of the rank, with DCGM exporter's
	// label names as attributes (GPULabel*), for the join with its series.
	MetricGPUInfo = "lens.exec.gpu.info"
)

// The attributes of MetricGPUInfo: DCGM exporter's label names, so that a
// query joins on them without relabelling (docs/backends.md#gpu-info-join).
const (
	GPULabelUUID     = "UUID"
	GPULabelIndex    = "gpu"
	GPULabelPCIBusID = "pci_bus_id"
	GPULabelHostname = "Hostname"
)
