package e2e_test

// One job, one identity: every process of a job — a launcher, the workers it
// starts, a lens exec wrapper and the command it wraps — reports the same
// nemo.run.id and a service.instance.id of its own, and (when a launcher
// starts them) they are one trace. The rules, stated where they are
// asserted, are those of docs/resource.md#run-identity-across-processes,
// docs/resource.md#run-id-fill-in-order,
// docs/resource.md#instance-ids-of-wrappers-and-children and
// docs/resource.md#trace-context-across-exec. Every expected id is built
// here from the inputs (the run id only the launcher knows, Slurm's job id,
// the TORCHELASTIC_RUN_ID the test chose, the pids the processes recorded)
// and those rules.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/jaeger"
	"github.com/nemolens/lens-go/e2e/internal/worker"
)

var (
	// randomRunIDRE is the random run id of the fill-in: 12 lowercase hex
	// digits (docs/resource.md#run-id-fill-in).
	randomRunIDRE = regexp.MustCompile(`^[0-9a-f]{12}$`)
	// uuidV4RE is a canonical RFC 4122 UUID version 4, the instance id of a
	// process with neither a rank nor an explicit id.
	uuidV4RE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
)

// wrapperInstanceID is lens exec's service.instance.id: the id the command
// reports, then ".lens-exec.<lens's pid>".
func wrapperInstanceID(commandID string, lensPID int) string {
	return commandID + ".lens-exec." + strconv.Itoa(lensPID)
}

// traceparentOf is the W3C traceparent of a sampled span.
func traceparentOf(traceID, spanID string) string { return "00-" + traceID + "-" + spanID + "-01" }

// tagString returns the string value of tag key ("" and false when it is
// absent or not a string).
func tagString(tags []jaeger.Tag, key string) (string, bool) {
	for _, tag := range tags {
		if tag.Key == key {
			return tag.AsString()
		}
	}
	return "", false
}

// spanByID returns the span of tr with the given id.
func spanByID(tr *jaeger.Trace, id string) (*jaeger.Span, bool) {
	for i := range tr.Spans {
		if tr.Spans[i].SpanID == id {
			return &tr.Spans[i], true
		}
	}
	return nil, false
}

// childOf is the references of a span whose parent is parent.
func childOf(parent *jaeger.Span) []jaeger.Reference {
	return []jaeger.Reference{{RefType: "CHILD_OF", TraceID: parent.TraceID, SpanID: parent.SpanID}}
}

// processIdentity is what one process of a trace reported.
type processIdentity struct {
	what       string // for messages
	span       *jaeger.Span
	runID      string
	instanceID string
}

// identities reads nemo.run.id and service.instance.id of each span's
// process; what names the spans for messages.
func identities(t *testing.T, tr *jaeger.Trace, spans map[string]*jaeger.Span) []processIdentity {
	t.Helper()
	var out []processIdentity
	for what, s := range spans {
		p, ok := tr.SpanProcess(s)
		if !ok {
			t.Errorf("%s: span %s has no process", what, s.SpanID)
			continue
		}
		id := processIdentity{what: what, span: s}
		id.runID, _ = tagString(p.Tags, "nemo.run.id")
		id.instanceID, _ = tagString(p.Tags, "service.instance.id")
		out = append(out, id)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].what < out[k].what })
	return out
}

// checkIdentities requires every process to report runID and the instance
// ids to be exactly want (one per process, all distinct).
func checkIdentities(t *testing.T, ids []processIdentity, runID string, want []string) {
	t.Helper()
	var got []string
	for _, id := range ids {
		if id.runID != runID {
			t.Errorf("%s: nemo.run.id %q, want the job's %q", id.what, id.runID, runID)
		}
		got = append(got, id.instanceID)
	}
	sort.Strings(got)
	want = slices.Clone(want)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("service.instance.id of the %d processes: %q, want %q", len(ids), got, want)
	}
	if c := slices.Compact(slices.Clone(got)); len(c) != len(got) {
		t.Errorf("service.instance.id values %q are not distinct", got)
	}
}

