package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/jaeger"
	"github.com/nemolens/lens-go/e2e/internal/slurm"
	"github.com/nemolens/lens-go/e2e/internal/worker"
)

// plainScript is an ordinary batch script: no lens anywhere. The batch
// script itself dumps its environment and runs the worker (the batch
// step); then one srun runs the worker and one a shell command, in every
// task. Usage: sbatch SCRIPT WORKER OUT.
const plainScript = `#!/bin/bash
#SBATCH --ntasks=2
set -eu
env -0 >"$2/env.batch"
"$1" -span batch-step -out "$2" -label batch
srun "$1" -span task-step -out "$2" -label task
srun bash -c 'env -0 >"$1/env.task.$SLURM_PROCID"' bash "$2"
`

// TestTaskPrologJaeger configures lens as the cluster's TaskProlog
// (slurm.conf TaskProlog= the documented wrapper, examples/lens-taskprolog.sh,
// running lens with an admin's policy file, docs/taskprolog.md#slurm-conf) and
// submits plainScript unchanged, three times:
//
//  1. With the policy (ranks = slurm, a service name, the exporter
//     settings): every task's and the batch step's environment, and every
//     worker's resource in Jaeger, carry the slurm.* keys of the job, the
//     job UUID, one run id (the job id) and, in the step tasks, the ranks
//     from the task's own SLURM_PROCID/SLURM_LOCALID.
//  2. With NEMO_LENS_RUN_ID set by the user at submission: it wins.
//  3. With a broken policy file: every task still starts (the job
//     completes) with the carrier and the run id, the policy's settings are
//     not applied, and each of the five tasks (batch step, 2 + 2 srun
//     tasks) reports it in the policy's log file — not in the job's output.
//
// Expected values come from sbatch --parsable, scontrol show job, the
// cluster name and each task's own environment dump, never from lens.
func TestTaskPrologJaeger(t *testing.T) {
	elapsed(t)
	gate(t)
	j := jaeger.StartForTest(t)
	workerBin := workerBinary(t)
	lensBin := lensBinary(t)
	c := needCluster(t, 1)
	host := hostname(t)

	dir := outDir(t)
	policy := filepath.Join(dir, "taskprolog.conf")
	logFile := filepath.Join(dir, "taskprolog.log")
	wrapper := installTaskPrologWrapper(t, dir, lensBin, policy)
	script := filepath.Join(dir, "plain.sbatch")
	writeFile(t, script, plainScript, 0o644)
	service := uniqueName("taskprolog")
	writeFile(t, policy, strings.Join([]string{
		"# written by TestTaskPrologJaeger",
		"ranks = slurm",
		"service_name = " + service,
		"env.NEMO_LENS_ENABLED = true",
		"env.NEMO_LENS_METRICS_ENABLED = false",
		"env.OTEL_EXPORTER_OTLP_ENDPOINT = http://" + j.OTLPGRPCEndpoint(),
		"env.OTEL_EXPORTER_OTLP_INSECURE = true",
		"log = " + logFile,
	}, "\n")+"\n", 0o644)

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	setTaskProlog(ctx, t, c, wrapper)

	t.Run("policy", func(t *testing.T) {
		out := subDir(t, dir, "policy")
		jobID, job := runPlainJob(ctx, t, c, lensEnv(c.Env()), script, workerBin, out)
		checkPlainJob(ctx, t, j, c, plainWant{jobID: jobID, runID: jobID, service: service, host: host, job: job, ranks: true}, out)
		if data, err := os.ReadFile(logFile); err == nil {
			t.Errorf("a clean job wrote reports:\n%s", data)
		}
	})
	t.Run("explicit run id wins", func(t *testing.T) {
		out := subDir(t, dir, "runid")
		runID := uniqueName("user-run")
		jobID, job := runPlainJob(ctx, t, c, lensEnv(c.Env(), "NEMO_LENS_RUN_ID="+runID), script, workerBin, out)
		checkPlainJob(ctx, t, j, c, plainWant{jobID: jobID, runID: runID, service: service, host: host, job: job, ranks: true}, out)
	})
	t.Run("broken policy", func(t *testing.T) {
		writeFile(t, policy, "ranks = every\n\x7fELF garbage\nservice_name = x\nservice_name = y\nlog = "+logFile+"\n", 0o644)
		out := subDir(t, dir, "broken")
		jobID, job := runPlainJob(ctx, t, c, lensEnv(c.Env()), script, workerBin, out)
		// No exporter settings: the workers run without telemetry.
		checkPlainEnvs(t, plainWant{jobID: jobID, runID: jobID, host: host, job: job, cluster: c.Name}, out)
		for _, rec := range append(records(t, out, "batch", 1), records(t, out, "task", 2)...) {
			if rec.Exporting || rec.RunID != jobID {
				t.Errorf("%s: exporting %v run id %q, want no telemetry (no policy) and the job id %s", filepath.Base(rec.File), rec.Exporting, rec.RunID, jobID)
			}
		}
		data, err := os.ReadFile(logFile)
		if err != nil {
			t.Fatalf("the broken policy's log file: %v", err)
		}
		notApplied := 0
		steps := map[string]int{}
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if strings.Contains(line, "job "+jobID+" step ") && strings.HasSuffix(line, "not applied: carrier and run id only") {
				notApplied++
				f := strings.Fields(line[strings.Index(line, "job "+jobID):])
				steps[f[3]]++ // "job ID step S task ..."
			}
		}
		if notApplied != 5 || steps["batch"] != 1 || steps["0"] != 2 || steps["1"] != 2 {
			t.Errorf("log file: %d reports of the unapplied policy by step %v, want 5 (batch 1, step 0: 2, step 1: 2):\n%s", notApplied, steps, data)
		}
		if jobOut, _ := os.ReadFile(filepath.Join(out, "job-"+jobID+".out")); bytes.Contains(jobOut, []byte("lens taskprolog")) {
			t.Errorf("the job's output holds the TaskProlog's reports (slurmstepd should read its stderr):\n%s", jobOut)
		}
		// slurmstepd reads the TaskProlog's stderr with its stdout and logs
		// neither at SlurmdDebug=info: the log file is where reports are.
		logs, _ := filepath.Glob(filepath.Join(c.StateDir, "log", "slurmd*.log"))
		if len(logs) == 0 {
			t.Errorf("no slurmd log under %s", c.StateDir)
		}
		for _, l := range logs {
			if data, _ := os.ReadFile(l); bytes.Contains(data, []byte("lens taskprolog")) {
				t.Errorf("%s holds the TaskProlog's reports", l)
			}
		}
	})
}

