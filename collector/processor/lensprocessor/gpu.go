package lensprocessor

import (
	"context"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/lensconv"
)

// The DCGM exporter's labels on GPU series.
const (
	labelUUID     = "UUID"
	labelGPU      = "gpu"
	labelPCIBusID = "pci_bus_id"
	labelDevice   = "device"
	labelHostname = "Hostname"
	labelMIG      = "GPU_I_ID"
)

// scopeName is the instrumentation scope of the info series.
const scopeName = "github.com/nemolens/lens-go/collector/processor/lensprocessor"

// noNvidiaSMI is a path where no program is: the processor maps GPUs from
// the driver's procfs tree only and never starts nvidia-smi, once per
// process of the node.
const noNvidiaSMI = "/nonexistent/lens-processor-runs-no-nvidia-smi"

// gpuProc is a job process of the node and the GPUs it may use.
type gpuProc struct {
	pid       int
	devs      []detect.GPUDevice
	attrs     *attr.Map
	localRank int64 // -1: unknown
}

// gpuJob is the job holding one GPU, and the labels that say so.
type gpuJob struct {
	dev    detect.GPUDevice
	labels []attr.Entry
}

// gpuSnapshot maps the node's GPUs, by each of DCGM's labels, to their job.
type gpuSnapshot struct {
	byUUID, byMIG, byPCI, byDevice, byIndex map[string]*gpuJob
}

func (s *gpuSnapshot) match(attrs pcommon.Map) *gpuJob {
	if v, ok := attrs.Get(labelUUID); ok {
		u := v.AsString()
		if strings.HasPrefix(u, "MIG-") {
			return s.byMIG[u]
		}
		return s.byUUID[u]
	}
	if v, ok := attrs.Get(labelPCIBusID); ok {
		return s.byPCI[strings.ToUpper(v.AsString())]
	}
	if v, ok := attrs.Get(labelDevice); ok {
		return s.byDevice[v.AsString()]
	}
	if v, ok := attrs.Get(labelGPU); ok {
		return s.byIndex[v.AsString()]
	}
	return nil
}

// gpuIndex keeps the map from the node's GPUs to the jobs holding them,
// rebuilt in the background every refresh_interval from the processes'
// environments (their GPU allocation mapped through the driver's tree by
// detect.VisibleGPUs, as lens maps it). Metric batches read the last map
// and never wait for a scan.
type gpuIndex struct {
	p      *lensProcessor
	procfs string
	snap   atomic.Pointer[gpuSnapshot]

	scanMu sync.Mutex
	seen   map[procKey]*gpuProc // the last scan's processes (nil: no job or no GPU)

	stopCh chan struct{}
	done   chan struct{}
}

func newGPUIndex(p *lensProcessor) *gpuIndex {
	dir := p.cfg.GPU.NvidiaProcfs
	if dir == "" {
		dir = os.Getenv("LENS_NVIDIA_PROCFS")
	}
	if dir == "" {
		dir = p.fs.root + "/driver/nvidia/gpus"
	}
	return &gpuIndex{p: p, procfs: dir, seen: map[procKey]*gpuProc{}}
}

func (g *gpuIndex) start() {
	g.stopCh, g.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(g.done)
		t := time.NewTicker(g.p.cfg.GPU.RefreshInterval)
		defer t.Stop()
		for {
			g.scan(context.Background())
			select {
			case <-g.stopCh:
				return
			case <-t.C:
			}
		}
	}()
}

func (g *gpuIndex) stop() {
	if g.stopCh != nil {
		close(g.stopCh)
		<-g.done
	}
}

// scan reads the node's processes (the new ones: a process's initial
// environment does not change) and rebuilds the snapshot.
func (g *gpuIndex) scan(ctx context.Context) {
	g.scanMu.Lock()
	defer g.scanMu.Unlock()
	fsys := g.p.fs
	pids, err := fsys.pids()
	if err != nil {
		g.p.logger.Debug("lens processor: cannot list processes", zap.Error(err))
		return
	}
	next := make(map[procKey]*gpuProc, len(g.seen))
	jobs := 0
	for _, pid := range pids {
		st, err := fsys.stat(pid)
		if err != nil {
			continue
		}
		k := procKey{pid: pid, start: st.start}
		if gp, ok := g.seen[k]; ok {
			next[k] = gp
			if gp != nil {
				jobs++
			}
			continue
		}
		if jobs >= g.p.cfg.CacheSize {
			continue // bounded: the next scan retries
		}
		gp := g.readProc(ctx, pid)
		next[k] = gp
		if gp != nil {
			jobs++
		}
	}
	g.seen = next
	g.snap.Store(g.build(next))
}

