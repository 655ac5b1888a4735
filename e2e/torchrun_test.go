package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/jaeger"
	"github.com/nemolens/lens-go/e2e/internal/launch"
	"github.com/nemolens/lens-go/e2e/internal/worker"
)

// torchrunLayouts are the ways the torchrun tests run an agent: bare; lens
// exec around the agent; lens exec as each worker's command (--no_python).
var torchrunLayouts = []string{"bare", "lens-around-agent", "lens-per-worker"}

// torchrunJob is one torchrun job of the tests: agents on this host,
// joined by a c10d rendezvous.
type torchrunJob struct {
	layout  string
	agents  int
	workers int // per agent
	rdzv    string
	restart int // --max_restarts
	env     []string
	lens    string
	py      string
	pyArgs  []string // after --out and --label
	out     string
}

// argv returns the command line of agent k.
func (j *torchrunJob) argv(endpoint string) []string {
	tr := launch.Torchrun{NNodes: j.agents, NProcPerNode: j.workers, RdzvID: j.rdzv, Endpoint: endpoint, MaxRestarts: j.restart}
	worker := append([]string{j.py, "--out", j.out, "--label", "w"}, j.pyArgs...)
	switch j.layout {
	case "lens-around-agent":
		return append([]string{j.lens, "exec", "--"}, tr.Args(worker...)...)
	case "lens-per-worker":
		tr.NoPython = true
		return tr.Args(append([]string{j.lens, "exec", "--rank-from", "torchrun", "--", launch.SystemPython}, worker...)...)
	default:
		return tr.Args(worker...)
	}
}

// start starts the agents, each in its own process group (a job of a
// shell), agent k with LENS_E2E_NODE=a, b, ….
func (j *torchrunJob) start(t *testing.T) []*started {
	t.Helper()
	port, err := launch.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	var agents []*started
	for k := range j.agents {
		argv := j.argv(fmt.Sprintf("127.0.0.1:%d", port))
		env := append(slices.Clone(j.env), "LENS_E2E_NODE="+string(rune('a'+k)))
		agents = append(agents, start(t, env, true, argv[0], argv[1:]...))
	}
	return agents
}

