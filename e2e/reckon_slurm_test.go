package e2e_test

// The reckoner end to end (issue 18, docs/reckoner.md): real Slurm with real
// accounting (slurmdbd backed by MariaDB, a second throwaway cluster with two
// slurmd), the real lens binary, a real Jaeger. Three jobs — one that
// completes, one requeued once, one killed with `scancel --signal=KILL` in
// the middle of its work — each run `lens exec` on two nodes with
// NEMO_LENS_TRACE_PER_ATTEMPT=true, and each has examples/reckon.sbatch
// submitted behind it with --dependency=afterany, as the example says.
//
// Expected values come from outside lens: the attempts and their times from
// the test's own sacct call (epoch seconds, SLURM_TIME_FORMAT=%s), the
// restart count from scontrol, each attempt's trace id from the UUIDv5 name
// of docs/detection.md#run-uuid computed here (uuidv5), and the nodes from
// the tasks' own SLURMD_NODENAME.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/jaeger"
	"github.com/nemolens/lens-go/e2e/internal/slurm"
)

// acctPortOffset puts the accounting cluster's ports (SlurmctldPort and
// up, slurmd at +101/+102, slurmdbd +2, MariaDB +3) clear of the main
// cluster's.
const acctPortOffset = 40

// acctCluster returns the cluster with accounting (two nodes), started on
// first use — or in the background from TestMain (prestartAcct) — and
// stopped by TestMain.
func acctCluster(t *testing.T) *slurm.Cluster {
	t.Helper()
	gate(t)
	h.acctOnce.Do(startAcct)
	if h.acctErr != nil {
		skipOrFatal(t, "the Slurm cluster with accounting did not start: %v", h.acctErr)
	}
	return h.acct
}

func startAcct() {
	base := 6817
	if p, err := strconv.Atoi(os.Getenv("LENS_SLURM_PORT")); err == nil && p > 0 {
		base = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), slurm.StartTimeout)
	defer cancel()
	start := time.Now()
	h.acct, h.acctErr = slurm.StartWith(ctx, filepath.Join(h.root, "state-acct"), 2,
		slurm.Options{Accounting: true, Port: base + acctPortOffset, ClusterName: "lensacct"})
	h.timing("accounting cluster start (2 nodes, MariaDB + slurmdbd; includes apt when packages are missing; in the background): %v", time.Since(start).Round(time.Millisecond))
}

// prestartAcct starts the accounting cluster in the background when the
// tests that need it will run (root on Linux, Slurm e2e not switched off,
// -run selecting TestReckonSlurmJaeger), so that its start-up (MariaDB,
// slurmdbd) overlaps the other tests. TestMain waits for it before stopping.
func prestartAcct() {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 || (!inCI() && os.Getenv("LENS_E2E_SLURM") == "0") {
		return
	}
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		re, err := regexp.Compile(f.Value.String())
		if err != nil || !re.MatchString("TestReckonSlurmJaeger") {
			return
		}
	}
	go h.acctOnce.Do(startAcct)
}

// acctRow is one row of the test's own sacct call.
type acctRow struct {
	jobID, db, state, exit string
	// epoch seconds; 0 for Unknown
	submit, eligible, start, end int64
}

func (r acctRow) step() string {
	_, s, _ := strings.Cut(r.jobID, ".")
	return s
}

// sacctRows asks sacct for every record of job (-D), times in epoch seconds.
func sacctRows(ctx context.Context, t *testing.T, c *slurm.Cluster, job string) []acctRow {
	t.Helper()
	env := append(c.Env(), "SLURM_TIME_FORMAT=%s")
	res, err := c.Run(ctx, env, "sacct", "-j", job, "-D", "-P", "-n", "-o", "JobID,DBIndex,State,ExitCode,Submit,Eligible,Start,End")
	if err != nil {
		t.Fatal(err)
	}
	var rows []acctRow
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 8 {
			t.Fatalf("sacct line %q: %d fields", line, len(f))
		}
		r := acctRow{jobID: f[0], db: f[1], state: f[2], exit: f[3]}
		for i, p := range []*int64{&r.submit, &r.eligible, &r.start, &r.end} {
			if f[4+i] == "Unknown" || f[4+i] == "None" {
				continue
			}
			v, err := strconv.ParseInt(f[4+i], 10, 64)
			if err != nil {
				t.Fatalf("sacct line %q: %v", line, err)
			}
			*p = v
		}
		rows = append(rows, r)
	}
	return rows
}

