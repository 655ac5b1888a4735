package resources

import (
	"context"
	"os"
	"strings"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/logx"
	"github.com/nemolens/lens-go/semconv"
)

const envCUDAVisibleDevices = "CUDA_VISIBLE_DEVICES"

// DetectLocal returns the attributes of the live process (SPEC §1.2), in
// this order:
//
//   - host.name: the host name ([Options.Hostname], default os.Hostname);
//     always present;
//   - process.pid: [Options.PID], default os.Getpid(); always present, int;
//   - host.gpu.count (int): when CUDA_VISIBLE_DEVICES is present, 0 if its
//     value is blank after trimming, else the number of comma-separated items
//     (not validated: "0,,2" → 3, "GPU-a,GPU-b" → 2, "-1" → 1) — no
//     subprocess is started then; when it is absent, [Options.GPUCount]
//     (default [NvidiaSMIGPUCount], bounded by ctx) decides, and a failed
//     probe omits the key.
//
// Port decision: the reference's socket.gethostname() cannot fail; when the
// Go host-name lookup fails, host.name is "" (so the key stays present) and
// a WARNING is logged.
func DetectLocal(ctx context.Context, opts Options) *attr.Map {
	m := attr.WithCapacity(3)
	detectLocalInto(ctx, &opts, m)
	return m
}

func detectLocalInto(ctx context.Context, opts *Options, m *attr.Map) {
	e := opts.Explain
	hostname := opts.Hostname
	if hostname == nil {
		hostname = os.Hostname
	}
	host, err := hostname()
	if err != nil {
		logx.Logger(opts.Logger, logx.Local).Warn("cannot read the host name; host.name is empty", "error", err)
		host = ""
		if e != nil {
			e.Record(semconv.HostName, "hostname", "host-name lookup failed: "+err.Error())
		}
	} else {
		e.Record(semconv.HostName, "hostname")
	}
	m.Set(semconv.HostName, attr.String(host))

	pid := opts.PID
	if pid == 0 {
		pid = os.Getpid()
	}
	m.Set(semconv.ProcessPID, attr.Int(pid))
	e.Record(semconv.ProcessPID, "pid")

	if cvd, ok := opts.env().LookupEnv(envCUDAVisibleDevices); ok {
		m.Set(semconv.HostGPUCount, attr.Int(countVisibleDevices(cvd)))
		e.Record(semconv.HostGPUCount, "env "+envCUDAVisibleDevices)
		return
	}
	probe, source := opts.GPUCount, "gpu probe"
	if probe == nil {
		probe, source = NvidiaSMIGPUCount, "nvidia-smi"
	}
	if n, ok := probe(ctx); ok {
		m.Set(semconv.HostGPUCount, attr.Int(n))
		e.Record(semconv.HostGPUCount, source)
	} else if e != nil {
		e.Note(semconv.HostGPUCount, "CUDA_VISIBLE_DEVICES is absent and "+source+" reported no GPU (missing, failed or timed out): host.gpu.count not emitted")
	}
}

// countVisibleDevices is host.gpu.count for a present CUDA_VISIBLE_DEVICES.
func countVisibleDevices(v string) int {
	if carrier.TrimSpace(v) == "" {
		return 0
	}
	return strings.Count(v, ",") + 1
}