// TestTorchrunReal (issues 25 and 28): the real torchrun (Debian's
// python3-torch 1.13, /usr/bin/python3 -m torch.distributed.run), two agents
// on this host joined by a c10d rendezvous, two workers each doing a gloo
// all_reduce, in three layouts: bare, lens exec around each agent, lens exec
// as each worker's command. Each Python worker first runs the Go worker
// (lens.Setup with lens.WithRankFrom("torchrun"), one span to Jaeger).
//
// One worker of the second agent fails in the first round (--max_restarts
// 2): every layout must give what bare torchrun gives — two rounds, the
// same statuses (the agents' and the workers'), and the restart counts
// torchrun hands each node, measured bare: the failing node counts 0, 1,
// the other 0, 0 (pytorch#108158). Every Go worker reports the rendezvous id
// as its run id, also when a lens exec around its agent drew a random one
// (docs/resource.md#run-id-launcher), and the instance ids of a round are
// distinct. With lens exec as each worker's command and
// NEMO_LENS_TRACE_PER_ATTEMPT=true, every process of a round — the four
// lens exec spans and the four Go workers' spans, on both agents — is in
// one trace, whose id the test derives from the round's MASTER_ADDR and
// MASTER_PORT (docs/tracing.md#attempt-restarts), and the two rounds are
// two traces; so are the four Go workers' spans of a round, bare. In both
// layouts the roots of the second round link to the first round's anchor,
// each node knowing the first round from its own record of rounds under
// XDG_RUNTIME_DIR (docs/tracing.md#round-links), and the first round's
// roots link to nothing.
func TestTorchrunReal(t *testing.T) {
	elapsed(t)
	needTorch(t)
	lensBin, workerBin, py := lensBinary(t), workerBinary(t), pyWorker(t)
	j := jaeger.StartForTest(t)

	type round struct {
		port    string
		failing int
		recs    []launch.PyRecord
	}
	type result struct {
		statuses []int
		rounds   []round // in order: the failing one first
		goRecs   map[int][]worker.Record
		out      string
	}
	run := func(t *testing.T, layout string) result {
		ctx, cancel := context.WithTimeout(t.Context(), 240*time.Second)
		defer cancel()
		service := uniqueName("lens-e2e-torchrun")
		runtime := filepath.Join(t.TempDir(), "run") // the nodes' records of rounds, this layout's own
		if err := os.Mkdir(runtime, 0o700); err != nil {
			t.Fatal(err)
		}
		extra := append(exportTo(j, service), "NEMO_LENS_TRACE_PER_ATTEMPT=true", "XDG_RUNTIME_DIR="+runtime)
		job := &torchrunJob{layout: layout, agents: 2, workers: 2, rdzv: uniqueName("rdzv"), restart: 2,
			env: lensEnv(os.Environ(), extra...), lens: lensBin, py: py, out: outDir(t)}
		job.pyArgs = []string{"--torch", "--fail-if", "LENS_E2E_NODE=b", "--fail-until", "1", "--",
			workerBin, "-rank-from", "torchrun", "-span", "round-work", "-out", job.out, "-label", "g"}
		agents := job.start(t)
		var res result
		var logs []string
		for _, a := range agents {
			res.statuses = append(res.statuses, a.wait(ctx, t))
			logs = append(logs, a.out.String())
		}
		res.out = strings.Join(logs, "\n---- next agent\n")
		recs, err := launch.ReadPy(job.out, "w")
		if err != nil {
			t.Fatal(err)
		}
		byPort := map[string]*round{}
		for _, r := range recs {
			p := r.Env["MASTER_PORT"]
			if byPort[p] == nil {
				byPort[p] = &round{port: p}
			}
			byPort[p].recs = append(byPort[p].recs, r)
			if r.FailingWorkers != nil {
				byPort[p].failing = *r.FailingWorkers
			}
		}
		for _, r := range byPort {
			res.rounds = append(res.rounds, *r)
		}
		slices.SortFunc(res.rounds, func(a, b round) int { return b.failing - a.failing })
		gos, err := worker.Read(job.out, "g")
		if err != nil {
			t.Fatal(err)
		}
		res.goRecs = map[int][]worker.Record{}
		for _, g := range gos {
			for i, r := range res.rounds {
				if g.Env["MASTER_PORT"] == r.port {
					res.goRecs[i] = append(res.goRecs[i], g)
				}
			}
			if g.Error != "" {
				t.Errorf("%s: Go worker error: %s", g.File, g.Error)
			}
			if g.RunID != job.rdzv {
				t.Errorf("%s: Go worker (node %s, rank %s) run id %q, want the rendezvous id %q (NEMO_LENS_RUN_ID %q)",
					layout, g.Env["LENS_E2E_NODE"], g.Env["RANK"], g.RunID, job.rdzv, g.Env["NEMO_LENS_RUN_ID"])
			}
		}
		if len(res.rounds) != 2 || len(recs) != 8 || len(gos) != 8 {
			t.Fatalf("%s: %d rounds, %d worker records, %d Go records; want 2, 8, 8:\n%s\n%s", layout, len(res.rounds), len(recs), len(gos), launch.Join(recs), res.out)
		}
		// What each node's workers saw and did in each round.
		for i := range res.rounds {
			var ranks, ids []string
			for _, g := range res.goRecs[i] {
				id, _ := attrString(g, "service.instance.id")
				ids = append(ids, id)
				ranks = append(ranks, g.Env["RANK"])
				if want := job.rdzv + "-rank" + g.Env["RANK"]; id != want {
					t.Errorf("%s round %d: Go worker instance id %q, want %q", layout, i, id, want)
				}
			}
			if !slices.Equal(sorted2(ranks), []string{"0", "1", "2", "3"}) || !distinct(ids) {
				t.Errorf("%s round %d: ranks %q, instance ids %q: want 0..3, distinct", layout, i, ranks, ids)
			}
		}
		if layout != "lens-around-agent" {
			first := checkRoundTraces(ctx, t, j, layout, job.rdzv, "", res.rounds[0].recs, res.goRecs[0])
			checkRoundTraces(ctx, t, j, layout, job.rdzv, first, res.rounds[1].recs, res.goRecs[1])
			checkRoundRecords(t, runtime)
		}
		return res
	}
	// summary is what must not depend on the layout: per round, per node
	// and local rank, the restart count and the status.
	summary := func(res result) []string {
		var out []string
		for i, r := range res.rounds {
			for _, w := range r.recs {
				out = append(out, fmt.Sprintf("round %d node %s local %s: te %s, status %d", i,
					w.Env["LENS_E2E_NODE"], w.Env["LOCAL_RANK"], w.Env["TORCHELASTIC_RESTART_COUNT"], exitOf(w)))
			}
		}
		slices.Sort(out)
		return out
	}

	// The three layouts run at once (most of a round is waiting for the
	// rendezvous and the agents' monitors), then are compared with bare.
	results := make(map[string]*result, len(torchrunLayouts))
	var mu sync.Mutex
	t.Run("layouts", func(t *testing.T) {
		for _, layout := range torchrunLayouts {
			t.Run(layout, func(t *testing.T) {
				t.Parallel()
				res := run(t, layout)
				mu.Lock()
				results[layout] = &res
				mu.Unlock()
			})
		}
	})
	bare := results["bare"]
	if bare == nil {
		return // failed (said above), or not selected by -run
	}
	// The measurement of docs/tracing.md#attempt-restarts.
	want := []string{
		"round 0 node a local 0: te 0, status 143", "round 0 node a local 1: te 0, status 143",
		"round 0 node b local 0: te 0, status 3", "round 0 node b local 1: te 0, status 143",
		"round 1 node a local 0: te 0, status 0", "round 1 node a local 1: te 0, status 0",
		"round 1 node b local 0: te 1, status 0", "round 1 node b local 1: te 1, status 0",
	}
	if got := summary(*bare); !slices.Equal(got, want) {
		t.Errorf("bare torchrun:\n %s\nwant\n %s\n%s", strings.Join(got, "\n "), strings.Join(want, "\n "), bare.out)
	}
	if !slices.Equal(bare.statuses, []int{0, 0}) {
		t.Errorf("bare agents' statuses %v, want 0 0", bare.statuses)
	}
	for _, layout := range torchrunLayouts[1:] {
		res := results[layout]
		if res == nil {
			continue // failed above
		}
		if got, want := summary(*res), summary(*bare); !slices.Equal(got, want) {
			t.Errorf("%s:\n %s\nbare:\n %s\n%s", layout, strings.Join(got, "\n "), strings.Join(want, "\n "), res.out)
		}
		if !slices.Equal(res.statuses, bare.statuses) {
			t.Errorf("%s: agents' statuses %v, bare %v", layout, res.statuses, bare.statuses)
		}
	}
}

