package e2e_test

// Issue 37, the node's Collector, against the real Slurm, the real Jaeger
// and the real Prometheus: lens-collector (scripts/build-collector.sh)
// gives telemetry from processes lens never touched the job's resource.
//
// TestCollectorSlurmSpans: a two-task step runs e2e/cmd/otelsender, a
// program with the OpenTelemetry SDK alone, exporting to lens-collector,
// which forwards to Jaeger. What each task's spans must carry is written
// by the task itself, beside the sender: `lens env --stage task` (the
// Slurm attributes and nv.dl.job.uuid, as the reference's
// set-slurm-resource-attrs gives them), $SLURM_JOB_ID (nemo.run.id: a
// Slurm job's run id is its raw job id) and $SLURM_PROCID (nv.dl.rank with
// rank_from: slurm). Task 1's sender starts with an empty environment, so
// the processor must walk up to its shell. A sender with its own
// slurm.job.id keeps it; one outside any job gets nothing.
//
// TestCollectorGPUJoin: DCGM-exporter-shaped series for the two GPUs of a
// fake driver tree, scraped by the Collector's Prometheus receiver while a
// Slurm step holds one of them (CUDA_VISIBLE_DEVICES, as a GPU allocation
// sets it), reach Prometheus; docs/collector.md's dashboard query gives the
// job, run and rank of that GPU and nothing for the other.
//
//	cd e2e && CI=true go test -count=1 -run TestCollector -v ./...

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/jaeger"
	"github.com/nemolens/lens-go/e2e/internal/lenscollector"
	"github.com/nemolens/lens-go/e2e/internal/prometheus"
)

// collectorResolveTimeout is the lens processor's resolve_timeout here: how
// long a batch may wait for its process to be read (a few /proc files:
// microseconds). The default, 20 ms, lets a batch go on without its job
// when the read is slower, which a machine at load 20 can make it; these
// tests check the attributes, not that bound (unit tests check it), so
// they take the largest the processor accepts.
const collectorResolveTimeout = "1s"

