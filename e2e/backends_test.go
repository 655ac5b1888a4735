package e2e_test

// Metrics and logs in real backends: two runs of a Lens-instrumented
// program (cmd/signals: lens.FromEnv, lens.Setup, one counter, one slog
// record, Shutdown) export their metrics over OTLP/HTTP to a real
// Prometheus 3.x and their logs to a real OpenTelemetry Collector that
// stores them (tools/jaeger/otelcol, file exporter). The test then does
// what a Grafana dashboard does — list the run ids for a variable, select
// one run — and reads the log records back with their resource.
//
// Every expected value comes from what the test chose (run ids, Slurm
// variables, the carrier), the rules of docs/resource.md#service-instance-id
// and docs/backends.md#label-names (Prometheus's underscore escaping,
// re-implemented here as promLabel), os.Hostname and the pids the test saw;
// none from lens-go's code.
//
// Gating: the Prometheus and collector binaries (PROMETHEUS_BIN / OTELCOL_BIN
// or <repo>/.bin/{prometheus,otelcol}, built by scripts/build-backends.sh).
// Without them the test skips, or fails when CI=true.
//
//	cd e2e && go test -race -run Backends -v .

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/otelcol"
	"github.com/nemolens/lens-go/e2e/internal/prometheus"
)

// signalsRun is one run of cmd/signals as the test chose it.
type signalsRun struct {
	runID                  string
	jobID                  string
	rank, worldSize, local int
	tp, pp, dp             int
	steps                  int
	pid                    int // set once it ran
}

const signalsService = "lens-e2e-signals"

// promLabel is Prometheus's label name for an OTLP attribute under its default
// translation strategy (UnderscoreEscapingWithSuffixes): every character
// outside [a-zA-Z0-9_] becomes "_" (docs/backends.md#label-names).
func promLabel(key string) string {
	return regexp.MustCompile(`[^a-zA-Z0-9_]`).ReplaceAllString(key, "_")
}

// attrs are the run's resource attributes the test chose, as strings.
func (r signalsRun) attrs() map[string]string {
	return map[string]string{
		"nemo.run.id":            r.runID,
		"slurm.job.id":           r.jobID,
		"nv.dl.rank":             strconv.Itoa(r.rank),
		"nv.dl.world_size":       strconv.Itoa(r.worldSize),
		"nv.dl.local_rank":       strconv.Itoa(r.local),
		"nv.dl.topology.size.tp": strconv.Itoa(r.tp),
		"nv.dl.topology.size.pp": strconv.Itoa(r.pp),
		"nv.dl.topology.size.dp": strconv.Itoa(r.dp),
	}
}

// instance is Prometheus's instance label: service.instance.id, which Lens
// derives as "{run_id}-rank{rank}" (docs/resource.md#service-instance-id).
func (r signalsRun) instance() string { return r.runID + "-rank" + strconv.Itoa(r.rank) }

func (r signalsRun) env(prom *prometheus.Prometheus, col *otelcol.Collector) []string {
	return lensEnv(os.Environ(),
		"NEMO_LENS_ENABLED=true",
		"NEMO_LENS_TRACES_ENABLED=false",
		"NEMO_LENS_LOGS_ENABLED=true",
		"NEMO_LENS_RUN_ID="+r.runID,
		"OTEL_SERVICE_NAME="+signalsService,
		"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=http/protobuf",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT="+prom.OTLPMetricsURL(),
		"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL=http/protobuf",
		"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT="+col.OTLPLogsURL(),
		// Short, but Shutdown's final collection is what exports the counter.
		"OTEL_METRIC_EXPORT_INTERVAL=1000",
		// A Slurm task's variables (lens.WithRankFrom("slurm") reads the ranks).
		"SLURM_JOB_ID="+r.jobID,
		"SLURM_PROCID="+strconv.Itoa(r.rank),
		"SLURM_NTASKS="+strconv.Itoa(r.worldSize),
		"SLURM_LOCALID="+strconv.Itoa(r.local),
		// The parallelism layout, as a launcher hands it down in the carrier.
		fmt.Sprintf("OTEL_RESOURCE_ATTRIBUTES=nv.dl.topology.size.tp=%d,nv.dl.topology.size.pp=%d,nv.dl.topology.size.dp=%d", r.tp, r.pp, r.dp),
	)
}

