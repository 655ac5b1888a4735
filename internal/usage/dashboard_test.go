package usage

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// promoted are the resource attributes the recommended Prometheus
// configuration promotes to labels (docs/backends.md#prometheus-config,
// e2e/internal/prometheus/prometheus.yml), as Prometheus names them.
var promoted = []string{"nemo_run_id", "nv_dl_rank", "nv_dl_world_size", "nv_dl_local_rank",
	"nv_dl_topology_size_tp", "nv_dl_topology_size_pp", "nv_dl_topology_size_dp", "slurm_job_id", "job", "instance"}

// promName is the Prometheus 3 name of an OTLP metric under its default
// translation (UnderscoreEscapingWithSuffixes: docs/backends.md#label-names):
// every character outside [a-zA-Z0-9_:] becomes _, the unit's suffix, and
// _total for a monotonic sum. Units other than s and By fail: this
// translation does not know them.
func promName(t *testing.T, m metricdata.Metrics) string {
	t.Helper()
	name := regexp.MustCompile(`[^a-zA-Z0-9_:]`).ReplaceAllString(m.Name, "_")
	switch m.Unit {
	case "":
	case "s":
		name += "_seconds"
	case "By":
		name += "_bytes"
	default:
		t.Fatalf("%s: unit %q unknown to this test", m.Name, m.Unit)
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[float64]:
		if d.IsMonotonic {
			name += "_total"
		}
	case metricdata.Sum[int64]:
		if d.IsMonotonic {
			name += "_total"
		}
	}
	return name
}

// exportedSeries collects the metrics lens exec exports for one rank
// (Register, as cmd/lens/execmetrics.go registers them) and returns each
// one's Prometheus name with its label names: the escaped attributes and
// the promoted resource labels.
func exportedSeries(t *testing.T) map[string][]string {
	t.Helper()
	r := NewRank("/proc", []GPU{{UUID: "GPU-1", Index: "0", PCIBusID: "00000000:07:00.0", Hostname: "n1"}})
	r.Started(os.Getpid())
	r.Ended(0, 1, 1, true)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	if _, err := r.Register(mp.Meter("lens")); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	escape := regexp.MustCompile(`[^a-zA-Z0-9_]`)
	out := map[string][]string{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			labels := slices.Clone(promoted)
			switch d := m.Data.(type) {
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					for _, kv := range p.Attributes.ToSlice() {
						labels = append(labels, escape.ReplaceAllString(string(kv.Key), "_"))
					}
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					for _, kv := range p.Attributes.ToSlice() {
						labels = append(labels, escape.ReplaceAllString(string(kv.Key), "_"))
					}
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					for _, kv := range p.Attributes.ToSlice() {
						labels = append(labels, escape.ReplaceAllString(string(kv.Key), "_"))
					}
				}
			default:
				t.Fatalf("%s: data %T unknown to this test", m.Name, m.Data)
			}
			out[promName(t, m)] = labels
		}
	}
	return out
}

