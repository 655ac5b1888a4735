//go:build linux

package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/internal/usage"
)

// consoleMetric is one metric of a stdoutmetric export: its data points'
// attributes (as key=value) and values.
type consoleMetric struct {
	Name string
	Data struct {
		DataPoints []struct {
			Attributes []struct {
				Key   string
				Value struct{ Value any }
			}
			Value float64
		}
	}
}

// consoleExports decodes the console metric exporter's exports among the
// other lines of stderr: one map from metric name to the metric per export.
func consoleExports(t *testing.T, stderr string) []map[string]consoleMetric {
	t.Helper()
	var out []map[string]consoleMetric
	for rest := stderr; ; {
		i := strings.Index(rest, `{"Resource"`)
		if i < 0 {
			return out
		}
		dec := json.NewDecoder(strings.NewReader(rest[i:]))
		var rm struct {
			ScopeMetrics []struct{ Metrics []consoleMetric }
		}
		if err := dec.Decode(&rm); err != nil {
			t.Fatalf("console metrics in %q: %v", stderr, err)
		}
		m := map[string]consoleMetric{}
		for _, sm := range rm.ScopeMetrics {
			for _, x := range sm.Metrics {
				m[x.Name] = x
			}
		}
		out = append(out, m)
		rest = rest[i+int(dec.InputOffset()):]
	}
}

// TestExecMetrics: lens exec exports the per-rank metrics only when
// OTEL_METRICS_EXPORTER asks for otlp or console (docs/usage.md#metrics);
// the last export says the command is no longer up, its exit status, and
// carries the GPU info series with DCGM exporter's label names.
func TestExecMetrics(t *testing.T) {
	t.Parallel()
	const gpuCarrier = "nv.dl.rank=1,nv.gpu.uuid=GPU-5f1c,nv.gpu.index=3,nv.gpu.pci_bus_id=00000000:3B:00.0"
	for _, tc := range []struct {
		name       string
		env        map[string]string
		metrics    bool
		spans      int
		stderrHint string
	}{
		{"console, traces off", map[string]string{"OTEL_METRICS_EXPORTER": "console", "NEMO_LENS_TRACES_ENABLED": "false"}, true, 0, ""},
		{"console, traces on", map[string]string{"OTEL_METRICS_EXPORTER": " Console "}, true, 1, ""},
		{"not asked for", map[string]string{}, false, 1, ""},
		{"none", map[string]string{"OTEL_METRICS_EXPORTER": "none"}, false, 1, ""},
		{"metrics disabled", map[string]string{"OTEL_METRICS_EXPORTER": "console", "NEMO_LENS_METRICS_ENABLED": "false"}, false, 1, ""},
		{"an exporter lens lacks", map[string]string{"OTEL_METRICS_EXPORTER": "prometheus"}, false, 1, `OTEL_METRICS_EXPORTER="prometheus": lens exec exports its metrics with otlp or console only`},
		// The probe's GPU (the fake driver tree's GPU 1) replaces the carrier's.
		{"probed GPU", map[string]string{"OTEL_METRICS_EXPORTER": "console", "LENS_NVIDIA_PROCFS": "testdata/gpu/gpus", "CUDA_VISIBLE_DEVICES": "1"}, true, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{
				"NEMO_LENS_ENABLED":           "true",
				"NEMO_LENS_EXPORTER":          "console",
				"OTEL_METRIC_EXPORT_INTERVAL": "60000", // only the last export, at exit
				"CUDA_VISIBLE_DEVICES":        "",
				carrier.EnvVar:                gpuCarrier,
			}
			env["LENS_NVIDIA_PROCFS"] = t.TempDir() // no driver: the carrier's GPU
			for k, v := range tc.env {
				env[k] = v
			}
			if p := env["LENS_NVIDIA_PROCFS"]; !filepath.IsAbs(p) {
				env["LENS_NVIDIA_PROCFS"] = testdataPath(t, strings.TrimPrefix(p, "testdata/"))
			}
			wantInfo := map[string]string{"UUID": "GPU-5f1c", "gpu": "3", "pci_bus_id": "00000000:3B:00.0"}
			if tc.env["LENS_NVIDIA_PROCFS"] != "" {
				wantInfo = map[string]string{"UUID": testGPU1, "gpu": "1", "pci_bus_id": "00000000:0F:00.0"}
			}
			r := runBin(t, helperEnv("exit=3", env), "", "exec", "--", self(t))
			if r.code != 3 {
				t.Fatalf("lens exec: %v", r)
			}
			n := 0
			for _, s := range consoleSpans(t, r.stderr) { // the metrics' scopes and names decode as spans too
				if strings.HasPrefix(s.Name, "lens exec ") {
					n++
				}
			}
			if n != tc.spans {
				t.Errorf("%d spans, want %d: %s", n, tc.spans, r.stderr)
			}
			if tc.stderrHint != "" && !strings.Contains(r.stderr, tc.stderrHint) {
				t.Errorf("stderr %q lacks %q", r.stderr, tc.stderrHint)
			}
			exports := consoleExports(t, r.stderr)
			if !tc.metrics {
				if len(exports) != 0 {
					t.Errorf("%d metric exports, want none: %s", len(exports), r.stderr)
				}
				return
			}
			if len(exports) != 1 {
				t.Fatalf("%d metric exports, want the last one only: %s", len(exports), r.stderr)
			}
			m := exports[0]
			value := func(name string) []float64 {
				var vs []float64
				for _, dp := range m[name].Data.DataPoints {
					vs = append(vs, dp.Value)
				}
				return vs
			}
			if got := value(usage.MetricUp); len(got) != 1 || got[0] != 0 {
				t.Errorf("%s = %v, want [0] after the exit", usage.MetricUp, got)
			}
			if got := value(usage.MetricExitCode); len(got) != 1 || got[0] != 3 {
				t.Errorf("%s = %v, want [3]", usage.MetricExitCode, got)
			}
			if got := value(usage.MetricMemoryUsage); len(got) != 1 || got[0] != 0 {
				t.Errorf("%s = %v, want [0] once no process is left", usage.MetricMemoryUsage, got)
			}
			modes := map[string]bool{}
			for _, dp := range m[usage.MetricCPUTime].Data.DataPoints {
				for _, a := range dp.Attributes {
					if a.Key == "cpu.mode" {
						modes[a.Value.Value.(string)] = true
					}
				}
				if dp.Value < 0 {
					t.Errorf("%s = %v", usage.MetricCPUTime, dp.Value)
				}
			}
			if !modes["user"] || !modes["system"] || len(modes) != 2 {
				t.Errorf("%s modes %v, want user and system", usage.MetricCPUTime, modes)
			}
			info := m[usage.MetricGPUInfo].Data.DataPoints
			if len(info) != 1 || info[0].Value != 1 {
				t.Fatalf("%s: %+v, want one point of value 1", usage.MetricGPUInfo, info)
			}
			labels := map[string]any{}
			for _, a := range info[0].Attributes {
				labels[a.Key] = a.Value.Value
			}
			for k, want := range wantInfo {
				if labels[k] != want {
					t.Errorf("%s label %s = %v, want %q (all: %v)", usage.MetricGPUInfo, k, labels[k], want, labels)
				}
			}
			if h, _ := labels["Hostname"].(string); h == "" {
				t.Errorf("%s has no Hostname: %v", usage.MetricGPUInfo, labels)
			}
		})
	}
}