func TestBackendsMetricsAndLogs(t *testing.T) {
	prom := prometheus.StartForTest(t)
	col := otelcol.StartForTest(t)
	bin := builtBinary(t, "signals", moduleDir(), "./cmd/signals")

	pid := os.Getpid()
	runs := []*signalsRun{
		{runID: fmt.Sprintf("e2e-run-a-%d", pid), jobID: "7001", rank: 1, worldSize: 2, local: 1, tp: 2, pp: 1, dp: 1, steps: 3},
		{runID: fmt.Sprintf("e2e-run-b-%d", pid), jobID: "7002", rank: 0, worldSize: 4, local: 0, tp: 1, pp: 2, dp: 2, steps: 5},
	}
	for _, r := range runs {
		start := time.Now()
		cmd := exec.Command(bin, "-steps", strconv.Itoa(r.steps))
		cmd.Env = r.env(prom, col)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("signals run %s: %v\n%s", r.runID, err, out)
		}
		r.pid = cmd.Process.Pid
		t.Logf("run %s: pid %d, %v; output: %q", r.runID, r.pid, time.Since(start).Round(time.Millisecond), out)
	}
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}

	// No wait before the queries: Prometheus's OTLP receiver commits the
	// samples before it answers the export, and Shutdown returned only after
	// that answer. The log receiver's file is flushed later (WaitRecords).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const metric = "lens_e2e_steps_total" // lens.e2e.steps, a monotonic counter: _total
	wantIDs := []string{runs[0].runID, runs[1].runID}
	sort.Strings(wantIDs)

	t.Run("dashboard variable lists the runs", func(t *testing.T) {
		// Grafana: label_values(lens_e2e_steps_total, nemo_run_id) and, for
		// metrics without promoted attributes, label_values(target_info, nemo_run_id).
		for _, match := range []string{metric, "target_info"} {
			got, err := prom.LabelValues(ctx, "nemo_run_id", match)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, wantIDs) {
				t.Errorf("label_values(%s, nemo_run_id) = %q, want %q", match, got, wantIDs)
			}
		}
	})

	t.Run("query one run", func(t *testing.T) {
		for _, r := range runs {
			q := fmt.Sprintf(`%s{nemo_run_id=%q}`, metric, r.runID)
			got, err := prom.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("%s: %d series, want 1: %+v", q, len(got), got)
			}
			want := map[string]string{"__name__": metric, "job": signalsService, "instance": r.instance()}
			for k, v := range r.attrs() {
				want[promLabel(k)] = v
			}
			for k, v := range want {
				if g, ok := got[0].Metric[k]; !ok || g != v {
					t.Errorf("%s: label %s = %q (present %v), want %q; all labels: %v", q, k, g, ok, v, got[0].Metric)
				}
			}
			if v := got[0].ValueString(); v != strconv.Itoa(r.steps) {
				t.Errorf("%s = %s, want %d", q, v, r.steps)
			}
		}
	})

	// Each Lens attribute, used as a filter, selects exactly the run that has
	// the value (the two runs differ in every one of them).
	t.Run("attributes filter", func(t *testing.T) {
		for _, key := range []string{"nv.dl.rank", "nv.dl.world_size", "nv.dl.local_rank", "slurm.job.id",
			"nv.dl.topology.size.tp", "nv.dl.topology.size.pp", "nv.dl.topology.size.dp"} {
			for _, r := range runs {
				value := r.attrs()[key]
				for _, form := range []string{
					fmt.Sprintf(`%s{%s=%q}`, metric, promLabel(key), value),                                                // promoted label
					fmt.Sprintf(`%s * on (job, instance) group_left () target_info{%s=%q}`, metric, promLabel(key), value), // target_info join
				} {
					got, err := prom.Query(ctx, form)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != 1 || got[0].Metric["instance"] != r.instance() || got[0].ValueString() != strconv.Itoa(r.steps) {
						t.Errorf("%s: got %+v, want one series of run %s (instance %s) with value %d", form, got, r.runID, r.instance(), r.steps)
					}
				}
			}
		}
	})

	t.Run("logs with the same resource", func(t *testing.T) {
		byRun := func(recs []otelcol.Record) map[string][]otelcol.Record {
			m := map[string][]otelcol.Record{}
			for _, rec := range recs {
				if v := rec.Resource["nemo.run.id"]; v.Str != nil {
					m[*v.Str] = append(m[*v.Str], rec)
				}
			}
			return m
		}
		// Wait for both processes' records (the exporter writes its file
		// after the export has returned), then check whose they are.
		recs, err := col.WaitRecords(ctx, func(recs []otelcol.Record) bool {
			n := 0
			for _, rec := range recs {
				if rec.Body.Typed() == "string:steps done" {
					n++
				}
			}
			return n >= len(runs)
		})
		if err != nil {
			t.Fatal(err)
		}
		m := byRun(recs)
		if len(m) != 2 || len(recs) != 2 {
			t.Errorf("stored %d records of %d runs, want one record of each of the 2 runs: %+v", len(recs), len(m), recs)
		}
		for _, r := range runs {
			if len(m[r.runID]) != 1 {
				t.Errorf("run %s: %d records, want 1", r.runID, len(m[r.runID]))
				continue
			}
			rec := m[r.runID][0]
			if got := rec.Body.Typed(); got != "string:steps done" {
				t.Errorf("run %s: body %s, want string:steps done", r.runID, got)
			}
			if got := rec.Attributes["steps"].Typed(); got != "int:"+strconv.Itoa(r.steps) {
				t.Errorf("run %s: attribute steps %s, want int:%d", r.runID, got, r.steps)
			}
			want := map[string]string{
				"service.name":        "string:" + signalsService,
				"service.instance.id": "string:" + r.instance(),
				"nemo.run.id":         "string:" + r.runID,
				"slurm.job.id":        "string:" + r.jobID,
				"host.name":           "string:" + hostname,
				"process.pid":         "int:" + strconv.Itoa(r.pid),
			}
			for _, k := range []string{"nv.dl.rank", "nv.dl.world_size", "nv.dl.local_rank",
				"nv.dl.topology.size.tp", "nv.dl.topology.size.pp", "nv.dl.topology.size.dp"} {
				want[k] = "int:" + r.attrs()[k]
			}
			for k, v := range want {
				if got := rec.Resource[k].Typed(); got != v {
					t.Errorf("run %s: log resource %s = %s, want %s", r.runID, k, got, v)
				}
			}

			// The same resource as the metrics': target_info carries every
			// resource attribute but service.name and service.instance.id
			// (those are job and instance) as a label.
			q := fmt.Sprintf(`target_info{instance=%q}`, r.instance())
			got, err := prom.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("%s: %d series, want 1: %+v", q, len(got), got)
			}
			fromLog := map[string]string{"__name__": "target_info", "job": signalsService, "instance": r.instance()}
			for k, v := range rec.Resource {
				if k == "service.name" || k == "service.instance.id" {
					continue
				}
				_, s, _ := strings.Cut(v.Typed(), ":")
				fromLog[promLabel(k)] = s
			}
			if !maps.Equal(got[0].Metric, fromLog) {
				t.Errorf("run %s: target_info labels\n  %v\nwant (from the log record's resource)\n  %v", r.runID, got[0].Metric, fromLog)
			}
		}
	})
}