func (g *gpuIndex) readProc(ctx context.Context, pid int) *gpuProc {
	fsys := g.p.fs
	env, err := fsys.environ(pid)
	if err != nil || !detect.InJob(env) {
		return nil
	}
	devs, err := detect.VisibleGPUs(ctx, detect.WithEnv(env), detect.WithNvidiaProcfs(g.procfs),
		detect.WithNvidiaSMI(detect.NvidiaSMI{Path: noNvidiaSMI}))
	if err != nil || len(devs) == 0 {
		return nil
	}
	m, _ := lens.JobAttributes(ctx, env, g.p.cfg.RankFrom,
		detect.WithKubernetesSecretsPath(fsys.path(pid, "root"+detect.DefaultKubernetesSecretsPath)))
	if m.Len() == 0 {
		return nil
	}
	// The device a process of several GPUs uses: its local rank's, as
	// detect.GPU chooses (the launcher's LOCAL_RANK, else SLURM_LOCALID).
	local := int64(-1)
	for _, from := range []string{detect.RankFromTorchrun, detect.RankFromSlurm} {
		kvs, _ := detect.Ranks(env, from)
		for _, kv := range kvs {
			if string(kv.Key) == lensconv.NVDLLocalRank && local < 0 {
				local = kv.Value.AsInt64()
			}
		}
	}
	return &gpuProc{pid: pid, devs: devs, attrs: m, localRank: local}
}

// candidate is one process's claim on a GPU; spec says how sure: 2 the
// process may use that GPU alone, 1 it is the GPU of its local rank, 0 it
// is one of several.
type candidate struct {
	proc *gpuProc
	dev  detect.GPUDevice
	spec int
}

// jobKey names a candidate's job: two processes of one job agree on it.
func jobKey(m *attr.Map) string {
	var b strings.Builder
	for _, k := range []string{lensconv.SlurmJobID, lensconv.NemoRunID, lensconv.K8sPodUID, lensconv.K8sPodName} {
		v, _ := m.Get(k)
		t, _ := v.Text()
		b.WriteString(t)
		b.WriteByte(0)
	}
	return b.String()
}

// build chooses each GPU's job: the candidates of highest spec, which must
// all be of one job (else the GPU gets none); the rank only when they
// agree on it.
func (g *gpuIndex) build(procs map[procKey]*gpuProc) *gpuSnapshot {
	byGPU := map[string][]candidate{}
	for _, gp := range procs {
		if gp == nil {
			continue
		}
		for i, d := range gp.devs {
			spec := 0
			switch {
			case len(gp.devs) == 1:
				spec = 2
			case gp.localRank == int64(i):
				spec = 1
			}
			key := d.UUID
			if d.MIG != "" {
				key = d.MIG
			}
			byGPU[key] = append(byGPU[key], candidate{proc: gp, dev: d, spec: spec})
		}
	}
	s := &gpuSnapshot{byUUID: map[string]*gpuJob{}, byMIG: map[string]*gpuJob{}, byPCI: map[string]*gpuJob{},
		byDevice: map[string]*gpuJob{}, byIndex: map[string]*gpuJob{}}
	for _, cs := range byGPU {
		best := slices.MaxFunc(cs, func(a, b candidate) int { return a.spec - b.spec }).spec
		cs = slices.DeleteFunc(cs, func(c candidate) bool { return c.spec != best })
		slices.SortFunc(cs, func(a, b candidate) int { return a.proc.pid - b.proc.pid })
		key := jobKey(cs[0].proc.attrs)
		sameRank := true
		r0, _ := cs[0].proc.attrs.Get(lensconv.NVDLRank)
		for _, c := range cs[1:] {
			if jobKey(c.proc.attrs) != key {
				key = ""
				break
			}
			if r, _ := c.proc.attrs.Get(lensconv.NVDLRank); !r.Equal(r0) {
				sameRank = false
			}
		}
		if key == "" {
			continue // two jobs claim it: say nothing rather than a guess
		}
		if best == 0 {
			sameRank = false // a process of several GPUs: which one is its rank's is unknown
		}
		j := &gpuJob{dev: cs[0].dev}
		for _, l := range g.p.cfg.GPU.Labels {
			if !sameRank && (l == lensconv.NVDLRank || l == lensconv.NVDLLocalRank) {
				continue
			}
			if v, ok := cs[0].proc.attrs.Get(l); ok {
				j.labels = append(j.labels, attr.Entry{Key: l, Value: v})
			}
		}
		d := j.dev
		if d.MIG != "" {
			s.byMIG[d.MIG] = j
			continue // the GPU's own labels name the whole GPU, not this instance
		}
		s.byUUID[d.UUID] = j
		s.byPCI[strings.ToUpper(d.PCIBusID)] = j
		if dev := d.Device(); dev != "" {
			s.byDevice[dev] = j
		}
		if d.Index >= 0 {
			s.byIndex[strconv.Itoa(d.Index)] = j
		}
	}
	return s
}