// setTaskProlog restarts the cluster with slurm.conf's TaskProlog=wrapper
// and, when the test ends, without it.
func setTaskProlog(ctx context.Context, t *testing.T, c *slurm.Cluster, wrapper string) {
	t.Helper()
	start := time.Now()
	if err := c.SetTaskProlog(ctx, wrapper); err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster restart with TaskProlog=%s: %v", wrapper, time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := c.SetTaskProlog(ctx, ""); err != nil {
			t.Errorf("restart without TaskProlog: %v", err)
		}
	})
}

// installTaskPrologWrapper installs examples/lens-taskprolog.sh into dir as
// docs/taskprolog.md#slurm-conf does (LENS and POLICY set) and returns its
// path, for slurm.conf's TaskProlog=.
func installTaskPrologWrapper(t *testing.T, dir, lensBin, policy string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "lens-taskprolog.sh"))
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`(?m)^LENS=.*$`).ReplaceAllLiteralString(string(data), "LENS="+lensBin)
	text = regexp.MustCompile(`(?m)^POLICY=\S*`).ReplaceAllLiteralString(text, "POLICY="+policy)
	if !strings.Contains(text, "\nLENS="+lensBin+"\n") || !strings.Contains(text, "\nPOLICY="+policy+" ") {
		t.Fatalf("examples/lens-taskprolog.sh has no LENS= or POLICY= line to set:\n%s", data)
	}
	wrapper := filepath.Join(dir, "lens-taskprolog.sh")
	writeFile(t, wrapper, text, 0o755)
	return wrapper
}