// dcgm are the DCGM exporter series and labels the dashboard may join
// (docs/backends.md#gpu-join).
var dcgm = map[string][]string{"DCGM_FI_DEV_GPU_UTIL": {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"}}

// TestDashboardQueries reads examples/grafana/lens-ranks.json and checks
// each query against the series lens exec exports (their Prometheus names
// and labels, computed here from what Register collects) and DCGM
// exporter's: every metric it names exists, every label it groups or joins
// by is one of that metric's, every lens series is selected by the
// multi-valued run variable (nemo_run_id=~"$run") and grouped by run and
// rank, so that several runs show side by side; one panel says which GPU
// each rank used, from lens_exec_gpu_info. Breaks (on 91b90a8's file):
// nemo_run_id="$run", a single-select run variable, grouping by
// nv_dl_rank alone, no GPU-of-each-rank panel; a metric renamed in
// keys.go.
func TestDashboardQueries(t *testing.T) {
	series := exportedSeries(t)
	for _, want := range []string{"lens_exec_up", "lens_exec_exit_code", "lens_exec_gpu_info", "process_cpu_time_seconds_total", "process_memory_usage_bytes"} {
		if _, ok := series[want]; !ok {
			t.Errorf("lens exec exports no %s (it exports %v): docs/usage.md#metrics names it", want, slices.Sorted(maps.Keys(series)))
		}
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "grafana", "lens-ranks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Templating struct {
			List []struct {
				Name, Type, Definition string
				Multi                  bool
			}
		}
		Panels []struct {
			Title   string
			Targets []struct{ Expr, LegendFormat string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	run := false
	for _, v := range d.Templating.List {
		if v.Name != "run" {
			continue
		}
		run = true
		m := regexp.MustCompile(`^label_values\((\w+), *(\w+)\)$`).FindStringSubmatch(v.Definition)
		if !v.Multi || m == nil || !slices.Contains(series[m[1]], m[2]) || m[2] != "nemo_run_id" {
			t.Errorf("the run variable: multi %v, %q; want several runs of label_values(LENS_SERIES, nemo_run_id)", v.Multi, v.Definition)
		}
	}
	if !run {
		t.Error("no run variable")
	}
	lists := regexp.MustCompile(`\b(by|on|without|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	selector := regexp.MustCompile(`\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?`)
	gpuPanel := false
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			expr := target.Expr
			var grouped [][]string
			for _, m := range lists.FindAllStringSubmatch(expr, -1) {
				var names []string
				for _, n := range strings.Split(m[2], ",") {
					if n = strings.TrimSpace(n); n != "" {
						names = append(names, n)
					}
				}
				grouped = append(grouped, names)
			}
			rest := lists.ReplaceAllString(regexp.MustCompile(`\[[^\]]*\]`).ReplaceAllString(expr, ""), "$1")
			var lensMetrics, all []string
			for _, m := range selector.FindAllStringSubmatchIndex(rest, -1) {
				name := rest[m[2]:m[3]]
				after := strings.TrimLeft(rest[m[3]:], " ")
				if strings.HasPrefix(after, "(") || strings.HasPrefix(after, "by") || strings.HasPrefix(after, "without") ||
					slices.Contains([]string{"by", "on", "without", "ignoring", "group_left", "group_right"}, name) {
					continue // a function, an aggregation (max by …), a keyword
				}
				sel := ""
				if m[4] >= 0 {
					sel = rest[m[4]:m[5]]
				}
				switch {
				case series[name] != nil:
					lensMetrics = append(lensMetrics, name)
					if sel != `{nemo_run_id=~"$run"}` {
						t.Errorf("panel %q: %s%s; want the runs' series, {nemo_run_id=~\"$run\"}", p.Title, name, sel)
					}
				case dcgm[name] != nil:
				default:
					t.Errorf("panel %q: %s is a series neither lens exec nor DCGM exporter exports (%q)", p.Title, name, expr)
					continue
				}
				all = append(all, name)
			}
			if len(lensMetrics) == 0 {
				t.Errorf("panel %q: %q selects no series of lens exec", p.Title, expr)
			}
			for _, names := range grouped {
				for _, n := range names {
					ok := false
					for _, m := range all {
						ok = ok || slices.Contains(series[m], n) || slices.Contains(dcgm[m], n)
					}
					if !ok {
						t.Errorf("panel %q: label %s is no label of %v", p.Title, n, all)
					}
				}
			}
			if len(grouped) == 0 || !slices.Contains(grouped[0], "nemo_run_id") || !slices.Contains(grouped[0], "nv_dl_rank") {
				t.Errorf("panel %q: %q is not grouped by run and rank (runs side by side)", p.Title, expr)
			}
			if !strings.Contains(target.LegendFormat, "{{nemo_run_id}}") {
				t.Errorf("panel %q: legend %q does not name the run", p.Title, target.LegendFormat)
			}
			if slices.Equal(lensMetrics, []string{"lens_exec_gpu_info"}) && len(all) == 1 &&
				slices.Contains(grouped[0], "gpu") && slices.Contains(grouped[0], "UUID") && slices.Contains(grouped[0], "Hostname") {
				gpuPanel = true
			}
		}
	}
	if !gpuPanel {
		t.Error("no panel says which GPU each rank used (lens_exec_gpu_info by run, rank, Hostname, gpu and UUID)")
	}
}
