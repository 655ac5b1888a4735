package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/jaeger"
	"github.com/nemolens/lens-go/e2e/internal/worker"
)

// TestExampleSbatchJaeger submits the README's launch script,
// examples/train.sbatch, unchanged, to the local Slurm cluster with the
// worker as COMMAND and LENS=<the built lens CLI>. The submitter environment
// only says where to export (OTEL_EXPORTER_OTLP_*) and turns metrics off;
// NEMO_LENS_ENABLED and OTEL_SERVICE_NAME come from the script's defaults,
// and nothing sets NEMO_LENS_RUN_ID.
//
// The script runs `srun "$LENS" exec --rank-from slurm --role trainer --
// COMMAND`: no shell per task, no per-task `lens env --stage task`.
//
// Expected in Jaeger: one trace per task, each with lens exec's wrapper span
// and the worker's span as its CHILD_OF child; both resources carry the
// job-level Slurm attributes published by `lens env --stage sbatch`
// (slurm.job.id = the sbatch job id, slurm.job.name = train-gpt,
// nv.dl.job.uuid), nv.dl.rank, nv.dl.world_size and nv.dl.local_rank from
// Slurm's own SLURM_PROCID, SLURM_NTASKS and SLURM_LOCALID as int64,
// nv.dl.role=trainer, host.name detected live, nemo.run.id = the job id
// (the fill-in takes SLURM_JOB_ID; lens exec hands it to the worker in
// NEMO_LENS_RUN_ID), and distinct instance ids: "<job id>-rank<k>" for the
// worker, "<job id>-rank<k>.lens-exec.<lens's pid>" for the wrapper
// (docs/resource.md#instance-ids-of-wrappers-and-children).
func TestExampleSbatchJaeger(t *testing.T) {
	elapsed(t)
	gate(t)
	script := filepath.Join(repoRoot(), "examples", "train.sbatch")
	j := jaeger.StartForTest(t)
	workerBin := workerBinary(t)
	lensBin := lensBinary(t)
	c := needCluster(t, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	host := hostname(t)

	const service = "train-gpt" // the script's default OTEL_SERVICE_NAME
	out := outDir(t)
	env := lensEnv(c.Env(), "LENS="+lensBin,
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+j.OTLPGRPCEndpoint(),
		"OTEL_EXPORTER_OTLP_INSECURE=true",
		"NEMO_LENS_METRICS_ENABLED=false")
	jobID, err := c.Sbatch(ctx, env, "-o", filepath.Join(out, "job-%j.out"), script,
		workerBin, "-span", "train-step", "-out", out, "-label", "train")
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
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 {
		t.Fatalf("scontrol show job %s: %d records", jobID, len(jobs))
	}
	job := jobs[0]
	if job["JobState"] != "COMPLETED" || job["ExitCode"] != "0:0" || job["JobName"] != "train-gpt" || job["NumTasks"] != "2" {
		t.Fatalf("job %s: JobState=%s ExitCode=%s JobName=%s NumTasks=%s, want COMPLETED 0:0 train-gpt 2",
			jobID, job["JobState"], job["ExitCode"], job["JobName"], job["NumTasks"])
	}

	recs := records(t, out, "train", 2)
	traceByRank := map[int]string{}
	var all []processIdentity
	var wantIDs []string
	for _, rec := range recs {
		rank, err := strconv.Atoi(rec.SlurmProcID)
		if err != nil {
			t.Fatalf("%s: SLURM_PROCID %q", filepath.Base(rec.File), rec.SlurmProcID)
		}
		localRank, err := strconv.Atoi(rec.Env["SLURM_LOCALID"])
		if err != nil {
			t.Fatalf("%s: SLURM_LOCALID %q", filepath.Base(rec.File), rec.Env["SLURM_LOCALID"])
		}
		what := fmt.Sprintf("task %d", rank)
		if rec.Env["NEMO_LENS_RUN_ID"] != jobID || rec.RunID != jobID {
			t.Errorf("%s: worker got NEMO_LENS_RUN_ID=%q (Setup's run id %q), want the job id %s",
				what, rec.Env["NEMO_LENS_RUN_ID"], rec.RunID, jobID)
		}
		tr, err := j.WaitSpans(ctx, rec.TraceID, 2)
		if err != nil {
			t.Fatal(err)
		}
		traceByRank[rank] = tr.TraceID
		wrapper, child := execSpans(t, tr, "lens exec "+filepath.Base(workerBin), "train-step", 2)
		if wrapper == nil || child == nil {
			continue
		}
		checkParent(t, tr, wrapper, child, rec)
		if len(wrapper.References) != 0 {
			t.Errorf("%s: wrapper span references %v, want a root span", what, wrapper.References)
		}
		checkTags(t, what+" wrapper span", wrapper.Tags,
			wstr("process.command", workerBin),
			wint("process.pid", int64(rec.PID)),
			wint("process.exit.code", 0))

		want := []tagWant{
			wstr("slurm.job.id", jobID),
			wstr("slurm.job.name", "train-gpt"),
			wstr("slurm.cluster.name", c.Name),
			wstr("slurm.partition", job["Partition"]),
			wint("slurm.ntasks", 2),
			wstr("slurm.head_node.name", job["BatchHost"]), // published by the batch step
			wstr("nv.dl.job.uuid", uuidv5("nemo.lens.job/"+c.Name+"/"+jobID)),
			wint("nv.dl.rank", int64(rank)),
			wint("nv.dl.world_size", atoi(job["NumTasks"])),
			wint("nv.dl.local_rank", int64(localRank)),
			wstr("nv.dl.role", "trainer"),
			wstr("nemo.run.id", jobID),
			wstr("host.name", host),
			wstr("telemetry.sdk.language", "go"),
			// Slurm sets ENVIRONMENT=BATCH in batch jobs (the submitter's
			// ENVIRONMENT is removed here), and Lens reads ENVIRONMENT for
			// deployment.environment when DEPLOYMENT_ENV is absent, as the
			// reference does (docs/resource.md#lens-base-map).
			wstr("deployment.environment", "BATCH"),
		}
		workerID := jobID + "-rank" + strconv.Itoa(rank)
		for _, side := range []struct {
			name, instanceID string
			span             *jaeger.Span
			pid              int
		}{
			{"lens exec", wrapperInstanceID(workerID, rec.PPID), wrapper, rec.PPID},
			{"worker", workerID, child, rec.PID},
		} {
			p, ok := tr.SpanProcess(side.span)
			if !ok {
				t.Errorf("%s %s: no process", what, side.name)
				continue
			}
			if p.ServiceName != service {
				t.Errorf("%s %s: serviceName %q, want the script's %q", what, side.name, p.ServiceName, service)
			}
			checkTags(t, what+" "+side.name+" process", p.Tags,
				append(want, wint("process.pid", int64(side.pid)), wstr("service.instance.id", side.instanceID))...)
			wantIDs = append(wantIDs, side.instanceID)
		}
		all = append(all, identities(t, tr, map[string]*jaeger.Span{what + " lens exec": wrapper, what + " worker": child})...)
		checkTaskCarrier(t, what, rec, jobID, rank, localRank)
	}
	if len(traceByRank) != 2 || traceByRank[0] == "" || traceByRank[1] == "" || traceByRank[0] == traceByRank[1] {
		t.Fatalf("traces by SLURM_PROCID: %v, want two distinct for 0 and 1", traceByRank)
	}
	checkIdentities(t, all, jobID, wantIDs)
	checkSearch(ctx, t, j, service, map[string]string{"slurm.job.id": jobID}, traceByRank[0], traceByRank[1])
	checkSearch(ctx, t, j, service, map[string]string{"nv.dl.rank": "0"}, traceByRank[0])
	checkSearch(ctx, t, j, service, map[string]string{"nv.dl.rank": "1"}, traceByRank[1])
}

// checkTaskCarrier checks the carrier the worker received: the batch step's
// `lens env --stage sbatch` export, extended by lens exec's overrides in
// their order (--rank-from's rank, world size and local rank, then
// --role); it holds the job id and name, and no host.name (no task stage
// ran: every process detects its host live).
func checkTaskCarrier(t *testing.T, what string, rec worker.Record, jobID string, rank, localRank int) {
	t.Helper()
	segs := strings.Split(rec.Carrier, ",")
	for _, want := range []string{
		"slurm.job.id=" + jobID,
		"slurm.job.name=train-gpt",
	} {
		if !slices.Contains(segs, want) {
			t.Errorf("%s: carrier %q has no %q", what, rec.Carrier, want)
		}
	}
	overrides := carrierText("nv.dl.rank", strconv.Itoa(rank), "nv.dl.world_size", "2",
		"nv.dl.local_rank", strconv.Itoa(localRank), "nv.dl.role", "trainer")
	if !strings.HasSuffix(rec.Carrier, ","+overrides) {
		t.Errorf("%s: carrier %q does not end with lens exec's overrides %q", what, rec.Carrier, overrides)
	}
	if slices.ContainsFunc(segs, func(s string) bool { return strings.HasPrefix(s, "host.name=") }) {
		t.Errorf("%s: carrier %q has a host.name; the script runs no per-task lens env", what, rec.Carrier)
	}
}