// TestExecMetricsWithoutTraces: with metrics on and traces off, lens exec
// records no span, so the command gets lens's TRACEPARENT and TRACESTATE
// unchanged (as without telemetry).
func TestExecMetricsWithoutTraces(t *testing.T) {
	t.Parallel()
	const parent, state = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "vendor=x"
	r := runBin(t, helperEnv("env", map[string]string{
		"NEMO_LENS_ENABLED":           "true",
		"NEMO_LENS_EXPORTER":          "console",
		"NEMO_LENS_TRACES_ENABLED":    "false",
		"OTEL_METRICS_EXPORTER":       "console",
		"OTEL_METRIC_EXPORT_INTERVAL": "60000",
		"LENS_NVIDIA_PROCFS":          t.TempDir(),
		"TRACEPARENT":                 parent,
		"TRACESTATE":                  state,
	}), "", "exec", "--", self(t))
	if r.code != 0 {
		t.Fatalf("lens exec: %v", r)
	}
	got := childEnviron(t, r.stdout)
	if got["TRACEPARENT"] != parent || got["TRACESTATE"] != state {
		t.Errorf("child TRACEPARENT %q, TRACESTATE %q; want lens's %q, %q", got["TRACEPARENT"], got["TRACESTATE"], parent, state)
	}
	if n := len(consoleExports(t, r.stderr)); n != 1 {
		t.Errorf("%d metric exports, want 1: %s", n, r.stderr)
	}
}

// TestProbedGPUsIndexZero: the probe's GPU of NVML index 0 gets gpu="0"
// on its info series; one of unknown index (-1) none, and one without a
// UUID no series (break: `d.Index >= 0` as `> 0` in probedGPUs).
func TestProbedGPUsIndexZero(t *testing.T) {
	t.Parallel()
	got := probedGPUs([]detect.GPUDevice{
		{Index: 0, UUID: "GPU-a", PCIBusID: "00000000:0A:00.0"},
		{Index: -1, UUID: "GPU-b"},
		{Index: 2},
	}, "n1")
	want := []usage.GPU{
		{UUID: "GPU-a", Index: "0", PCIBusID: "00000000:0A:00.0", Hostname: "n1"},
		{UUID: "GPU-b", Hostname: "n1"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("probedGPUs = %+v, want %+v", got, want)
	}
}
