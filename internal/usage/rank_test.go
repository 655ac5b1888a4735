package usage

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// rankReader registers r on a meter provider with a manual reader.
func rankReader(t *testing.T, r *Rank) *sdkmetric.ManualReader {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	if _, err := r.Register(mp.Meter("t")); err != nil {
		t.Fatal(err)
	}
	return reader
}

// collect returns the data points of the metric name.
func collect[N int64 | float64](t *testing.T, reader *sdkmetric.ManualReader, name string) []metricdata.DataPoint[N] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[N]:
				return d.DataPoints
			case metricdata.Gauge[N]:
				return d.DataPoints
			}
		}
	}
	return nil
}

// cpuTimes are process.cpu.time's user and system values now.
func cpuTimes(t *testing.T, reader *sdkmetric.ManualReader) (user, system float64) {
	t.Helper()
	for _, dp := range collect[float64](t, reader, MetricCPUTime) {
		switch mode, _ := dp.Attributes.Value("cpu.mode"); mode.AsString() {
		case "user":
			user = dp.Value
		case "system":
			system = dp.Value
		}
	}
	return user, system
}

// writeStat writes /proc/PID/stat of a fake /proc with utime and stime
// in clock ticks.
func writeStat(t *testing.T, proc, pid string, ppid, utime, stime int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
		t.Fatal(err)
	}
	line := pid + " (x) S " + strconv.Itoa(ppid) + " 0 0 0 -1 0 0 0 0 0 " + strconv.Itoa(utime) + " " + strconv.Itoa(stime) + " 0 0 20 0 1 0 1 0 10 0"
	if err := os.WriteFile(filepath.Join(proc, pid, "stat"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRankCPUTimeNeverGoesBack: process.cpu.time is a counter
// (docs/usage.md#metrics): when the tree read from /proc counts less than
// before (a child ended and no one waited for it, so its time left the
// tree), or the exit's rusage is below the last sample, it keeps its
// largest value; a larger exit rusage is its last value (break: any of the
// max calls in Rank.sample or Rank.Ended as a plain assignment).
func TestRankCPUTimeNeverGoesBack(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	writeStat(t, proc, "100", 1, 300, 100) // 3 s user, 1 s system
	writeStat(t, proc, "101", 100, 200, 100)
	r := NewRank(proc, nil)
	reader := rankReader(t, r)
	if u, s := cpuTimes(t, reader); u != 0 || s != 0 {
		t.Fatalf("before the start: user %v system %v, want no observation", u, s)
	}
	r.Started(100)
	if u, s := cpuTimes(t, reader); u != 5 || s != 2 {
		t.Fatalf("the tree: user %v system %v, want 5 and 2", u, s)
	}
	if err := os.RemoveAll(filepath.Join(proc, "101")); err != nil { // its time left the tree
		t.Fatal(err)
	}
	if u, s := cpuTimes(t, reader); u != 5 || s != 2 {
		t.Errorf("after a child left: user %v system %v, want still 5 and 2", u, s)
	}
	r.Ended(0, 4, 1.5, true) // below the last sample
	if u, s := cpuTimes(t, reader); u != 5 || s != 2 {
		t.Errorf("after an exit rusage below the samples: user %v system %v, want still 5 and 2", u, s)
	}
	r2 := NewRank(proc, nil)
	reader2 := rankReader(t, r2)
	r2.Started(100)
	cpuTimes(t, reader2) // 3 and 1
	r2.Ended(0, 7, 3, true)
	if u, s := cpuTimes(t, reader2); u != 7 || s != 3 {
		t.Errorf("after an exit rusage above the samples: user %v system %v, want 7 and 3", u, s)
	}
}

// TestRankGPUInfoIndexZero: the GPU info series of the GPU whose NVML
// index is 0 carries gpu="0", as DCGM exporter labels it; a GPU of unknown
// index carries no gpu label (break: an empty-or-"0" test in
// GPU.attributes).
func TestRankGPUInfoIndexZero(t *testing.T) {
	t.Parallel()
	r := NewRank(t.TempDir(), []GPU{
		{UUID: "GPU-a", Index: "0", PCIBusID: "00000000:0A:00.0", Hostname: "n1"},
		{UUID: "GPU-b", Hostname: "n1"},
	})
	reader := rankReader(t, r)
	got := map[string]*attribute.Set{}
	for _, dp := range collect[int64](t, reader, MetricGPUInfo) {
		attrs := dp.Attributes
		uuid, _ := attrs.Value(GPULabelUUID)
		got[uuid.AsString()] = &attrs
	}
	if len(got) != 2 || got["GPU-a"] == nil || got["GPU-b"] == nil {
		t.Fatalf("info series %v, want one of GPU-a and one of GPU-b", got)
	}
	if idx, ok := got["GPU-a"].Value(GPULabelIndex); !ok || idx.AsString() != "0" {
		t.Errorf("GPU-a (index 0): %v, want gpu=\"0\"", got["GPU-a"].ToSlice())
	}
	if _, ok := got["GPU-b"].Value(GPULabelIndex); ok {
		t.Errorf("GPU-b (no index): %v, want no gpu label", got["GPU-b"].ToSlice())
	}
}