// attemptRows groups rows by their accounting record, oldest record first.
func attemptRows(t *testing.T, rows []acctRow) [][]acctRow {
	t.Helper()
	by := map[string][]acctRow{}
	var dbs []string
	for _, r := range rows {
		if _, ok := by[r.db]; !ok {
			dbs = append(dbs, r.db)
		}
		by[r.db] = append(by[r.db], r)
	}
	slices.SortFunc(dbs, func(a, b string) int { return int(atoi(a) - atoi(b)) })
	var out [][]acctRow
	for _, db := range dbs {
		rs := by[db]
		if rs[0].step() != "" {
			t.Fatalf("record %s: first row %q is not the job's", db, rs[0].jobID)
		}
		out = append(out, rs)
	}
	return out
}

// wantSpan is a span the reckoner must have exported.
type wantSpan struct {
	name, step string // step: the slurm.step.id tag ("" for none)
	start, end int64
}

// reckonerSpans are the spans docs/reckoner.md#spans promises for one
// attempt, computed from the test's sacct rows.
func reckonerSpans(rows []acctRow, prev []acctRow) []wantSpan {
	alloc := rows[0]
	out := []wantSpan{
		{"slurm.phase.deferred", "", alloc.submit, alloc.eligible},
		{"slurm.phase.queued", "", alloc.eligible, alloc.start},
		{"slurm.record.allocation", "", alloc.start, alloc.end},
	}
	last := alloc.end
	var wStart, wEnd int64
	for _, r := range rows[1:] {
		kind := "step"
		if s := r.step(); s == "batch" || s == "extern" {
			kind = s
		} else {
			if wStart == 0 || r.start < wStart {
				wStart = r.start
			}
			wEnd = max(wEnd, r.end)
		}
		out = append(out, wantSpan{"slurm.record." + kind, r.step(), r.start, r.end})
		last = max(last, r.end)
	}
	if wStart != 0 {
		out = append(out, wantSpan{"slurm.phase.workload", "", wStart, wEnd})
	}
	out = append(out, wantSpan{"slurm.phase.cleanup_tail", "", alloc.end, last})
	if prev != nil {
		var pe int64
		for _, r := range prev {
			pe = max(pe, r.end)
		}
		out = append(out, wantSpan{"slurm.phase.requeue_gap", "", pe, alloc.start})
	}
	// An end point that accounting does not know gives no span.
	return slices.DeleteFunc(out, func(w wantSpan) bool { return w.start == 0 || w.end == 0 })
}

const reckonJobScript = `#!/bin/bash
set -u
# Step 0 on both nodes: lens exec in the attempt's trace.
srun -N2 -n2 --ntasks-per-node=1 bash -c 'exec "$LENS" exec --attr "e2e.node=$SLURMD_NODENAME" -- true' || exit 1
case $E2E_MODE in
requeue)
	if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then
		touch "$E2E_OUT/ready"
		sleep 300 # requeued by the test
	fi
	;;
kill)
	# Step 1: killed with SIGKILL by the test once both tasks have started.
	srun -N2 -n2 --ntasks-per-node=1 bash -c 'touch "$E2E_OUT/started.$SLURM_PROCID"; exec "$LENS" exec -- sleep 300'
	;;
esac
exit 0
`

