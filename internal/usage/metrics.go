package usage

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// GPU is one GPU of a rank, in DCGM exporter's terms (its labels UUID,
// gpu, pci_bus_id and Hostname); an empty field is left out.
type GPU struct {
	UUID, Index, PCIBusID, Hostname string
}

// Rank is the state of one rank that its metrics observe
// (docs/usage.md#metrics): the command's process tree while it runs, its
// exit once it has ended.
type Rank struct {
	proc string

	mu          sync.Mutex
	gpus        []GPU
	pid         int
	ended       bool
	exitCode    int
	user, sys   float64 // the largest seen: the counter never goes back
	final       bool    // user and sys are the exit's rusage
	cpuObserved bool
}

// errNoTree: the process tree was not read (the command has ended, or
// there is no proc file system of this PID namespace to read it from).
var errNoTree = errors.New("process tree not read")

// NewRank returns the state of a rank whose process tree is read from
// proc ("/proc"; "" for none: another PID namespace's, ForeignProc) and
// whose GPUs are gpus.
func NewRank(proc string, gpus []GPU) *Rank {
	return &Rank{proc: proc, gpus: gpus}
}

// SetGPUs replaces the rank's GPUs (those a probe found after the start).
func (r *Rank) SetGPUs(gpus []GPU) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gpus = gpus
}

// Started records the command's pid.
func (r *Rank) Started(pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pid = pid
}

// Ended records the command's exit status and, when ok, the CPU times of
// the wait4 that reaped it: the counter's last value.
func (r *Rank) Ended(status int, user, system float64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended, r.exitCode = true, status
	if ok {
		r.user, r.sys = max(r.user, user), max(r.sys, system)
		r.final = true
	}
}

// Register creates the rank's instruments on m and the callback that
// observes them at every collection.
func (r *Rank) Register(m metric.Meter) (metric.Registration, error) {
	cpu, err1 := m.Float64ObservableCounter(MetricCPUTime, metric.WithUnit("s"),
		metric.WithDescription("CPU seconds of the command's process tree, by cpu.mode"))
	mem, err2 := m.Int64ObservableUpDownCounter(MetricMemoryUsage, metric.WithUnit("By"),
		metric.WithDescription("Summed resident set size of the command's process tree"))
	up, err3 := m.Int64ObservableGauge(MetricUp,
		metric.WithDescription("1 while the command of lens exec runs, 0 once it has ended"))
	exit, err4 := m.Int64ObservableGauge(MetricExitCode,
		metric.WithDescription("The exit status lens exec reports for the command (128+N when signal N killed it)"))
	info, err5 := m.Int64ObservableGauge(MetricGPUInfo,
		metric.WithDescription("1 for each GPU of the rank, labelled as DCGM exporter labels it"))
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return nil, err
	}
	user := metric.WithAttributes(attribute.String("cpu.mode", "user"))
	system := metric.WithAttributes(attribute.String("cpu.mode", "system"))
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		r.mu.Lock()
		gpus := r.gpus
		r.mu.Unlock()
		for _, g := range gpus {
			o.ObserveInt64(info, 1, metric.WithAttributes(g.attributes()...))
		}
		s, ok := r.sample()
		if !ok {
			return nil
		}
		if s.cpu {
			o.ObserveFloat64(cpu, s.user, user)
			o.ObserveFloat64(cpu, s.sys, system)
		}
		if s.mem {
			o.ObserveInt64(mem, s.rss)
		}
		if s.ended {
			o.ObserveInt64(up, 0)
			o.ObserveInt64(exit, int64(s.exitCode))
		} else {
			o.ObserveInt64(up, 1)
		}
		return nil
	}, cpu, mem, up, exit, info)
}

type sample struct {
	cpu, ended bool
	mem        bool // rss was read
	user, sys  float64
	rss        int64
	exitCode   int
}

// sample reads the process tree while the command runs; the CPU times
// never go back (a process reaped by someone else than its parent, an
// orphan, takes its times with it).
func (r *Rank) sample() (sample, bool) {
	r.mu.Lock()
	pid, ended := r.pid, r.ended
	r.mu.Unlock()
	if pid == 0 && !ended {
		return sample{}, false
	}
	var t Tree
	err := errNoTree
	if !ended && r.proc != "" {
		t, err = ReadTree(r.proc, pid)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.ended && err == nil && t.Processes > 0 {
		r.user, r.sys = max(r.user, t.User), max(r.sys, t.System)
		r.cpuObserved = true
	}
	s := sample{cpu: r.cpuObserved || r.final, ended: r.ended, user: r.user, sys: r.sys, exitCode: r.exitCode}
	switch {
	case r.ended:
		s.mem = true // 0 after the exit
	case err == nil && t.Processes > 0:
		s.rss, s.mem = t.RSS, true
	}
	return s, true
}

// attributes are the GPU's info series attributes: DCGM exporter's label
// names, each with a value.
func (g GPU) attributes() []attribute.KeyValue {
	kvs := make([]attribute.KeyValue, 0, 4)
	for _, kv := range [...]struct{ k, v string }{
		{GPULabelUUID, g.UUID}, {GPULabelIndex, g.Index}, {GPULabelPCIBusID, g.PCIBusID}, {GPULabelHostname, g.Hostname},
	} {
		if kv.v != "" {
			kvs = append(kvs, attribute.String(kv.k, kv.v))
		}
	}
	return kvs
}