// TestJobIdentityJaeger (issue "One job, one identity"): a whole job outside
// Slurm and torchrun, with NEMO_LENS_RUN_ID unset. A Go launcher (worker
// -mode launcher: lens.FromEnv + lens.Setup, a span "launch") starts three
// Go workers with carrier.ChildEnv(span context, {nv.dl.rank: k}) and one
// `lens exec --attr nv.dl.rank=3 -- worker` with carrier.ChildEnv(span
// context, nil), waits for them, ends its span and shuts down.
//
// The six processes (launcher, three workers, the lens exec wrapper, the
// worker under it) must come back from Jaeger with:
//   - one nemo.run.id: the launcher's, a random 12-hex-digit id that only the
//     launcher's record knows (the fill-in found no SLURM_JOB_ID and no
//     TORCHELASTIC_RUN_ID), handed down in NEMO_LENS_RUN_ID;
//   - six distinct service.instance.id values, exactly: "<run>-rank<k>" for
//     the workers (k = 0..3; rank 3 is the worker under lens exec),
//     "<run>-rank3.lens-exec.<lens's pid>" for the wrapper, and a random UUID
//     v4 for the launcher, which has no rank;
//   - ONE trace: the workers' root spans and the wrapper's span are CHILD_OF
//     the launcher's span (TRACEPARENT, continued by lens.Setup without code
//     in the worker), the worker under lens exec is CHILD_OF the wrapper's.
//
// A tag search on nv.dl.rank=3 finds that trace, with both the wrapper's
// and its worker's spans in it.
func TestJobIdentityJaeger(t *testing.T) {
	elapsed(t)
	j := jaeger.StartForTest(t)
	workerBin := workerBinary(t)
	lensBin := lensBinary(t)
	host := hostname(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	service := uniqueName("lens-e2e-job")
	out := outDir(t)
	// lensEnv removes NEMO_LENS_*, SLURM_*, TORCHELASTIC_*, RANK, ...: the
	// launcher has no run id and no rank of its own.
	env := lensEnv(os.Environ(), exportTo(j, service)...)
	runCmd(ctx, t, env, 0, workerBin, "-mode", "launcher", "-ranks", "3", "-lens", lensBin,
		"-span", "launch", "-child-span", "rank-work", "-exec-span", "exec-work",
		"-out", out, "-label", "launcher", "-child-label", "w", "-exec-label", "xw")

	launcher := records(t, out, "launcher", 1)[0]
	workers := records(t, out, "w", 3)
	execd := records(t, out, "xw", 1)[0]
	for _, name := range []string{"NEMO_LENS_RUN_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"} {
		if v, ok := launcher.Env[name]; ok {
			t.Fatalf("launcher environment has %s=%q; the test must start it without one", name, v)
		}
	}
	runID := launcher.RunID
	if !randomRunIDRE.MatchString(runID) {
		t.Fatalf("launcher run id %q, want a random id of 12 lowercase hex digits", runID)
	}
	launchParent := traceparentOf(launcher.TraceID, launcher.SpanID)

	// The launcher's view of its children: ranks 0-2 (Go workers) and 3
	// (lens exec), each handed the run id and the launch span's context.
	if len(launcher.Children) != 4 {
		t.Fatalf("launcher record: %d children, want 4: %+v", len(launcher.Children), launcher.Children)
	}
	childByPID := map[int]worker.Child{}
	var lensPID int
	for i, c := range launcher.Children {
		if c.Rank != i || c.Exec != (i == 3) || c.ExitCode != 0 {
			t.Errorf("launcher child %d: rank %d, exec %v, exit %d; want rank %d, exec %v, exit 0", i, c.Rank, c.Exec, c.ExitCode, i, i == 3)
		}
		if c.RunID != runID {
			t.Errorf("launcher child %d: NEMO_LENS_RUN_ID=%q in its environment, want the launcher's %q", i, c.RunID, runID)
		}
		if c.Traceparent != launchParent {
			t.Errorf("launcher child %d: TRACEPARENT=%q, want the launch span's %q", i, c.Traceparent, launchParent)
		}
		childByPID[c.PID] = c
		if c.Exec {
			lensPID = c.PID
		}
	}

	// What the processes received and did.
	rankOf := map[int]int{} // worker pid -> rank
	for _, w := range workers {
		c, ok := childByPID[w.PID]
		what := fmt.Sprintf("worker pid %d", w.PID)
		if !ok || c.Exec || w.PPID != launcher.PID {
			t.Fatalf("%s (ppid %d) is not a Go worker child of the launcher (pid %d): %+v", what, w.PPID, launcher.PID, launcher.Children)
		}
		rankOf[w.PID] = c.Rank
		if want := carrierText("nv.dl.rank", strconv.Itoa(c.Rank)); w.Carrier != want {
			t.Errorf("%s: carrier %q, want %q", what, w.Carrier, want)
		}
		if w.Env["NEMO_LENS_RUN_ID"] != runID || w.RunID != runID {
			t.Errorf("%s: NEMO_LENS_RUN_ID=%q, Setup's run id %q; want %q", what, w.Env["NEMO_LENS_RUN_ID"], w.RunID, runID)
		}
		if w.TraceID != launcher.TraceID || w.ParentSpanID != launcher.SpanID {
			t.Errorf("%s: span in trace %s with parent %q, want trace %s, parent %s (the launch span)", what, w.TraceID, w.ParentSpanID, launcher.TraceID, launcher.SpanID)
		}
	}
	if execd.PPID != lensPID {
		t.Fatalf("worker under lens exec: ppid %d, want lens exec's pid %d", execd.PPID, lensPID)
	}
	if want := carrierText("nv.dl.rank", "3"); execd.Carrier != want {
		t.Errorf("worker under lens exec: carrier %q, want %q", execd.Carrier, want)
	}
	if execd.Env["NEMO_LENS_RUN_ID"] != runID || execd.RunID != runID {
		t.Errorf("worker under lens exec: NEMO_LENS_RUN_ID=%q, Setup's run id %q; want %q", execd.Env["NEMO_LENS_RUN_ID"], execd.RunID, runID)
	}

	// Jaeger: one trace of six spans.
	tr, err := j.WaitSpans(ctx, launcher.TraceID, 6)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Spans) != 6 {
		t.Fatalf("trace %s: %d spans, want 6: %+v", tr.TraceID, len(tr.Spans), tr.Spans)
	}
	launch, ok := spanByID(tr, launcher.SpanID)
	if !ok || launch.OperationName != "launch" {
		t.Fatalf("trace %s: no launch span %s", tr.TraceID, launcher.SpanID)
	}
	if len(launch.References) != 0 {
		t.Errorf("launch span references %v, want a root span", launch.References)
	}
	spans := map[string]*jaeger.Span{"launcher": launch}
	for _, w := range workers {
		s, ok := spanByID(tr, w.SpanID)
		what := fmt.Sprintf("worker rank %d", rankOf[w.PID])
		if !ok || s.OperationName != "rank-work" {
			t.Fatalf("%s: span %s not in the trace", what, w.SpanID)
		}
		if !slices.Equal(s.References, childOf(launch)) {
			t.Errorf("%s: span references %v, want CHILD_OF the launch span %s", what, s.References, launch.SpanID)
		}
		spans[what] = s
	}
	wrapper, ok := tr.Span("lens exec " + filepath.Base(workerBin))
	if !ok {
		t.Fatalf("trace %s: no lens exec span", tr.TraceID)
	}
	if !slices.Equal(wrapper.References, childOf(launch)) {
		t.Errorf("lens exec span references %v, want CHILD_OF the launch span %s", wrapper.References, launch.SpanID)
	}
	child, ok := spanByID(tr, execd.SpanID)
	if !ok || child.OperationName != "exec-work" {
		t.Fatalf("worker under lens exec: span %s not in the trace", execd.SpanID)
	}
	checkParent(t, tr, wrapper, child, execd)
	spans["lens exec"], spans["worker under lens exec"] = wrapper, child

	// Each process: the run id, its own instance id, its pid, its rank.
	launcherID, _ := tagString(processTags(t, tr, launch), "service.instance.id")
	if !uuidV4RE.MatchString(launcherID) {
		t.Errorf("launcher service.instance.id %q, want a random UUID v4 (it has no rank and no explicit id)", launcherID)
	}
	if rid, ok := attrString(launcher, "service.instance.id"); !ok || rid != launcherID {
		t.Errorf("launcher: Jaeger has service.instance.id %q, its Setup reported %q", launcherID, rid)
	}
	common := func(pid int) []tagWant {
		return []tagWant{wstr("nemo.run.id", runID), wstr("host.name", host), wstr("telemetry.sdk.language", "go"), wint("process.pid", int64(pid))}
	}
	checkTags(t, "launcher process", processTags(t, tr, launch), common(launcher.PID)...)
	noTag(t, "launcher process", processTags(t, tr, launch), "nv.dl.rank")
	want := []string{launcherID}
	for _, w := range workers {
		k := rankOf[w.PID]
		id := runID + "-rank" + strconv.Itoa(k)
		want = append(want, id)
		what := fmt.Sprintf("worker rank %d", k)
		checkTags(t, what+" process", processTags(t, tr, spans[what]),
			append(common(w.PID), wint("nv.dl.rank", int64(k)), wstr("service.instance.id", id))...)
	}
	execID := runID + "-rank3"
	wrapperID := wrapperInstanceID(execID, lensPID)
	want = append(want, execID, wrapperID)
	checkTags(t, "worker under lens exec process", processTags(t, tr, child),
		append(common(execd.PID), wint("nv.dl.rank", 3), wstr("service.instance.id", execID))...)
	checkTags(t, "lens exec process", processTags(t, tr, wrapper),
		append(common(lensPID), wint("nv.dl.rank", 3), wstr("service.instance.id", wrapperID))...)
	for what, s := range spans {
		if p, ok := tr.SpanProcess(s); ok && p.ServiceName != service {
			t.Errorf("%s: serviceName %q, want %q", what, p.ServiceName, service)
		}
	}
	checkIdentities(t, identities(t, tr, spans), runID, want)
	if len(tr.Processes) != 6 {
		t.Errorf("trace %s: %d distinct processes (resources), want 6", tr.TraceID, len(tr.Processes))
	}

	// Searches: the rank of the lens exec pair, and the run id, find the one
	// trace; the rank-3 trace holds the wrapper's and its worker's spans.
	found, err := j.WaitTraces(ctx, service, map[string]string{"nv.dl.rank": "3"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if g := ids(found); !slices.Equal(g, []string{tr.TraceID}) {
		t.Errorf("search nv.dl.rank=3: traces %v, want [%s]", g, tr.TraceID)
	} else {
		for _, id := range []string{wrapper.SpanID, child.SpanID} {
			if _, ok := spanByID(&found[0], id); !ok {
				t.Errorf("search nv.dl.rank=3: trace lacks span %s", id)
			}
		}
	}
	checkSearch(ctx, t, j, service, map[string]string{"nemo.run.id": runID}, tr.TraceID)
	checkSearch(ctx, t, j, service, nil, tr.TraceID)
}

// processTags returns the tags of span s's process (failing the test when
// it has none).
func processTags(t *testing.T, tr *jaeger.Trace, s *jaeger.Span) []jaeger.Tag {
	t.Helper()
	p, ok := tr.SpanProcess(s)
	if !ok {
		t.Fatalf("span %s (%s): no process", s.SpanID, s.OperationName)
	}
	return p.Tags
}

// attrString returns the string attribute key of a worker record's resource.
func attrString(rec worker.Record, key string) (string, bool) {
	for _, a := range rec.Resource {
		if a.Key == key {
			return a.String()
		}
	}
	return "", false
}

// TestJobIdentitySlurmJaeger: the same job shape under the real Slurm,
// `srun -N1 -n2 lens exec --rank-from slurm -- worker`, with no
// NEMO_LENS_RUN_ID and no carrier in the submitter environment. Each task's
// lens exec takes nv.dl.rank, nv.dl.world_size and nv.dl.local_rank from
// SLURM_PROCID, SLURM_NTASKS and SLURM_LOCALID (docs/detection.md#detect-ranks),
// so the ranks come from Slurm itself. The run id is the job id
// (SLURM_JOB_ID, first in the fill-in), which lens exec hands to the
// worker. Asserted from Jaeger: per task one trace, the worker CHILD_OF the
// wrapper; all four processes report nemo.run.id = the job id scontrol
// reports; the instance ids are "<job>-rank<k>" (worker) and
// "<job>-rank<k>.lens-exec.<lens pid>" (wrapper), four distinct values; the
// ranks equal the SLURM_PROCID each task recorded.
func TestJobIdentitySlurmJaeger(t *testing.T) {
	elapsed(t)
	gate(t)
	j := jaeger.StartForTest(t)
	workerBin := workerBinary(t)
	lensBin := lensBinary(t)
	c := needCluster(t, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	service := uniqueName("lens-e2e-srun-exec")
	name := uniqueName("lens-srun-exec")
	out := outDir(t)
	env := lensEnv(c.Env(), exportTo(j, service)...)
	if _, err := c.Srun(ctx, env, "-N1", "-n2", "-J", name, lensBin, "exec", "--rank-from", "slurm", "--",
		workerBin, "-span", "task-work", "-out", out, "-label", "task"); err != nil {
		t.Fatal(err)
	}
	jobs, err := c.JobsNamed(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 {
		t.Fatalf("scontrol: %d jobs named %q, want 1", len(jobs), name)
	}
	jobID := jobs[0]["JobId"]
	if err := c.WaitGone(ctx, jobID); err != nil {
		t.Fatal(err)
	}
	js, err := c.ShowJob(ctx, jobID)
	if err != nil {
		t.Fatal(err)
	}
	if len(js) != 1 || js[0]["JobState"] != "COMPLETED" || js[0]["ExitCode"] != "0:0" || js[0]["NumTasks"] != "2" {
		t.Fatalf("job %s: %v, want COMPLETED 0:0 with NumTasks=2", jobID, js)
	}

	recs := records(t, out, "task", 2)
	var procIDs []string
	var all []processIdentity
	var want []string
	traceByRank := map[int]string{}
	for _, rec := range recs {
		rank, err := strconv.Atoi(rec.SlurmProcID)
		if err != nil {
			t.Fatalf("%s: SLURM_PROCID %q", filepath.Base(rec.File), rec.SlurmProcID)
		}
		procIDs = append(procIDs, rec.SlurmProcID)
		localRank, err := strconv.Atoi(rec.Env["SLURM_LOCALID"])
		if err != nil {
			t.Fatalf("%s: SLURM_LOCALID %q", filepath.Base(rec.File), rec.Env["SLURM_LOCALID"])
		}
		what := fmt.Sprintf("task %d", rank)
		if got := rec.Env["SLURM_JOB_ID"]; got != jobID {
			t.Errorf("%s: SLURM_JOB_ID=%q, scontrol says %s", what, got, jobID)
		}
		if rec.Env["NEMO_LENS_RUN_ID"] != jobID || rec.RunID != jobID {
			t.Errorf("%s: worker got NEMO_LENS_RUN_ID=%q (Setup's run id %q), want the job id %s from lens exec",
				what, rec.Env["NEMO_LENS_RUN_ID"], rec.RunID, jobID)
		}
		// lens exec's overrides, in --rank-from order: rank, world size,
		// local rank.
		if want := carrierText("nv.dl.rank", strconv.Itoa(rank), "nv.dl.world_size", js[0]["NumTasks"], "nv.dl.local_rank", strconv.Itoa(localRank)); rec.Carrier != want {
			t.Errorf("%s: carrier %q, want %q", what, rec.Carrier, want)
		}
		tr, err := j.WaitSpans(ctx, rec.TraceID, 2)
		if err != nil {
			t.Fatal(err)
		}
		traceByRank[rank] = tr.TraceID
		wrapper, child := execSpans(t, tr, "lens exec "+filepath.Base(workerBin), "task-work", 2)
		if wrapper == nil || child == nil {
			continue
		}
		checkParent(t, tr, wrapper, child, rec)
		if len(wrapper.References) != 0 {
			t.Errorf("%s: wrapper span references %v, want a root span (no TRACEPARENT in the task)", what, wrapper.References)
		}
		workerID := jobID + "-rank" + strconv.Itoa(rank)
		wrapperID := wrapperInstanceID(workerID, rec.PPID)
		ranks := []tagWant{
			wint("nv.dl.rank", int64(rank)),
			wint("nv.dl.world_size", 2),
			wint("nv.dl.local_rank", int64(localRank)),
			wstr("nemo.run.id", jobID),
			wstr("slurm.job.id", jobID),
			wstr("slurm.job.name", name),
		}
		checkTags(t, what+" worker process", processTags(t, tr, child), append(ranks, wstr("service.instance.id", workerID), wint("process.pid", int64(rec.PID)))...)
		checkTags(t, what+" lens exec process", processTags(t, tr, wrapper), append(ranks, wstr("service.instance.id", wrapperID), wint("process.pid", int64(rec.PPID)))...)
		all = append(all, identities(t, tr, map[string]*jaeger.Span{what + " worker": child, what + " lens exec": wrapper})...)
		want = append(want, workerID, wrapperID)
	}
	sort.Strings(procIDs)
	if !slices.Equal(procIDs, []string{"0", "1"}) {
		t.Fatalf("SLURM_PROCID of the tasks: %v, want [0 1]", procIDs)
	}
	checkIdentities(t, all, jobID, want)
	if traceByRank[0] == traceByRank[1] {
		t.Errorf("both tasks exported trace %s, want one trace per task", traceByRank[0])
	}
	checkSearch(ctx, t, j, service, map[string]string{"nemo.run.id": jobID}, traceByRank[0], traceByRank[1])
	checkSearch(ctx, t, j, service, map[string]string{"nv.dl.rank": "1"}, traceByRank[1])
}

// TestTorchrunRunIDJaeger (issue 10, multi-node torchrun outside Slurm): two
// processes that no common parent starts — the test starts each, as two
// nodes' torchrun agents would — share only TORCHELASTIC_RUN_ID (torchrun's
// --rdzv-id) and get RANK/WORLD_SIZE/LOCAL_RANK as torchrun sets them;
// nothing else (no NEMO_LENS_RUN_ID, no SLURM_*). Node 0 runs
// `lens exec --rank-from torchrun -- worker`, node 1 the worker with
// lens.WithRankFrom(lens.RankFromTorchrun). Expected from Jaeger: all three
// processes report nemo.run.id = TORCHELASTIC_RUN_ID (the fill-in takes it
// when SLURM_JOB_ID is empty and it is not torchrun's default "none"), the
// workers "<id>-rank0" and "<id>-rank1", the wrapper
// "<id>-rank0.lens-exec.<pid>", with the ranks as integers.
//
// With torchrun's default TORCHELASTIC_RUN_ID=none (no --rdzv-id), which
// every such job shares, the id is not used: each process draws its own
// random run id.
func TestTorchrunRunIDJaeger(t *testing.T) {
	elapsed(t)
	j := jaeger.StartForTest(t)
	workerBin := workerBinary(t)
	lensBin := lensBinary(t)

	t.Run("rdzv-id", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		service := uniqueName("lens-e2e-torchrun")
		rdzv := uniqueName("rdzv")
		out := outDir(t)
		node := func(rank int) []string {
			return lensEnv(os.Environ(), append(exportTo(j, service),
				"TORCHELASTIC_RUN_ID="+rdzv, "RANK="+strconv.Itoa(rank), "WORLD_SIZE=2", "LOCAL_RANK=0")...)
		}
		runCmd(ctx, t, node(0), 0, lensBin, "exec", "--rank-from", "torchrun", "--",
			workerBin, "-span", "node-work", "-out", out, "-label", "node0")
		runCmd(ctx, t, node(1), 0, workerBin, "-rank-from", "torchrun", "-span", "node-work", "-out", out, "-label", "node1")

		n0 := records(t, out, "node0", 1)[0]
		n1 := records(t, out, "node1", 1)[0]
		if n0.RunID != rdzv || n1.RunID != rdzv {
			t.Errorf("Setup's run ids %q (node 0) and %q (node 1), want TORCHELASTIC_RUN_ID %q", n0.RunID, n1.RunID, rdzv)
		}
		if v, ok := n1.Env["NEMO_LENS_RUN_ID"]; ok {
			t.Errorf("node 1 worker got NEMO_LENS_RUN_ID=%q; the test sets none", v)
		}
		if n0.Env["NEMO_LENS_RUN_ID"] != rdzv {
			t.Errorf("node 0 worker got NEMO_LENS_RUN_ID=%q from lens exec, want %q", n0.Env["NEMO_LENS_RUN_ID"], rdzv)
		}

		tr0, err := j.WaitSpans(ctx, n0.TraceID, 2)
		if err != nil {
			t.Fatal(err)
		}
		tr1, err := j.Trace(ctx, n1.TraceID)
		if err != nil {
			t.Fatal(err)
		}
		if tr0.TraceID == tr1.TraceID {
			t.Fatalf("the two nodes share trace %s; they are not parent and child", tr0.TraceID)
		}
		wrapper, child := execSpans(t, tr0, "lens exec "+filepath.Base(workerBin), "node-work", 2)
		if wrapper == nil || child == nil {
			return
		}
		checkParent(t, tr0, wrapper, child, n0)
		if len(tr1.Spans) != 1 || tr1.Spans[0].SpanID != n1.SpanID || len(tr1.Spans[0].References) != 0 {
			t.Fatalf("node 1 trace %s: spans %+v, want its one root span %s", tr1.TraceID, tr1.Spans, n1.SpanID)
		}
		rank := func(k int) []tagWant {
			return []tagWant{wint("nv.dl.rank", int64(k)), wint("nv.dl.world_size", 2), wint("nv.dl.local_rank", 0), wstr("nemo.run.id", rdzv)}
		}
		w0, w1 := rdzv+"-rank0", rdzv+"-rank1"
		wrapperID := wrapperInstanceID(w0, n0.PPID)
		checkTags(t, "node 0 worker", processTags(t, tr0, child), append(rank(0), wstr("service.instance.id", w0))...)
		checkTags(t, "node 0 lens exec", processTags(t, tr0, wrapper), append(rank(0), wstr("service.instance.id", wrapperID), wint("process.pid", int64(n0.PPID)))...)
		checkTags(t, "node 1 worker", processTags(t, tr1, &tr1.Spans[0]), append(rank(1), wstr("service.instance.id", w1))...)
		all := append(identities(t, tr0, map[string]*jaeger.Span{"node 0 worker": child, "node 0 lens exec": wrapper}),
			identities(t, tr1, map[string]*jaeger.Span{"node 1 worker": &tr1.Spans[0]})...)
		checkIdentities(t, all, rdzv, []string{w0, w1, wrapperID})
		checkSearch(ctx, t, j, service, map[string]string{"nemo.run.id": rdzv}, tr0.TraceID, tr1.TraceID)
	})

	t.Run("default-none", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		service := uniqueName("lens-e2e-torchrun-none")
		out := outDir(t)
		var runIDs []string
		for k := range 2 {
			env := lensEnv(os.Environ(), append(exportTo(j, service),
				"TORCHELASTIC_RUN_ID=none", "RANK="+strconv.Itoa(k), "WORLD_SIZE=2", "LOCAL_RANK=0")...)
			label := "none" + strconv.Itoa(k)
			runCmd(ctx, t, env, 0, workerBin, "-rank-from", "torchrun", "-span", "node-work", "-out", out, "-label", label)
			rec := records(t, out, label, 1)[0]
			tr, err := j.Trace(ctx, rec.TraceID)
			if err != nil {
				t.Fatal(err)
			}
			p, err := tr.SingleProcess()
			if err != nil {
				t.Fatal(err)
			}
			id, _ := tagString(p.Tags, "nemo.run.id")
			if !randomRunIDRE.MatchString(id) || id != rec.RunID {
				t.Errorf("rank %d: nemo.run.id %q (Setup's %q), want a random 12-hex-digit id, not torchrun's \"none\"", k, id, rec.RunID)
			}
			checkTags(t, fmt.Sprintf("rank %d", k), p.Tags, wint("nv.dl.rank", int64(k)), wstr("service.instance.id", id+"-rank"+strconv.Itoa(k)))
			runIDs = append(runIDs, id)
		}
		if runIDs[0] == runIDs[1] {
			t.Errorf("two processes drew the same random run id %q", runIDs[0])
		}
	})
}