// waitFiles polls until every file exists.
func waitFiles(ctx context.Context, t *testing.T, files ...string) {
	t.Helper()
	for {
		missing := ""
		for _, f := range files {
			if _, err := os.Stat(f); err != nil {
				missing = f
				break
			}
		}
		if missing == "" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", missing, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestReckonSlurmJaeger: the three jobs, in parallel on the accounting
// cluster.
func TestReckonSlurmJaeger(t *testing.T) {
	elapsed(t)
	gate(t)
	lensBin := lensBinary(t)
	j := jaeger.StartForTest(t)
	c := acctCluster(t)
	service := uniqueName("lens-e2e-reckon")
	for _, tc := range []struct {
		mode     string
		attempts int
		state    string // the last record's state
	}{
		{"complete", 1, "COMPLETED"},
		{"requeue", 2, "COMPLETED"},
		{"kill", 1, "CANCELLED by 0"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			reckonScenario(t, c, j, lensBin, service, tc.mode, tc.attempts, tc.state)
		})
	}
}

func reckonScenario(t *testing.T, c *slurm.Cluster, j *jaeger.Jaeger, lensBin, service, mode string, attempts int, lastState string) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	out := outDir(t)
	script := filepath.Join(out, "job.sh")
	if err := os.WriteFile(script, []byte(reckonJobScript), 0o755); err != nil {
		t.Fatal(err)
	}
	env := lensEnv(c.Env(), append(exportTo(j, service), "NEMO_LENS_TRACE_PER_ATTEMPT=true",
		"LENS="+lensBin, "E2E_OUT="+out, "E2E_MODE="+mode, "LENS_RECKON_WAIT=2m")...)
	id, err := c.Sbatch(ctx, env, "-N2", "-n2", "--ntasks-per-node=1", "--requeue", "--open-mode=append",
		"-J", "reckon-"+mode, "-o", filepath.Join(out, "job.out"), script)
	if err != nil {
		t.Fatal(err)
	}
	// The reckoner, submitted as examples/reckon.sbatch says.
	rid, err := c.Sbatch(ctx, env, "--dependency=afterany:"+id, "-o", filepath.Join(out, "reckon.out"),
		filepath.Join(repoRoot(), "examples", "reckon.sbatch"), id)
	if err != nil {
		t.Fatal(err)
	}
	switch mode {
	case "requeue":
		waitFiles(ctx, t, filepath.Join(out, "ready"))
		if err := c.Requeue(ctx, id); err != nil {
			t.Fatal(err)
		}
	case "kill":
		waitFiles(ctx, t, filepath.Join(out, "started.0"), filepath.Join(out, "started.1"))
		if _, err := c.Run(ctx, nil, "scancel", "--signal=KILL", id); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitGone(ctx, rid); err != nil {
		t.Fatal(err)
	}
	reckonOut, _ := os.ReadFile(filepath.Join(out, "reckon.out"))
	jobOut, _ := os.ReadFile(filepath.Join(out, "job.out"))
	t.Logf("job %s output:\n%s\nreckoner %s output:\n%s", id, jobOut, rid, reckonOut)
	if rr := sacctRows(ctx, t, c, rid); len(rr) == 0 || rr[0].state != "COMPLETED" || rr[0].exit != "0:0" {
		t.Fatalf("reckoner job %s: sacct %+v, want COMPLETED 0:0", rid, rr)
	}

	// Slurm's own view: the restart count, and the records.
	js, err := c.ShowJob(ctx, id)
	if err != nil || len(js) != 1 {
		t.Fatalf("scontrol show job %s: %v %v", id, js, err)
	}
	if got := js[0]["Restarts"]; got != strconv.Itoa(attempts-1) {
		t.Fatalf("job %s: Restarts=%s, want %d", id, got, attempts-1)
	}
	recs := attemptRows(t, sacctRows(ctx, t, c, id))
	if len(recs) != attempts {
		t.Fatalf("job %s: %d accounting records, want %d (one per attempt)", id, len(recs), attempts)
	}
	if got := recs[len(recs)-1][0].state; got != lastState {
		t.Fatalf("job %s: last record %s, want %s", id, got, lastState)
	}

	var prevTrace *jaeger.Trace
	for k, rows := range recs {
		name := fmt.Sprintf("nemo.lens.run/%s/%s/sr%d", c.Name, id, k)
		traceID := strings.ReplaceAll(uuidv5(name), "-", "")
		var prev []acctRow
		if k > 0 {
			prev = recs[k-1]
		}
		want := reckonerSpans(rows, prev)
		tr := waitAttemptTrace(ctx, t, j, traceID, len(want))
		checkAttemptTrace(t, k, mode, tr, want, prevTrace)
		prevTrace = tr
	}
}

// waitAttemptTrace polls Jaeger until the trace holds n reckoner spans
// (slurm.*) and the two task spans of step 0: each process's spans arrive
// in their own export.
func waitAttemptTrace(ctx context.Context, t *testing.T, j *jaeger.Jaeger, traceID string, n int) *jaeger.Trace {
	t.Helper()
	for {
		tr, err := j.WaitSpans(ctx, traceID, n+2)
		if err != nil {
			t.Fatalf("trace %s: %v", traceID, err)
		}
		var reckoner, tasks int
		for _, s := range tr.Spans {
			switch {
			case strings.HasPrefix(s.OperationName, "slurm."):
				reckoner++
			case s.OperationName == "lens exec true":
				tasks++
			}
		}
		if reckoner >= n && tasks >= 2 {
			return tr
		}
		select {
		case <-ctx.Done():
			t.Fatalf("trace %s: %d reckoner spans (want %d) and %d task spans (want 2) visible: %v", traceID, reckoner, n, tasks, ctx.Err())
		case <-time.After(jaeger.PollInterval):
		}
	}
}

// checkAttemptTrace: the reckoner's spans with sacct's times, the tasks'
// spans from both nodes, and the link to the previous attempt.
//
// In the kill case the tasks of the killed step may have exported their
// lens exec span too: Slurm ends a job cancelled with SIGKILL like any
// cancelled job (SIGCONT and SIGTERM, then SIGKILL after KillWait), and lens
// exec exports the span of the command that SIGTERM ended. They are allowed,
// in this trace, not required.
func checkAttemptTrace(t *testing.T, k int, mode string, tr *jaeger.Trace, want []wantSpan, prev *jaeger.Trace) {
	t.Helper()
	var reckoner, tasks, killed []*jaeger.Span
	for i := range tr.Spans {
		s := &tr.Spans[i]
		switch {
		case strings.HasPrefix(s.OperationName, "slurm."):
			reckoner = append(reckoner, s)
		case s.OperationName == "lens exec true":
			tasks = append(tasks, s)
		case mode == "kill" && s.OperationName == "lens exec sleep":
			killed = append(killed, s)
		default:
			t.Errorf("attempt %d: unexpected span %q", k, s.OperationName)
		}
	}
	if len(reckoner) != len(want) {
		t.Errorf("attempt %d: %d reckoner spans, want %d: %+v", k, len(reckoner), len(want), want)
	}
	for _, w := range want {
		found := false
		for _, s := range reckoner {
			step, _ := tagString(s.Tags, "slurm.step.id")
			if s.OperationName != w.name || step != w.step {
				continue
			}
			found = true
			if int64(s.StartTime) != w.start*1e6 || int64(s.StartTime+s.Duration) != w.end*1e6 {
				t.Errorf("attempt %d: %s %s: %d..%d µs, want sacct's %d..%d s", k, w.name, w.step, s.StartTime, s.StartTime+s.Duration, w.start, w.end)
			}
		}
		if !found {
			t.Errorf("attempt %d: no span %s (step %q) in trace %s", k, w.name, w.step, tr.TraceID)
		}
	}
	// Queue wait = start − eligible, to the second.
	if q, ok := tr.Span("slurm.phase.queued"); ok && int64(q.Duration) != (want[1].end-want[1].start)*1e6 {
		t.Errorf("attempt %d: queue wait %d µs, want %d s", k, q.Duration, want[1].end-want[1].start)
	}
	var nodes []string
	for _, s := range tasks {
		if p, ok := tr.SpanProcess(s); ok {
			n, _ := tagString(p.Tags, "e2e.node")
			nodes = append(nodes, n)
		}
	}
	slices.Sort(nodes)
	if len(killed) > 2 {
		t.Errorf("attempt %d: %d spans of the killed step's 2 tasks", k, len(killed))
	}
	if !slices.Equal(nodes, []string{"node1", "node2"}) {
		t.Errorf("attempt %d: lens exec spans from nodes %q, want node1 and node2 in the reckoner's trace", k, nodes)
	}
	if prev == nil {
		return
	}
	alloc, ok := prev.Span("slurm.record.allocation")
	if !ok {
		t.Fatalf("attempt %d: the previous trace has no allocation span", k)
	}
	for _, s := range append(reckoner, tasks...) {
		linked := slices.ContainsFunc(s.References, func(r jaeger.Reference) bool {
			return r.TraceID == prev.TraceID && r.SpanID == alloc.SpanID
		})
		if !linked {
			t.Errorf("attempt %d: %s is not linked to the previous attempt's allocation span %s/%s: %+v", k, s.OperationName, prev.TraceID, alloc.SpanID, s.References)
		}
	}
}
