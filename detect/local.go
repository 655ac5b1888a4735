package detect

import (
	"context"
	"os"
	"strings"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/internal/logx"
	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/lensconv"
)

const envCUDAVisibleDevices = "CUDA_VISIBLE_DEVICES"

// Local returns the attributes of the live process, the reference's
// detect_local (docs/detection.md#detect-local), in this order:
//
//   - host.name: the host name ([WithHostname], default os.Hostname);
//     always present;
//   - process.pid: [WithPID], default os.Getpid(); always present, int;
//   - host.gpu.count (int): when CUDA_VISIBLE_DEVICES is present, 0 if its
//     value is blank after trimming, else the number of comma-separated items
//     (not validated: "0,,2" → 3, "GPU-a,GPU-b" → 2, "-1" → 1) — no
//     subprocess is started then; when it is absent, the probe of
//     [WithGPUCount] (default [NvidiaSMIGPUCount], bounded by ctx) decides,
//     and a failed probe omits the key.
//
// Port decision: the reference's socket.gethostname() cannot fail; when the
// Go host-name lookup fails, host.name is "" (so the key stays present) and
// a WARNING is logged (docs/compatibility.md#divergence-hostname-failure).
//
// Options used: WithEnv, WithHostname, WithPID, WithGPUCount, WithLogger,
// WithExplanation.
func Local(ctx context.Context, opts ...Option) *attr.Map {
	c := newConfig(opts)
	m := attr.WithCapacity(3)
	localInto(ctx, &c, m)
	return m
}

func localInto(ctx context.Context, c *config, m *attr.Map) {
	e := c.explain
	hostname := c.hostname
	if hostname == nil {
		hostname = os.Hostname
	}
	host, err := hostname()
	if err != nil {
		logx.Logger(c.logger, logx.Local).Warn("cannot read the host name; host.name is empty", "error", err)
		host = ""
		if e != nil {
			e.Record(lensconv.HostName, "hostname", "host-name lookup failed: "+err.Error())
		}
	} else {
		e.Record(lensconv.HostName, "hostname")
	}
	m.Set(lensconv.HostName, attr.String(host))

	pid := c.pid
	if pid == 0 {
		pid = os.Getpid()
	}
	m.Set(lensconv.ProcessPID, attr.Int(pid))
	e.Record(lensconv.ProcessPID, "pid")

	if cvd, ok := c.env.LookupEnv(envCUDAVisibleDevices); ok {
		m.Set(lensconv.HostGPUCount, attr.Int(countVisibleDevices(cvd)))
		e.Record(lensconv.HostGPUCount, "env "+envCUDAVisibleDevices)
		return
	}
	if c.gpuCount != nil {
		if n, ok := c.gpuCount(ctx); ok {
			m.Set(lensconv.HostGPUCount, attr.Int(n))
			e.Record(lensconv.HostGPUCount, "gpu probe")
		} else if e != nil {
			e.Note(lensconv.HostGPUCount, "CUDA_VISIBLE_DEVICES is absent and the GPU probe gave no count")
		}
		return
	}
	if n, err := (NvidiaSMI{}).gpuCount(ctx); err == nil {
		m.Set(lensconv.HostGPUCount, attr.Int(n))
		e.Record(lensconv.HostGPUCount, "nvidia-smi")
	} else if e != nil {
		e.Note(lensconv.HostGPUCount, "CUDA_VISIBLE_DEVICES is absent and "+err.Error())
	}
}

// countVisibleDevices is host.gpu.count for a present CUDA_VISIBLE_DEVICES.
func countVisibleDevices(v string) int {
	if pytext.TrimSpace(v) == "" {
		return 0
	}
	return strings.Count(v, ",") + 1
}