func TestCollectorSlurmSpans(t *testing.T) {
	elapsed(t)
	gate(t)
	lens := lensBinary(t)
	sender := builtBinary(t, "otelsender", moduleDir(), "./cmd/otelsender")
	c := needCluster(t, 1)
	j := jaeger.StartForTest(t)
	col := lenscollector.StartForTest(t, `
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "127.0.0.1:${env:E2E_PORT_0}"}
processors:
  lens: {rank_from: slurm, resolve_timeout: `+collectorResolveTimeout+`, gpu: {enabled: false}}
exporters:
  otlp_grpc: {endpoint: "${env:E2E_JAEGER}", tls: {insecure: true}}
service:
  pipelines:
    traces: {receivers: [otlp], processors: [lens], exporters: [otlp_grpc]}
`, 1, "E2E_JAEGER="+j.OTLPGRPCEndpoint())
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", col.Port(0))
	dir := outDir(t)
	service := uniqueName("e2e-collector")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// The task writes what it expects, then runs the sender: task 0 as
	// itself, task 1 as a child of the shell with an empty environment.
	script := filepath.Join(dir, "task.sh")
	if err := os.WriteFile(script, []byte(`#!/bin/sh
set -e
"$LENS" env --stage task > "$D/$TAG.env"
printf '%s %s\n' "$SLURM_JOB_ID" "$SLURM_PROCID" > "$D/$TAG.job"
if [ "$SLURM_PROCID" = 1 ]; then
	env -i PATH="$PATH" OTEL_SERVICE_NAME="$OTEL_SERVICE_NAME" OTEL_EXPORTER_OTLP_ENDPOINT="$OTEL_EXPORTER_OTLP_ENDPOINT" \
		OTEL_EXPORTER_OTLP_INSECURE=true "$SENDER" -tag "$TAG"
else
	exec "$SENDER" -tag "$TAG"
fi
`), 0o755); err != nil {
		t.Fatal(err)
	}
	senderEnv := []string{"OTEL_SERVICE_NAME=" + service, "OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint,
		"OTEL_EXPORTER_OTLP_INSECURE=true", "LENS=" + lens, "SENDER=" + sender, "D=" + dir}
	// Two tasks, one step; a tag per task from the task's own SLURM_PROCID.
	if _, err := c.Srun(ctx, lensEnv(c.Env(), senderEnv...), "-N1", "-n2", "--job-name="+service,
		"sh", "-c", `export TAG=task$SLURM_PROCID; exec "$0"`, script); err != nil {
		t.Fatal(err)
	}
	// One task whose SDK already says slurm.job.id (its carrier): kept.
	if _, err := c.Srun(ctx, lensEnv(c.Env(), append(senderEnv, "TAG=own",
		"OTEL_RESOURCE_ATTRIBUTES=slurm.job.id=sender-own")...), "-N1", "-n1", "--job-name="+service, script); err != nil {
		t.Fatal(err)
	}
	// A process outside any job, started by this test.
	outside := exec.CommandContext(ctx, sender, "-tag", "outside")
	outside.Env = lensEnv(os.Environ(), "OTEL_SERVICE_NAME="+service, "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint,
		"OTEL_EXPORTER_OTLP_INSECURE=true")
	if out, err := outside.CombinedOutput(); err != nil {
		t.Fatalf("otelsender outside a job: %v\n%s", err, out)
	}

	traces, err := j.WaitTraces(ctx, service, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]jaeger.Tag{} // e2e.tag -> the span's resource
	for i := range traces {
		tr := &traces[i]
		for k := range tr.Spans {
			s := &tr.Spans[k]
			tag, ok := s.Tag("e2e.tag")
			p, okP := tr.SpanProcess(s)
			if !ok || !okP {
				t.Fatalf("span %s: no e2e.tag or no process", s.SpanID)
			}
			name, _ := tag.AsString()
			got[name] = p.TagMap()
		}
	}
	added := map[string]bool{"nemo.run.id": true, "nv.dl.rank": true, "nv.dl.world_size": true, "nv.dl.local_rank": true}
	for _, name := range []string{"task0", "task1", "own"} {
		res, ok := got[name]
		if !ok {
			t.Errorf("%s: no span in Jaeger (have %v)", name, slices.Sorted(maps.Keys(got)))
			continue
		}
		want := carrierFile(t, filepath.Join(dir, name+".env"))
		job := strings.Fields(mustRead(t, filepath.Join(dir, name+".job")))
		if len(job) != 2 {
			t.Fatalf("%s.job: %q", name, job)
		}
		want["nemo.run.id"] = job[0]
		want["nv.dl.rank"] = job[1]
		if !strings.Contains(mustRead(t, filepath.Join(dir, name+".env")), "slurm.job.id=") {
			t.Fatalf("%s: lens env gave no slurm.job.id: the task's expectation is empty", name)
		}
		for k, v := range want {
			added[k] = true
			tag, ok := res[k]
			switch {
			case !ok:
				t.Errorf("%s: no %s in Jaeger, want %q", name, k, v)
			case fmt.Sprint(tag.Value) != v:
				t.Errorf("%s: %s = %s in Jaeger, want %q (from the task)", name, k, tag, v)
			}
		}
		if tag := res["nv.dl.rank"]; tag.Type != jaeger.TypeInt64 {
			t.Errorf("%s: nv.dl.rank is %s, want an int64 as lens sets it", name, tag)
		}
		if name == "own" && fmt.Sprint(res["slurm.job.id"].Value) != "sender-own" {
			t.Errorf("own: the sender's slurm.job.id was replaced: %s", res["slurm.job.id"])
		}
	}
	if r0, r1 := got["task0"]["nv.dl.rank"], got["task1"]["nv.dl.rank"]; r0.Value == r1.Value {
		t.Errorf("the two tasks have one rank: %s, %s", r0, r1)
	}
	// Outside any job: none of the attributes the job's tasks were given,
	// unless this test itself runs inside a job or a pod (then its
	// ancestors hold one, and the processor rightly says so).
	if res, ok := got["outside"]; !ok {
		t.Errorf("outside: no span in Jaeger")
	} else if os.Getenv("SLURM_JOB_ID") != "" || os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		t.Logf("outside: this test runs inside a job or pod, so its processes are in one: %v", res)
	} else {
		for k := range added {
			if tag, ok := res[k]; ok {
				t.Errorf("outside: a process outside any job was given %s", tag)
			}
		}
	}
}

