package lensprocessor

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/nemolens/lens-go/detect"
)

// Two GPUs of one model, in PCI bus order (NVML indices 0 and 1).
var fakeGPUs = []struct{ bus, uuid string }{
	{"0000:18:00.0", "GPU-11111111-aaaa-bbbb-cccc-000000000000"},
	{"0000:3b:00.0", "GPU-22222222-aaaa-bbbb-cccc-000000000001"},
}

// writeDriverTree writes a fake /proc/driver/nvidia/gpus (what nv-procfs.c
// writes: tab-separated "key: value" lines).
func writeDriverTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "gpus")
	for minor, g := range fakeGPUs {
		if err := os.MkdirAll(filepath.Join(dir, g.bus), 0o755); err != nil {
			t.Fatal(err)
		}
		info := fmt.Sprintf("Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 150\nGPU UUID: \t %s\nVideo BIOS: \t 96.00.74.00.01\n"+
			"Bus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t %s\nDevice Minor: \t %d\n", g.uuid, g.bus, minor)
		if err := os.WriteFile(filepath.Join(dir, g.bus, "information"), []byte(info), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func gpuProcessor(t *testing.T, f *fakeProc, onPoints bool) *lensProcessor {
	t.Helper()
	p, _ := testProcessor(t, f, detect.RankFromSlurm, nil)
	p.cfg.GPU.Enabled = true
	p.cfg.GPU.LabelsOnPoints = onPoints
	p.cfg.GPU.NvidiaProcfs = writeDriverTree(t)
	p.gpu = newGPUIndex(p)
	p.gpu.scan(context.Background())
	return p
}

// dcgmBatch is a scrape of DCGM's GPU utilization for both GPUs of host.
func dcgmBatch(host string) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "dcgm")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("DCGM_FI_DEV_GPU_UTIL")
	dps := m.SetEmptyGauge().DataPoints()
	for i, g := range fakeGPUs {
		dp := dps.AppendEmpty()
		dp.SetDoubleValue(50)
		dp.SetTimestamp(1000)
		a := dp.Attributes()
		a.PutStr("UUID", g.uuid)
		a.PutStr("gpu", fmt.Sprint(i))
		a.PutStr("device", fmt.Sprintf("nvidia%d", i))
		a.PutStr("pci_bus_id", "0000"+g.bus)
		a.PutStr("Hostname", host)
		a.PutStr("modelName", "NVIDIA H100 80GB HBM3")
	}
	return md
}

// infoPoints returns the lens.gpu.job points of md by UUID.
func infoPoints(t *testing.T, md pmetric.Metrics) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				if ms.At(k).Name() != GPUInfoMetric {
					continue
				}
				dps := ms.At(k).Gauge().DataPoints()
				for d := range dps.Len() {
					if v := dps.At(d).IntValue(); v != 1 {
						t.Errorf("info value %d, want 1", v)
					}
					a := dps.At(d).Attributes().AsRaw()
					out[fmt.Sprint(a["UUID"])] = a
				}
			}
		}
	}
	return out
}

// The job's step holds the node's second GPU (SLURM_STEP_GPUS=1; CUDA
// numbers it 0 inside the step).
var gpuTaskEnv = func() map[string]string {
	m := maps.Clone(taskEnv)
	m["SLURM_PROCID"] = "0"
	m["SLURM_STEP_GPUS"] = "1"
	m["CUDA_VISIBLE_DEVICES"] = "0"
	return m
}()

