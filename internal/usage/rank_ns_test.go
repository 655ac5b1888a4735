package usage_test

import (
	"context"
	"os"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/nemolens/lens-go/internal/usage"
)

// points collects r once and returns the int64 and float64 data points of
// each metric by name, summed over their attributes.
func points(t *testing.T, r *usage.Rank) map[string]float64 {
	t.Helper()
	reader := metric.NewManualReader()
	mp := metric.NewMeterProvider(metric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	if _, err := r.Register(mp.Meter("test")); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[m.Name] += float64(p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					got[m.Name] += float64(p.Value)
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					got[m.Name] += p.Value
				}
			}
		}
	}
	return got
}

// TestRankWithoutProc: a rank whose proc file system is another PID
// namespace's (NewRank with proc "": docs/usage.md#pid-namespace) observes
// no memory and no running CPU while its command runs, rather than another
// process's or zero; once ended, the exit's rusage and memory 0 as always.
// With this namespace's /proc, the same rank observes the tree's memory.
func TestRankWithoutProc(t *testing.T) {
	t.Parallel()
	none := usage.NewRank("", nil)
	none.Started(os.Getpid())
	got := points(t, none)
	if _, ok := got[usage.MetricMemoryUsage]; ok {
		t.Errorf("%s observed without a proc file system: %v", usage.MetricMemoryUsage, got)
	}
	if _, ok := got[usage.MetricCPUTime]; ok {
		t.Errorf("%s observed without a proc file system: %v", usage.MetricCPUTime, got)
	}
	if got[usage.MetricUp] != 1 {
		t.Errorf("%s = %v, want 1 while the command runs", usage.MetricUp, got[usage.MetricUp])
	}
	none.Ended(0, 1.5, 0.25, true)
	got = points(t, none)
	if v, ok := got[usage.MetricMemoryUsage]; !ok || v != 0 {
		t.Errorf("%s = %v, %v after the exit, want 0", usage.MetricMemoryUsage, v, ok)
	}
	if v := got[usage.MetricCPUTime]; v != 1.75 {
		t.Errorf("%s = %v after the exit, want the rusage's 1.75", usage.MetricCPUTime, v)
	}

	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here:", err)
	}
	live := usage.NewRank("/proc", nil)
	live.Started(os.Getpid())
	if v := points(t, live)[usage.MetricMemoryUsage]; v <= 0 {
		t.Errorf("%s = %v for this process's tree, want its RSS", usage.MetricMemoryUsage, v)
	}
}