func TestCollectorGPUJoin(t *testing.T) {
	elapsed(t)
	gate(t)
	c := needCluster(t, 1)
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	// The fake driver tree's GPUs in PCI bus order (CUDA_DEVICE_ORDER=
	// PCI_BUS_ID numbers them so), each UUID as its information file says.
	tree := filepath.Join(repoRoot(), "cmd", "lens", "testdata", "gpu", "gpus")
	var gpus []dcgmGPU
	entries, err := os.ReadDir(tree)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries { // ReadDir sorts by name: the bus ids
		info := mustRead(t, filepath.Join(tree, e.Name(), "information"))
		m := regexp.MustCompile(`(?m)^GPU UUID:\s*(\S+)`).FindStringSubmatch(info)
		if m == nil {
			t.Fatalf("%s: no GPU UUID line", e.Name())
		}
		// DCGM exporter spells the bus id with an 8-digit domain, in upper case.
		gpus = append(gpus, dcgmGPU{strconv.Itoa(i), m[1], "0000" + strings.ToUpper(e.Name()), 42})
	}
	if len(gpus) != 2 {
		t.Fatalf("the fake tree has %d GPUs, want 2", len(gpus))
	}
	held, free := gpus[1], gpus[0]

	dcgm := newDCGM(hostname, "NVIDIA A100-SXM4-80GB", gpus)
	defer dcgm.Close()
	prom := prometheus.StartForTest(t)
	lenscollector.StartForTest(t, `
receivers:
  prometheus:
    config:
      scrape_configs:
        - job_name: dcgm
          scrape_interval: 1s
          scrape_timeout: 1s
          static_configs:
            - targets: ["${env:E2E_DCGM}"]
processors:
  lens:
    rank_from: slurm
    resolve_timeout: `+collectorResolveTimeout+`
    gpu: {nvidia_procfs: "${env:E2E_TREE}", refresh_interval: 1s}
exporters:
  otlp_http: {endpoint: "${env:E2E_PROM}", retry_on_failure: {enabled: false}}
service:
  pipelines:
    metrics: {receivers: [prometheus], processors: [lens], exporters: [otlp_http]}
`, 0, "E2E_DCGM="+strings.TrimPrefix(dcgm.URL, "http://"), "E2E_TREE="+tree, "E2E_PROM="+prom.URL()+"/api/v1/otlp")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A step of one task holding the second GPU, as long as the test needs.
	name := uniqueName("e2e-gpujoin")
	step := exec.Command("srun", "-N1", "-n1", "--job-name="+name, "sleep", "600")
	step.Env = lensEnv(c.Env(), "CUDA_VISIBLE_DEVICES="+held.index, "CUDA_DEVICE_ORDER=PCI_BUS_ID")
	if err := step.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_, _ = c.Run(context.Background(), nil, "scancel", "--name="+name)
		_ = step.Wait()
	}()
	var jobID string
	for jobID == "" {
		jobs, err := c.JobsNamed(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 1 && jobs[0]["JobState"] == "RUNNING" {
			jobID = jobs[0]["JobId"]
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s never ran: %v", name, jobs)
		case <-time.After(100 * time.Millisecond):
		}
	}

	query := dashboardQuery(t)
	t.Logf("job %s holds %s; query: %s", jobID, held.uuid, query)
	var samples []prometheus.Sample
	for {
		samples, err = prom.Query(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		if len(samples) > 0 {
			break
		}
		select {
		case <-ctx.Done():
			all, _ := prom.Query(context.Background(), `{__name__=~"DCGM_FI_DEV_GPU_UTIL|lens_gpu_job"}`)
			t.Fatalf("the join never gave a series; Prometheus holds %v", all)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if len(samples) != 1 {
		t.Fatalf("the join gave %d series, want 1 (the held GPU's): %v", len(samples), samples)
	}
	m := samples[0].Metric
	for k, v := range map[string]string{"UUID": held.uuid, "slurm_job_id": jobID, "nemo_run_id": jobID, "nv_dl_rank": "0"} {
		if m[k] != v {
			t.Errorf("%s = %q, want %q (series %v)", k, m[k], v, m)
		}
	}
	// The free GPU is scraped, and has no job.
	for q, want := range map[string]int{
		fmt.Sprintf(`DCGM_FI_DEV_GPU_UTIL{UUID=%q}`, free.uuid): 1,
		fmt.Sprintf(`lens_gpu_job{UUID=%q}`, free.uuid):         0,
	} {
		s, err := prom.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != want {
			t.Errorf("%s: %d series, want %d: %v", q, len(s), want, s)
		}
	}
}

// dashboardQuery is the PromQL block of docs/collector.md's GPU section,
// the query the guide gives for the dashboard.
func dashboardQuery(t *testing.T) string {
	t.Helper()
	doc := mustRead(t, filepath.Join(repoRoot(), "docs", "collector.md"))
	_, after, ok := strings.Cut(doc, `<a id="gpu-series"></a>`)
	if !ok {
		t.Fatal("docs/collector.md: no gpu-series section")
	}
	_, block, ok := strings.Cut(after, "```promql\n")
	if !ok {
		t.Fatal("docs/collector.md: no promql block in the gpu-series section")
	}
	block, _, _ = strings.Cut(block, "```")
	return strings.Join(strings.Fields(block), " ")
}

// carrierFile parses `lens env`'s output, "export OTEL_RESOURCE_ATTRIBUTES=
// k=v,...", shell-quoted or not, here with sh itself; the first of two
// equal keys wins, as OTEL_RESOURCE_ATTRIBUTES's readers take it.
func carrierFile(t *testing.T, path string) map[string]string {
	t.Helper()
	out, err := exec.Command("sh", "-c", `. "$0" && printf '%s' "$OTEL_RESOURCE_ATTRIBUTES"`, path).Output()
	if err != nil {
		t.Fatalf("sh . %s: %v", path, err)
	}
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := strings.IndexByte(string(data), ','); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			t.Fatalf("%s: %q is not key=value", path, sc.Text())
		}
		if v, err = url.PathUnescape(v); err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		if _, dup := m[k]; !dup {
			m[k] = v
		}
	}
	return m
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