func writeFile(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func subDir(t *testing.T, dir, name string) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// runPlainJob submits plainScript, waits for it and requires it to have
// completed; it returns the job id and scontrol's record.
func runPlainJob(ctx context.Context, t *testing.T, c *slurm.Cluster, env []string, script, workerBin, out string) (string, slurm.Job) {
	t.Helper()
	name := uniqueName("tp-job")
	jobID, err := c.Sbatch(ctx, env, "--job-name="+name, "-o", filepath.Join(out, "job-%j.out"), script, workerBin, out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(filepath.Join(out, "job-"+jobID+".out"))
			t.Logf("----- job %s output -----\n%s", jobID, data)
		}
	})
	if err := c.WaitGone(ctx, jobID); err != nil {
		t.Fatal(err)
	}
	jobs, err := c.ShowJob(ctx, jobID)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("scontrol show job %s: %v (%d records)", jobID, err, len(jobs))
	}
	job := jobs[0]
	if job["JobState"] != "COMPLETED" || job["ExitCode"] != "0:0" || job["JobName"] != name || job["NumTasks"] != "2" {
		t.Fatalf("job %s: JobState=%s ExitCode=%s JobName=%s NumTasks=%s, want COMPLETED 0:0 %s 2",
			jobID, job["JobState"], job["ExitCode"], job["JobName"], job["NumTasks"], name)
	}
	return jobID, job
}

type plainWant struct {
	jobID, runID, service, host, cluster string
	job                                  slurm.Job
	ranks                                bool
}