func TestGPUInfoSeries(t *testing.T) {
	t.Parallel()
	f := newFakeProc(t)
	f.add(1, 0, 1, plainEnv, "")
	f.add(200, 1, 600, gpuTaskEnv, "")
	f.add(300, 1, 700, plainEnv, "")
	p := gpuProcessor(t, f, false)
	md, err := p.processMetrics(context.Background(), dcgmBatch(node))
	if err != nil {
		t.Fatal(err)
	}
	got := infoPoints(t, md)
	if len(got) != 1 {
		t.Fatalf("info points %v, want one: the held GPU's", got)
	}
	w := map[string]any{"UUID": fakeGPUs[1].uuid, "gpu": "1", "Hostname": node, "slurm.job.id": "4242",
		"nv.dl.job.uuid": got[fakeGPUs[1].uuid]["nv.dl.job.uuid"], "nemo.run.id": "4242", "nv.dl.rank": int64(0), "nv.dl.local_rank": int64(1)}
	if !maps.Equal(got[fakeGPUs[1].uuid], w) || w["nv.dl.job.uuid"] == nil {
		t.Errorf("info point =\n%v\nwant\n%v", got[fakeGPUs[1].uuid], w)
	}
	dps := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Gauge().DataPoints()
	for i := range dps.Len() {
		if _, ok := dps.At(i).Attributes().Get("slurm.job.id"); ok {
			t.Errorf("point %d got the job's labels without labels_on_points", i)
		}
	}
	// Another node's DCGM series.
	md, _ = p.processMetrics(context.Background(), dcgmBatch("node2"))
	if got := infoPoints(t, md); len(got) != 0 {
		t.Errorf("another node's GPUs: %v", got)
	}
}

func TestGPULabelsOnPoints(t *testing.T) {
	t.Parallel()
	f := newFakeProc(t)
	f.add(1, 0, 1, plainEnv, "")
	f.add(200, 1, 600, gpuTaskEnv, "")
	p := gpuProcessor(t, f, true)
	md, _ := p.processMetrics(context.Background(), dcgmBatch(node))
	dps := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Gauge().DataPoints()
	if _, ok := dps.At(0).Attributes().Get("slurm.job.id"); ok {
		t.Error("the free GPU's point got a job")
	}
	if v, _ := dps.At(1).Attributes().Get("slurm.job.id"); v.AsString() != "4242" {
		t.Errorf("the held GPU's point: %v", dps.At(1).Attributes().AsRaw())
	}
}

// TestGPUOwnership: a process of several GPUs gives its rank to its local
// rank's GPU only; two jobs claiming one GPU give it none; a reused pid is
// read again.
func TestGPUOwnership(t *testing.T) {
	t.Parallel()
	f := newFakeProc(t)
	f.add(1, 0, 1, plainEnv, "")
	both := maps.Clone(taskEnv) // a torchrun worker seeing both GPUs, local rank 1
	both["SLURM_JOB_GPUS"] = "0,1"
	both["SLURM_PROCID"] = "5"
	both["SLURM_NTASKS"] = "8" // rank 5 of 8 (of 2, detect.Ranks refuses it)
	both["SLURM_LOCALID"] = "1"
	f.add(200, 1, 600, both, "")
	p := gpuProcessor(t, f, false)
	md, _ := p.processMetrics(context.Background(), dcgmBatch(node))
	got := infoPoints(t, md)
	if got[fakeGPUs[1].uuid]["nv.dl.rank"] != int64(5) {
		t.Errorf("local rank 1's GPU: %v", got[fakeGPUs[1].uuid])
	}
	if g0 := got[fakeGPUs[0].uuid]; g0["slurm.job.id"] != "4242" || g0["nv.dl.rank"] != nil {
		t.Errorf("the other GPU: %v, want the job without a rank", g0)
	}

	other := maps.Clone(gpuTaskEnv)
	other["SLURM_JOB_ID"] = "5353"
	f.add(300, 1, 700, other, "") // claims GPU 1 alone too, with more certainty
	f.add(301, 1, 701, gpuTaskEnv, "")
	p.gpu.scan(context.Background())
	md, _ = p.processMetrics(context.Background(), dcgmBatch(node))
	if g1, ok := infoPoints(t, md)[fakeGPUs[1].uuid]; ok {
		t.Errorf("two jobs hold GPU 1 alone: %v, want no info point", g1)
	}

	f.remove(300)
	f.add(301, 1, 9999, plainEnv, "") // pid 301 reused outside any job
	p.gpu.scan(context.Background())
	md, _ = p.processMetrics(context.Background(), dcgmBatch(node))
	if g1 := infoPoints(t, md)[fakeGPUs[1].uuid]; g1["nv.dl.rank"] != int64(5) {
		t.Errorf("after both ended: %v, want the worker's rank again", g1)
	}
}
