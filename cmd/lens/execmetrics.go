package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/internal/telemetry"
	"github.com/nemolens/lens-go/internal/telemetry/metrics"
	"github.com/nemolens/lens-go/internal/usage"
	"github.com/nemolens/lens-go/lensconv"
)

// metricsExporterEnv is the opt-in of lens exec's per-rank metrics
// (docs/usage.md#metrics).
const metricsExporterEnv = "OTEL_" + telemetry.SignalMetrics + "_EXPORTER"

// execMetrics are lens exec's per-rank metrics: a meter provider with a
// periodic reader, and the rank its callback observes.
type execMetrics struct {
	provider *sdkmetric.MeterProvider
	rank     *usage.Rank
	// probe, when not nil, is the GPU probe whose devices replace the
	// resource's GPUs once it has them; host is the resource's host.name.
	probe *gpuProbe
	host  string
}

// probed gives the rank the GPUs the probe found, if it found any; call it
// once the probe's identity part has finished.
func (m *execMetrics) probed() {
	if gpus := probedGPUs(m.probe.devs, m.host); m.probe.devErr == nil && len(gpus) > 0 {
		m.rank.SetGPUs(gpus)
	}
}

// root is the file system root under which lens exec reads /proc and
// /sys/fs/cgroup.
func (a *app) root() string {
	if a.fsRoot != "" {
		return a.fsRoot
	}
	return "/"
}

// metricsRequested reports whether lens exec exports per-rank metrics:
// only when OTEL_METRICS_EXPORTER names otlp or console and
// NEMO_LENS_METRICS_ENABLED is not false. Any other value (none, or an
// exporter lens does not have, such as prometheus, which a worker's own
// SDK may use) leaves them off; an unknown one is said once on stderr.
func (a *app) metricsRequested(cfg telemetry.Config) bool {
	raw, _ := a.env.LookupEnv(metricsExporterEnv)
	switch v := strings.ToLower(strings.TrimSpace(raw)); v {
	case telemetry.KindOTLP, telemetry.KindConsole:
		return !cfg.MetricsDisabled
	case "", telemetry.KindNone:
		return false
	}
	if !cfg.MetricsDisabled {
		fmt.Fprintf(a.stderr, "lens exec: %s=%q: lens exec exports its metrics with otlp or console only; no metrics\n", metricsExporterEnv, raw)
	}
	return false
}

// startMetrics builds the meter provider for the resource attrs and
// registers the rank's instruments; the first collection comes after one
// OTEL_METRIC_EXPORT_INTERVAL.
func (a *app) startMetrics(ctx context.Context, attrs *attr.Map, s *telemetry.Settings, probe *gpuProbe) (*execMetrics, error) {
	mp, _, err := metrics.New(ctx, attrs.Resource(), s, metrics.Options{
		Console:     telemetry.ConsoleWriter(a.stderr),
		Diagnostics: a.diag,
	})
	if err != nil {
		return nil, err
	}
	proc := ""
	if a.procIsOurs() {
		proc = filepath.Join(a.root(), "proc")
	}
	rank := usage.NewRank(proc, rankGPUs(attrs))
	if _, err := rank.Register(mp.Meter(instrumentationScope)); err != nil {
		_ = mp.Shutdown(ctx)
		return nil, err
	}
	m := &execMetrics{provider: mp, rank: rank, probe: probe}
	if v, ok := attrs.Get(lensconv.HostName); ok {
		m.host = v.String()
	}
	if probe != nil {
		// The probe's GPUs replace the resource's as soon as it has them.
		go func() {
			<-probe.idDone
			m.probed()
		}()
	}
	return m, nil
}

// started records the command's pid.
func (m *execMetrics) started(pid int) {
	if m != nil {
		m.rank.Started(pid)
	}
}

// end records the exit and exports the last collection.
func (m *execMetrics) end(ctx context.Context, status int, ru *syscall.Rusage) error {
	user, system := 0.0, 0.0
	if ru != nil {
		user, system = usage.CPUTimes(ru)
	}
	if m.probe != nil && finished(m.probe.idDone) {
		m.probed() // the last export has them, whichever goroutine runs first
	}
	m.rank.Ended(status, user, system, ru != nil)
	return m.provider.Shutdown(ctx)
}

// rankGPUs are the GPUs of the resource, for the GPU info series
// (docs/usage.md#metrics): the nv.gpu.visible.* lists (item i of each is
// GPU i), else the reference's per-worker nv.gpu.uuid, nv.gpu.index and
// nv.gpu.pci_bus_id; host.name is DCGM's Hostname. No UUID, no GPU.
func rankGPUs(attrs *attr.Map) []usage.GPU {
	text := func(key string) string {
		if v, ok := attrs.Get(key); ok {
			return v.String()
		}
		return ""
	}
	host := text(lensconv.HostName)
	if uuids := text(lensconv.NVGPUVisibleUUID); uuids != "" {
		list := func(key string, n int) []string {
			items := strings.Split(text(key), ",")
			if len(items) != n {
				return make([]string, n) // absent, or not one item per GPU
			}
			return items
		}
		ids := strings.Split(uuids, ",")
		index, bus := list(lensconv.NVGPUVisibleIndex, len(ids)), list(lensconv.NVGPUVisiblePCIBusID, len(ids))
		gpus := make([]usage.GPU, 0, len(ids))
		for i, id := range ids {
			if id != "" {
				gpus = append(gpus, usage.GPU{UUID: id, Index: index[i], PCIBusID: bus[i], Hostname: host})
			}
		}
		return gpus
	}
	uuid := text(lensconv.NVGPUUUID)
	if uuid == "" {
		return nil
	}
	return []usage.GPU{{UUID: uuid, Index: text(lensconv.NVGPUIndex), PCIBusID: text(lensconv.NVGPUPCIBusID), Hostname: host}}
}

// probedGPUs are the GPUs the probe found, for the GPU info series.
func probedGPUs(devs []detect.GPUDevice, host string) []usage.GPU {
	gpus := make([]usage.GPU, 0, len(devs))
	for _, d := range devs {
		if d.UUID == "" {
			continue
		}
		g := usage.GPU{UUID: d.UUID, PCIBusID: d.PCIBusID, Hostname: host}
		if d.Index >= 0 {
			g.Index = strconv.Itoa(d.Index)
		}
		gpus = append(gpus, g)
	}
	return gpus
}

// procIsOurs reports whether the proc file system under root is this PID
// namespace's; when it is another's (usage.ForeignProc), it says so once
// on stderr: lens then reads no /proc/PID file, so that the span goes
// without the cgroup's memory peak and the per-rank metrics without the
// process tree's memory and running CPU (docs/usage.md#pid-namespace).
func (a *app) procIsOurs() bool {
	a.procOnce.Do(func() {
		self, foreign := usage.ForeignProc(filepath.Join(a.root(), "proc"), a.pid())
		a.procForeign = foreign
		if foreign {
			fmt.Fprintf(a.stderr, "lens exec: %s/self is pid %d, lens is pid %d: that proc file system is another PID namespace's (mount this namespace's own); lens reads none of its processes: no %s, no process tree in the per-rank metrics (docs/usage.md#pid-namespace)\n",
				filepath.Join(a.root(), "proc"), self, a.pid(), usage.CgroupMemoryPeak)
		}
	})
	return !a.procForeign
}