// infoPoint is one GPU of the info series of a batch.
type infoPoint struct {
	job      *gpuJob
	uuid     string
	gpu      string
	hostname string
	ts       pcommon.Timestamp
}

// process associates the GPU data points of rm with their jobs: one point
// of the lens.gpu.job info series per GPU (appended to rm in a scope of its
// own) and, with labels_on_points, the job's labels on each point.
func (g *gpuIndex) process(rm pmetric.ResourceMetrics) {
	s := g.snap.Load()
	if s == nil || len(s.byUUID)+len(s.byMIG) == 0 {
		return
	}
	cfg := g.p.cfg.GPU
	var points map[string]*infoPoint
	visit := func(attrs pcommon.Map, ts pcommon.Timestamp) {
		if h, ok := attrs.Get(labelHostname); ok && !g.p.sameHost(h.AsString()) {
			return // another node's GPU
		}
		j := s.match(attrs)
		if j == nil {
			return
		}
		if cfg.LabelsOnPoints {
			for _, e := range j.labels {
				if _, has := attrs.Get(e.Key); !has {
					putValue(attrs, e.Key, e.Value)
				}
			}
		}
		if !cfg.InfoSeries {
			return
		}
		uuid := j.dev.UUID
		if v, ok := attrs.Get(labelUUID); ok {
			uuid = v.AsString()
		}
		if points == nil {
			points = map[string]*infoPoint{}
		}
		ip, ok := points[uuid]
		if !ok {
			ip = &infoPoint{job: j, uuid: uuid, hostname: g.p.hostname}
			if j.dev.Index >= 0 {
				ip.gpu = strconv.Itoa(j.dev.Index)
			}
			if v, ok := attrs.Get(labelGPU); ok {
				ip.gpu = v.AsString()
			}
			if v, ok := attrs.Get(labelHostname); ok {
				ip.hostname = v.AsString()
			}
			points[uuid] = ip
		}
		ip.ts = max(ip.ts, ts)
	}
	sms := rm.ScopeMetrics()
	for i := range sms.Len() {
		sm := sms.At(i)
		if sm.Scope().Name() == scopeName {
			continue
		}
		ms := sm.Metrics()
		for j := range ms.Len() {
			visitMetric(ms.At(j), visit)
		}
	}
	if len(points) == 0 {
		return
	}
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(scopeName)
	m := sm.Metrics().AppendEmpty()
	m.SetName(GPUInfoMetric)
	m.SetDescription("1 for each GPU of this node held by a job; its labels name the job (join on UUID)")
	dps := m.SetEmptyGauge().DataPoints()
	for _, uuid := range slices.Sorted(maps.Keys(points)) {
		ip := points[uuid]
		dp := dps.AppendEmpty()
		dp.SetIntValue(1)
		dp.SetTimestamp(ip.ts)
		a := dp.Attributes()
		a.PutStr(labelUUID, ip.uuid)
		if ip.gpu != "" {
			a.PutStr(labelGPU, ip.gpu)
		}
		a.PutStr(labelHostname, ip.hostname)
		for _, e := range ip.job.labels {
			putValue(a, e.Key, e.Value)
		}
	}
}

// visitMetric calls visit with each data point's attributes and time.
func visitMetric(m pmetric.Metric, visit func(pcommon.Map, pcommon.Timestamp)) {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		visitPoints(m.Gauge().DataPoints(), visit)
	case pmetric.MetricTypeSum:
		visitPoints(m.Sum().DataPoints(), visit)
	case pmetric.MetricTypeHistogram:
		visitPoints(m.Histogram().DataPoints(), visit)
	case pmetric.MetricTypeExponentialHistogram:
		visitPoints(m.ExponentialHistogram().DataPoints(), visit)
	case pmetric.MetricTypeSummary:
		visitPoints(m.Summary().DataPoints(), visit)
	}
}

// dataPoint is what every pmetric data point type has.
type dataPoint interface {
	Attributes() pcommon.Map
	Timestamp() pcommon.Timestamp
}

// visitPoints calls visit with each point of a data point slice.
func visitPoints[P dataPoint](dps interface {
	Len() int
	At(int) P
}, visit func(pcommon.Map, pcommon.Timestamp)) {
	for i := range dps.Len() {
		visit(dps.At(i).Attributes(), dps.At(i).Timestamp())
	}
}
