//go:build linux

package e2e_test

// The importable Grafana dashboard (examples/grafana/lens-ranks.json)
// against a real Prometheus 3.x: two ranks run under real `lens exec`
// with its per-rank metrics on (OTLP/HTTP to Prometheus's receiver), beside
// a DCGM-exporter-shaped endpoint for three GPUs that Prometheus scrapes,
// and a second run of one rank beside them. The test reads the dashboard
// from the file, resolves its run variable as Grafana does (label_values),
// selects both runs (multi-valued: a regex alternation in the queries) and
// runs every panel's query, twice: while rank 1 runs, and after it was
// killed (a rank that dies); each answer holds both runs' ranks side by
// side, and the GPU panel says which GPU each rank used. Every panel must
// have an expectation here, so a panel added to the file without one fails
// the test.
//
// Expected values come from what the test chose (the GPUs' utilisation and
// which GPU of a fake driver tree each rank uses, the exit status, the
// kill) and from what each
// rank's command says it used, as the kernel counts it (getrusage and
// VmRSS, printed by e2e/cmd/burn); none from lens-go's code.
//
//	cd e2e && go test -race -run Dashboard -v .

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/prometheus"
)

// dcgmGPU is one GPU of the fake DCGM exporter.
type dcgmGPU struct {
	index, uuid, bus string
	util             int
}

// newDCGM serves DCGM exporter's exposition of gpus, as dcgm-exporter 3.x
// writes it (GPU utilisation, labelled as on node hostname); the caller
// closes it.
func newDCGM(hostname, model string, gpus []dcgmGPU) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		fmt.Fprintln(w, "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).")
		fmt.Fprintln(w, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge")
		for _, g := range gpus {
			fmt.Fprintf(w, "DCGM_FI_DEV_GPU_UTIL{gpu=%q,UUID=%q,pci_bus_id=%q,device=\"nvidia%s\",modelName=%q,Hostname=%q} %d\n",
				g.index, g.uuid, g.bus, g.index, model, hostname, g.util)
		}
	}))
}

// dashboardPanel is the part of a Grafana panel the test reads.
type dashboardPanel struct {
	Title   string
	Targets []struct{ Expr string }
}

// readDashboard reads the dashboard's run variable query and its panels.
func readDashboard(t *testing.T) (runVariable string, panels []dashboardPanel) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "grafana", "lens-ranks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Templating struct {
			List []struct {
				Name       string
				Type       string
				Definition string
			}
		}
		Panels []dashboardPanel
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("lens-ranks.json: %v", err)
	}
	for _, v := range d.Templating.List {
		if v.Name == "run" && v.Type == "query" {
			runVariable = v.Definition
		}
	}
	if runVariable == "" || len(d.Panels) == 0 {
		t.Fatalf("lens-ranks.json: run variable %q, %d panels", runVariable, len(d.Panels))
	}
	return runVariable, d.Panels
}

// burnReport is what e2e/cmd/burn prints.
type burnReport struct {
	PID        int     `json:"pid"`
	CPUSeconds float64 `json:"cpu_seconds"`
	RSSBytes   int64   `json:"rss_bytes"`
}