// checkRoundTraces checks one rendezvous round of a layout whose workers
// take the round's trace themselves, with the per-attempt mode: every span
// of the round's processes in the trace whose id is the UUID of
// "nemo.lens.run/local/<rdzv id>/rdzv<MASTER_ADDR>:<MASTER_PORT>", which it
// returns. With lens-per-worker the roots are the four lens exec spans and
// each Go worker span is the child of one of them; bare, the roots are the
// four Go worker spans. Every root links to the previous round's anchor
// (docs/tracing.md#round-links), the first round's to nothing: each node
// learns the previous round from its own record of rounds, so both agents'
// roots must carry the link.
func checkRoundTraces(ctx context.Context, t *testing.T, j *jaeger.Jaeger, layout, rdzv, prev string, py []launch.PyRecord, gos []worker.Record) string {
	t.Helper()
	env := py[0].Env
	want := strings.ReplaceAll(uuidv5("nemo.lens.run/local/"+rdzv+"/rdzv"+env["MASTER_ADDR"]+":"+env["MASTER_PORT"]), "-", "")
	spans, rootName := 8, "lens exec "+filepath.Base(launch.SystemPython)
	if layout == "bare" {
		spans, rootName = 4, "round-work"
	}
	var links []jaeger.Reference
	if prev != "" {
		links = []jaeger.Reference{{RefType: "FOLLOWS_FROM", TraceID: prev, SpanID: attemptAnchor(prev)}}
	}
	tr, err := j.WaitSpans(ctx, want, spans)
	if err != nil {
		t.Fatalf("%s round %s: %v", layout, env["MASTER_PORT"], err)
	}
	var roots []string
	for i := range tr.Spans {
		s := &tr.Spans[i]
		if s.OperationName == rootName {
			roots = append(roots, s.SpanID)
			if !slices.Equal(s.References, links) {
				t.Errorf("%s round %s: root %s %s has references %+v, want %+v (the previous round's anchor, or none)",
					layout, env["MASTER_PORT"], s.OperationName, s.SpanID, s.References, links)
			}
		}
	}
	if len(tr.Spans) != spans || len(roots) != 4 {
		t.Errorf("%s round %s: trace %s has %d spans, %d of them %q; want %d and 4", layout, env["MASTER_PORT"], want, len(tr.Spans), len(roots), rootName, spans)
	}
	for _, g := range gos {
		if g.TraceID != want {
			t.Errorf("%s round %s: Go worker rank %s in trace %s, want %s", layout, env["MASTER_PORT"], g.Env["RANK"], g.TraceID, want)
		}
		if layout == "bare" {
			continue
		}
		if !slices.Contains(roots, g.ParentSpanID) {
			t.Errorf("round %s: Go worker rank %s has parent %s, not a lens exec span of the round %q", env["MASTER_PORT"], g.Env["RANK"], g.ParentSpanID, roots)
		}
	}
	return want
}

// attemptAnchor is the anchor span id of the attempt whose trace id is tid
// (docs/tracing.md#attempt-trace-id): the first 8 bytes of SHA-256 of
// "nemo.lens.attempt.anchor/" and the attempt's UUID.
func attemptAnchor(tid string) string {
	u := tid[:8] + "-" + tid[8:12] + "-" + tid[12:16] + "-" + tid[16:20] + "-" + tid[20:]
	sum := sha256.Sum256([]byte("nemo.lens.attempt.anchor/" + u))
	return hex.EncodeToString(sum[:8])
}

// checkRoundRecords checks the records of rounds the workers left under
// XDG_RUNTIME_DIR (docs/tracing.md#round-links): one per agent (the two
// agents of this host are two nodes), in an owner-only directory, each an
// owner-only file.
func checkRoundRecords(t *testing.T, runtime string) {
	t.Helper()
	dir := filepath.Join(runtime, "nemo-lens")
	files, _ := filepath.Glob(filepath.Join(dir, "rounds-*"))
	if len(files) != 2 {
		t.Errorf("records of rounds %q, want one per agent (2)", files)
	}
	for _, p := range append(files, dir) {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Error(err)
		} else if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, want owner-only", p, fi.Mode())
		}
	}
}