// readEnv0 reads an env -0 dump.
func readEnv0(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

// checkPlainEnvs checks the environments the batch step and the shell
// command's tasks got: the carrier's job-level keys, the batch step's head
// node, the task stage's host name and topology (tasks only), the ranks at
// the end (tasks only, with the policy), the run id.
func checkPlainEnvs(t *testing.T, w plainWant, out string) {
	t.Helper()
	jobLevel := []string{
		"slurm.job.id=" + w.jobID,
		"slurm.job.id.raw=" + w.jobID,
		"slurm.job.name=" + encodeValue(w.job["JobName"]),
		"slurm.cluster.name=" + encodeValue(w.cluster),
		"slurm.partition=" + encodeValue(w.job["Partition"]),
		"slurm.ntasks=2",
		"slurm.head_node.name=" + encodeValue(w.job["BatchHost"]), // from the batch step, inherited
		"nv.dl.job.uuid=" + uuidv5("nemo.lens.job/"+w.cluster+"/"+w.jobID),
	}
	check := func(what string, env map[string]string, task bool) {
		segs := strings.Split(env["OTEL_RESOURCE_ATTRIBUTES"], ",")
		for _, want := range jobLevel {
			if !slices.Contains(segs, want) {
				t.Errorf("%s: carrier %q lacks %q", what, env["OTEL_RESOURCE_ATTRIBUTES"], want)
			}
		}
		hasHost := slices.Contains(segs, "host.name="+encodeValue(w.host))
		hasTopo := slices.Contains(segs, "slurm.topology.addr="+encodeValue(env["SLURM_TOPOLOGY_ADDR"]))
		if hasHost != task || hasTopo != task {
			t.Errorf("%s: carrier %q: host.name %v, slurm.topology.addr %v; want both %v (the task stage runs in step tasks only)",
				what, env["OTEL_RESOURCE_ATTRIBUTES"], hasHost, hasTopo, task)
		}
		ranks := fmt.Sprintf(",nv.dl.rank=%s,nv.dl.world_size=%s,nv.dl.local_rank=%s", env["SLURM_PROCID"], env["SLURM_NTASKS"], env["SLURM_LOCALID"])
		hasRanks := strings.HasSuffix(env["OTEL_RESOURCE_ATTRIBUTES"], ranks)
		if hasRanks != (task && w.ranks) || (!task && strings.Contains(env["OTEL_RESOURCE_ATTRIBUTES"], "nv.dl.rank=")) {
			t.Errorf("%s: carrier %q: ends with the ranks %q: %v, want %v", what, env["OTEL_RESOURCE_ATTRIBUTES"], ranks, hasRanks, task && w.ranks)
		}
		if env["NEMO_LENS_RUN_ID"] != w.runID {
			t.Errorf("%s: NEMO_LENS_RUN_ID=%q, want %q", what, env["NEMO_LENS_RUN_ID"], w.runID)
		}
		if got, ok := env["OTEL_SERVICE_NAME"]; (w.service == "" && ok) || got != w.service {
			t.Errorf("%s: OTEL_SERVICE_NAME=%q (set %v), want %q", what, got, ok, w.service)
		}
	}
	check("batch step", readEnv0(t, filepath.Join(out, "env.batch")), false)
	for k := range 2 {
		env := readEnv0(t, filepath.Join(out, "env.task."+strconv.Itoa(k)))
		if env["SLURM_PROCID"] != strconv.Itoa(k) || env["SLURM_JOB_ID"] != w.jobID {
			t.Fatalf("env.task.%d: SLURM_PROCID=%q SLURM_JOB_ID=%q", k, env["SLURM_PROCID"], env["SLURM_JOB_ID"])
		}
		check("shell task "+strconv.Itoa(k), env, true)
	}
}

// checkPlainJob checks the environments and, in Jaeger, the resource of
// the batch step's worker and of each task's worker.
func checkPlainJob(ctx context.Context, t *testing.T, j *jaeger.Jaeger, c *slurm.Cluster, w plainWant, out string) {
	t.Helper()
	w.cluster = c.Name
	checkPlainEnvs(t, w, out)
	jobLevel := []tagWant{
		wstr("slurm.job.id", w.jobID),
		wstr("slurm.job.id.raw", w.jobID),
		wstr("slurm.job.name", w.job["JobName"]),
		wstr("slurm.cluster.name", c.Name),
		wstr("slurm.partition", w.job["Partition"]),
		wint("slurm.ntasks", 2),
		wstr("slurm.head_node.name", w.job["BatchHost"]),
		wstr("nv.dl.job.uuid", uuidv5("nemo.lens.job/"+c.Name+"/"+w.jobID)),
		wstr("nemo.run.id", w.runID),
		wstr("host.name", w.host),
	}
	var traces []string
	check := func(what string, rec worker.Record, want ...tagWant) {
		if rec.Env["NEMO_LENS_RUN_ID"] != w.runID || rec.RunID != w.runID || !rec.Exporting {
			t.Errorf("%s: NEMO_LENS_RUN_ID=%q run id %q exporting %v, want %q and exporting",
				what, rec.Env["NEMO_LENS_RUN_ID"], rec.RunID, rec.Exporting, w.runID)
		}
		tr, err := j.WaitSpans(ctx, rec.TraceID, 1)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		traces = append(traces, tr.TraceID)
		p, err := tr.SingleProcess()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if p.ServiceName != w.service {
			t.Errorf("%s: serviceName %q, want the policy's %q", what, p.ServiceName, w.service)
		}
		checkTags(t, what+" process", p.Tags, append(slices.Clone(jobLevel), want...)...)
	}
	batch := records(t, out, "batch", 1)[0]
	check("batch step worker", batch, wint("process.pid", int64(batch.PID)))
	if tr, err := j.WaitSpans(ctx, batch.TraceID, 1); err == nil {
		if p, err := tr.SingleProcess(); err == nil {
			noTag(t, "batch step worker", p.Tags, "nv.dl.rank")
		}
	}
	byRank := map[int]string{}
	for _, rec := range records(t, out, "task", 2) {
		rank, err := strconv.Atoi(rec.SlurmProcID)
		if err != nil {
			t.Fatalf("%s: SLURM_PROCID %q", filepath.Base(rec.File), rec.SlurmProcID)
		}
		local := atoi(rec.Env["SLURM_LOCALID"])
		check(fmt.Sprintf("task %d worker", rank), rec,
			wint("nv.dl.rank", int64(rank)), wint("nv.dl.world_size", atoi(w.job["NumTasks"])), wint("nv.dl.local_rank", local),
			wstr("service.instance.id", w.runID+"-rank"+strconv.Itoa(rank)), wint("process.pid", int64(rec.PID)))
		byRank[rank] = rec.TraceID
	}
	if len(byRank) != 2 {
		t.Fatalf("task ranks %v, want 0 and 1", byRank)
	}
	checkSearch(ctx, t, j, w.service, map[string]string{"slurm.job.id": w.jobID}, traces...)
	checkSearch(ctx, t, j, w.service, map[string]string{"nv.dl.rank": "1", "nemo.run.id": w.runID}, byRank[1])
}