func TestDashboardPrometheus(t *testing.T) {
	began := time.Now()
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	// The first two are the GPUs of the fake driver tree that each rank's
	// lens exec reads (cmd/lens/testdata/gpu/gpus, LENS_NVIDIA_PROCFS), as
	// its information files spell them; the third is no rank's.
	driverTree := filepath.Join(repoRoot(), "cmd", "lens", "testdata", "gpu", "gpus")
	gpus := []dcgmGPU{
		{"0", "GPU-6d2d4f4e-1c6f-4b1e-9d5e-6a1b2c3d4e01", "00000000:07:00.0", 37},
		{"1", "GPU-9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c02", "00000000:0F:00.0", 81},
		{"2", "GPU-c0ffee00-2222-4222-8222-222222222222", "00000000:86:00.0", 55},
	}
	dcgm := newDCGM(hostname, "NVIDIA H100 80GB HBM3", gpus)
	defer dcgm.Close()
	prom := prometheus.StartScrapingForTest(t, "dcgm", strings.TrimPrefix(dcgm.URL, "http://"))
	lens := lensBinary(t)
	burn := builtBinary(t, "burn", moduleDir(), "./cmd/burn")
	runVariable, panels := readDashboard(t)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runID := fmt.Sprintf("e2e-dash-%d", os.Getpid())
	// A second run beside it, of one rank that ends at once: the run
	// variable takes both, and every panel shows them side by side.
	otherRun := runID + "-b"
	type rank struct {
		run    string
		n      int
		gpu    dcgmGPU
		args   []string
		cmd    *exec.Cmd
		stdin  io.WriteCloser
		report burnReport
		status int
	}
	ranks := []*rank{
		{run: runID, n: 0, gpu: gpus[0], args: []string{"-cpu", "400", "-mib", "32", "-exit", "3"}},
		{run: runID, n: 1, gpu: gpus[1], args: []string{"-cpu", "800", "-mib", "96", "-hold"}},
	}
	other := &rank{run: otherRun, n: 0, gpu: gpus[0], args: []string{"-cpu", "400", "-mib", "32", "-exit", "0"}}
	start := func(r *rank) {
		r.cmd = exec.CommandContext(ctx, lens, append([]string{"exec", "--", burn}, r.args...)...)
		r.cmd.Env = lensEnv(os.Environ(),
			"NEMO_LENS_ENABLED=true",
			"NEMO_LENS_TRACES_ENABLED=false",
			"NEMO_LENS_RUN_ID="+r.run,
			"OTEL_METRICS_EXPORTER=otlp",
			"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=http/protobuf",
			"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT="+prom.OTLPMetricsURL(),
			"OTEL_METRIC_EXPORT_INTERVAL=200",
			// Rank N uses GPU N of the fake driver tree.
			"LENS_NVIDIA_PROCFS="+driverTree,
			"CUDA_VISIBLE_DEVICES="+r.gpu.index,
			fmt.Sprintf("OTEL_RESOURCE_ATTRIBUTES=nv.dl.rank=%d", r.n),
		)
		var err error
		if r.stdin, err = r.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		stdout, err := r.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		r.cmd.Stderr = &stderr
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			_ = r.cmd.Wait()
			t.Fatalf("rank %d: no report: %v; stderr %s", r.n, err, stderr.String())
		}
		if err := json.Unmarshal([]byte(line), &r.report); err != nil || r.report.RSSBytes <= 0 {
			t.Fatalf("rank %d: report %q: %v", r.n, line, err)
		}
		t.Logf("rank %d: %s", r.n, strings.TrimSpace(line))
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
	}
	wait := func(r *rank) {
		err := r.cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			// As a shell reports it: lens exec ends by the signal that
			// killed its command.
			r.status = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				r.status = 128 + int(ws.Signal())
			}
		default:
			t.Fatalf("rank %d: %v", r.n, err)
		}
	}

	// Rank 0 runs to its end (exit 3), and the other run's one rank
	// (exit 0); rank 1 runs on.
	for _, r := range []*rank{ranks[0], other} {
		start(r)
		_ = r.stdin.Close()
		wait(r)
	}
	if ranks[0].status != 3 || other.status != 0 {
		t.Fatalf("lens exec exited %d and %d, want the commands' 3 and 0", ranks[0].status, other.status)
	}
	start(ranks[1])
	defer func() { _ = ranks[1].cmd.Process.Kill() }()

	// Synchronise on what Prometheus holds: the three GPUs scraped, and a
	// sample of rank 1 taken after its report (its memory held, its CPU
	// time reached).
	until := func(what string, ok func() bool) {
		for !ok() {
			select {
			case <-ctx.Done():
				t.Fatalf("Prometheus never had %s", what)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	query := func(q string) map[string]float64 {
		samples, err := prom.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, s := range samples {
			v, err := strconv.ParseFloat(s.ValueString(), 64)
			if err != nil {
				t.Fatalf("%s: value %q", q, s.ValueString())
			}
			key := "rank " + s.Metric["nv_dl_rank"]
			if r := s.Metric["nemo_run_id"]; r != "" && r != runID {
				key = r + " " + key // the other run's; this run's keys stay "rank N"
			}
			if u := s.Metric["UUID"]; u != "" {
				key += " " + u
			}
			out[key] = v
		}
		return out
	}
	until("three DCGM series", func() bool { return len(query(`DCGM_FI_DEV_GPU_UTIL`)) == 3 })
	until("rank 1 up, holding its memory, past its CPU time", func() bool {
		sel := fmt.Sprintf(`{nemo_run_id=%q,nv_dl_rank="1"}`, runID)
		up := query("lens_exec_up" + sel)
		mem := query("sum by (nv_dl_rank) (process_memory_usage_bytes" + sel + ")")
		cpu := query("sum by (nv_dl_rank) (process_cpu_time_seconds_total" + sel + ")")
		return up["rank 1"] == 1 && mem["rank 1"] >= 0.9*float64(ranks[1].report.RSSBytes) &&
			cpu["rank 1"] >= 0.9*ranks[1].report.CPUSeconds
	})

	// The run variable lists the run.
	m := regexp.MustCompile(`^label_values\((\w+), *(\w+)\)$`).FindStringSubmatch(runVariable)
	if m == nil {
		t.Fatalf("run variable %q is not label_values(METRIC, LABEL)", runVariable)
	}
	runs, err := prom.LabelValues(ctx, m[2], m[1])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(runs, runID) || !slices.Contains(runs, otherRun) {
		t.Errorf("%s = %q, lacks %s or %s", runVariable, runs, runID, otherRun)
	}

	// expect returns each panel's expected answer by series key ("rank N",
	// with the GPU's UUID for the GPU panel): a number, or a check.
	type check func(got float64) bool
	near := func(want, tolerance float64) check {
		return func(got float64) bool { return math.Abs(got-want) <= tolerance }
	}
	equal := func(want float64) check { return near(want, 0) }
	// The CPU time at the end is the command's wait4 rusage: what it
	// reported, plus its exit; while it runs, /proc's 10-ms ticks.
	cpuTime := func(r *rank) check { return near(r.report.CPUSeconds, 0.1*r.report.CPUSeconds+0.03) }
	busy := func(got float64) bool { return got > 0 && got <= float64(runtime.NumCPU()) }
	gpuKey := func(r *rank) string {
		if r.run != runID {
			return fmt.Sprintf("%s rank %d %s", r.run, r.n, r.gpu.uuid)
		}
		return fmt.Sprintf("rank %d %s", r.n, r.gpu.uuid)
	}
	o := otherRun + " rank 0" // the other run's rank
	expect := func(rank1Ended bool) map[string]map[string]check {
		up1, mem1 := equal(1), near(float64(ranks[1].report.RSSBytes), 0.1*float64(ranks[1].report.RSSBytes))
		exits := map[string]check{"rank 0": equal(3), o: equal(0)}
		if rank1Ended {
			up1, mem1 = equal(0), equal(0)
			exits["rank 1"] = equal(128 + float64(syscall.SIGKILL))
		}
		return map[string]map[string]check{
			"Ranks up":     {"rank 0": equal(0), "rank 1": up1, o: equal(0)},
			"CPU (cores)":  {"rank 0": busy, "rank 1": busy, o: busy},
			"Memory (RSS)": {"rank 0": equal(0), "rank 1": mem1, o: equal(0)},
			"GPU utilisation (DCGM)": {gpuKey(ranks[0]): equal(float64(ranks[0].gpu.util)), gpuKey(ranks[1]): equal(float64(ranks[1].gpu.util)),
				gpuKey(other): equal(float64(other.gpu.util))},
			"CPU time used (s)": {"rank 0": cpuTime(ranks[0]), "rank 1": cpuTime(ranks[1]), o: cpuTime(other)},
			"Exit status":       exits,
			// Which GPU each rank used: one series per rank and GPU.
			"GPU of each rank": {gpuKey(ranks[0]): equal(1), gpuKey(ranks[1]): equal(1), gpuKey(other): equal(1)},
		}
	}
	runPanels := func(phase string, want map[string]map[string]check) {
		seen := map[string]bool{}
		for _, p := range panels {
			w, ok := want[p.Title]
			if !ok {
				t.Errorf("%s: panel %q has no expectation in this test", phase, p.Title)
				continue
			}
			seen[p.Title] = true
			if len(p.Targets) != 1 {
				t.Errorf("%s: panel %q has %d queries, want 1", phase, p.Title, len(p.Targets))
				continue
			}
			// Both runs selected: Grafana writes a multi-valued variable
			// into a Prometheus query as a regex alternation.
			runs := "(" + regexp.QuoteMeta(runID) + "|" + regexp.QuoteMeta(otherRun) + ")"
			q := strings.NewReplacer("$run", runs, "$__rate_interval", "1m").Replace(p.Targets[0].Expr)
			got := query(q)
			t.Logf("%s: %s: %v", phase, p.Title, got)
			if len(got) != len(w) {
				t.Errorf("%s: panel %q: %s = %v, want the series %v", phase, p.Title, q, got, slices.Sorted(maps.Keys(w)))
			}
			for key, ok := range w {
				v, present := got[key]
				if !present || !ok(v) {
					t.Errorf("%s: panel %q: %s: %s = %v (present %v); ranks reported %+v, %+v",
						phase, p.Title, q, key, v, present, ranks[0].report, ranks[1].report)
				}
			}
		}
		for title := range want {
			if !seen[title] {
				t.Errorf("%s: the dashboard has no panel %q", phase, title)
			}
		}
	}
	runPanels("rank 1 running", expect(false))

	// Each rank's GPU info series has DCGM's labels of its GPU.
	info, err := prom.Query(ctx, fmt.Sprintf(`lens_exec_gpu_info{nemo_run_id=%q}`, runID))
	if err != nil {
		t.Fatal(err)
	}
	if len(info) != len(ranks) {
		t.Errorf("lens_exec_gpu_info: %d series, want one per rank: %+v", len(info), info)
	}
	for _, s := range info {
		n, _ := strconv.Atoi(s.Metric["nv_dl_rank"])
		if n < 0 || n >= len(ranks) {
			t.Errorf("lens_exec_gpu_info of no rank: %v", s.Metric)
			continue
		}
		g := ranks[n].gpu
		for label, want := range map[string]string{"UUID": g.uuid, "gpu": g.index, "pci_bus_id": g.bus, "Hostname": hostname} {
			if got := s.Metric[label]; got != want {
				t.Errorf("rank %d: lens_exec_gpu_info label %s = %q, want DCGM's %q", n, label, got, want)
			}
		}
	}

	// Rank 1 dies: its command is killed; lens exec reports 137, exports
	// its last collection and exits.
	if err := syscall.Kill(ranks[1].report.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wait(ranks[1])
	if ranks[1].status != 128+int(syscall.SIGKILL) {
		t.Fatalf("rank 1: lens exec exited %d, want %d", ranks[1].status, 128+int(syscall.SIGKILL))
	}
	runPanels("rank 1 killed", expect(true))
	t.Logf("dashboard test: %v", time.Since(began).Round(time.Millisecond))
}
