package e2e_test

// End-to-end tests of lens-go's Slurm detection against a real, throwaway
// Slurm cluster on localhost (scripts/slurm-up.sh, Slurm 22.05 from the
// Debian packages). A probe program (cmd/probe) runs inside each
// kind of Slurm context and records its raw environment and the detector
// output; every expected value here is computed from Slurm's own view
// (sbatch --parsable, salloc, scontrol show job/config) and the spec's name
// strings, never from lens-go itself.
//
// Gating: needs root (apt, daemons and jobs run as root). Without root, or
// when the packages cannot be installed or the cluster does not come up, the
// tests are skipped, or fail when CI=true. LENS_E2E_SLURM=0 skips them
// locally (ignored when CI=true). LENS_E2E_KEEP=1 keeps the temp dir.
//
//	cd e2e && go test -run Slurm -v ./...

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/slurm"
)

// ---------------------------------------------------------------- harness

type harness struct {
	root string // temp dir: state/, bin/, out/

	startOnce sync.Once
	cluster   *slurm.Cluster
	startErr  error

	mu      sync.Mutex // serialises restarts
	timings []string

	// acct is the second cluster, with real accounting (reckon_slurm_test.go).
	acctOnce sync.Once
	acct     *slurm.Cluster
	acctErr  error
}

var h *harness

func (h *harness) timing(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.timings = append(h.timings, fmt.Sprintf(format, args...))
}

func TestMain(m *testing.M) {
	root, err := os.MkdirTemp("", "lens-e2e-slurm-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		os.Exit(1)
	}
	// munged wants every directory above its socket to be searchable.
	_ = os.Chmod(root, 0o755)
	h = &harness{root: root}
	flag.Parse()
	prestartAcct()
	code := m.Run()
	h.acctOnce.Do(func() {}) // waits for a start still under way
	if h.acct != nil {
		start := time.Now()
		if err := h.acct.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: stopping the Slurm cluster with accounting:", err)
			if code == 0 {
				code = 1
			}
		}
		h.timing("accounting cluster stop: %v", time.Since(start).Round(time.Millisecond))
	}
	if h.cluster != nil {
		start := time.Now()
		if err := h.cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: stopping the Slurm cluster:", err)
			if code == 0 {
				code = 1
			}
		}
		h.timing("cluster stop: %v", time.Since(start).Round(time.Millisecond))
	}
	if len(h.timings) > 0 {
		fmt.Fprintln(os.Stderr, "e2e slurm timings:")
		for _, l := range h.timings {
			fmt.Fprintln(os.Stderr, "  "+l)
		}
	}
	if code != 0 || os.Getenv("LENS_E2E_KEEP") == "1" {
		fmt.Fprintln(os.Stderr, "e2e: kept", root, "(state/log has the daemon logs)")
	} else {
		_ = os.RemoveAll(root)
	}
	os.Exit(code)
}

func inCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v == "true" || v == "1"
}

// skipOrFatal skips locally and fails in CI.
func skipOrFatal(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if inCI() {
		t.Fatalf("Slurm e2e cannot run in CI: %s", msg)
	}
	t.Skipf("Slurm e2e skipped: %s (run as root on Debian/Ubuntu with apt to enable; CI=true turns this into a failure)", msg)
}

// needCluster returns the shared cluster with the given number of nodes,
// starting it on first use and restarting it when the layout differs.
// gate skips (or, in CI, fails) when the Slurm e2e cannot or must not run.
func gate(t *testing.T) {
	t.Helper()
	if !inCI() && os.Getenv("LENS_E2E_SLURM") == "0" {
		t.Skip("LENS_E2E_SLURM=0: Slurm e2e disabled")
	}
	if runtime.GOOS != "linux" {
		skipOrFatal(t, "needs Linux, have %s", runtime.GOOS)
	}
	if os.Geteuid() != 0 {
		skipOrFatal(t, "needs root (installs munge/slurm with apt, runs the daemons and jobs as root); euid=%d", os.Geteuid())
	}
}

func needCluster(t *testing.T, nodes int) *slurm.Cluster {
	t.Helper()
	gate(t)
	h.startOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), slurm.StartTimeout)
		defer cancel()
		start := time.Now()
		c, err := slurm.Start(ctx, filepath.Join(h.root, "state"), 1)
		if err != nil {
			h.startErr = err
			return
		}
		h.cluster = c
		h.timing("cluster start (first, 1 node; includes apt when the packages are missing): %v", time.Since(start).Round(time.Millisecond))
		start = time.Now()
		if err := c.Restart(ctx, 1); err != nil {
			h.startErr = fmt.Errorf("idempotent re-run of slurm-up.sh failed: %w", err)
			return
		}
		h.timing("cluster start again, already up (idempotent): %v", time.Since(start).Round(time.Millisecond))
	})
	if h.startErr != nil {
		skipOrFatal(t, "the Slurm cluster did not start: %v", h.startErr)
	}
	c := h.cluster
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.Nodes() != nodes {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		start := time.Now()
		from := c.Nodes()
		if err := c.Restart(ctx, nodes); err != nil {
			t.Fatalf("restart the cluster with %d node(s): %v", nodes, err)
		}
		h.timings = append(h.timings, fmt.Sprintf("cluster restart %d -> %d node(s): %v", from, nodes, time.Since(start).Round(time.Millisecond)))
	}
	return c
}

// probeBinary builds cmd/probe once into the temp dir.
func probeBinary(t *testing.T) string {
	return builtBinary(t, "probe", moduleDir(), "./cmd/probe")
}

// moduleDir is the e2e module's directory (where this file lives), so the
// probe builds even when the test binary runs elsewhere.
func moduleDir() string {
	if _, file, _, ok := runtime.Caller(0); ok {
		return filepath.Dir(file)
	}
	return "."
}

// scenario holds one test's cluster, probe, output dir and deadline.
type scenario struct {
	t     *testing.T
	c     *slurm.Cluster
	probe string
	out   string
	ctx   context.Context
	start time.Time
}

var seq atomic.Int64

func newScenario(t *testing.T, nodes int) *scenario {
	t.Helper()
	gate(t)
	probe := probeBinary(t) // before the cluster: a build error needs no daemons
	c := needCluster(t, nodes)
	out := filepath.Join(h.root, "out", fmt.Sprintf("%s-%d", t.Name(), seq.Add(1)))
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	s := &scenario{t: t, c: c, probe: probe, out: out, ctx: ctx, start: time.Now()}
	t.Cleanup(func() {
		cancel()
		d := time.Since(s.start).Round(time.Millisecond)
		t.Logf("scenario %s: %v", t.Name(), d)
		h.timing("scenario %-26s %v", t.Name()+":", d)
		if t.Failed() {
			s.dumpJobOutputs()
		}
	})
	return s
}

// name returns a job name unique within this test binary.
func (s *scenario) name(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), seq.Add(1))
}

// probeCmd is the shell command line that runs the probe with a label.
func (s *scenario) probeCmd(label string) string {
	return fmt.Sprintf("%q -out %q -label %q", s.probe, s.out, label)
}

// script writes an executable batch script into the output dir.
func (s *scenario) script(name string, lines ...string) string {
	s.t.Helper()
	p := filepath.Join(s.out, name)
	body := "#!/bin/bash\nset -eu\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		s.t.Fatal(err)
	}
	return p
}

func (s *scenario) records(label string, want int) []slurm.Record {
	s.t.Helper()
	recs, err := slurm.ReadRecords(s.out, label)
	if err != nil {
		s.t.Fatal(err)
	}
	if len(recs) != want {
		var files []string
		for _, r := range recs {
			files = append(files, filepath.Base(r.File))
		}
		s.t.Fatalf("probe %q: %d record(s) %v, want %d", label, len(recs), files, want)
	}
	for _, r := range recs {
		if r.Error != "" {
			s.t.Errorf("%s: probe error: %s", filepath.Base(r.File), r.Error)
		}
	}
	return recs
}

// waitRecord polls (bounded by ctx) until the probe has written label's
// record, failing early if job jobID leaves the queue without writing it.
func (s *scenario) waitRecord(label, jobID string) slurm.Record {
	s.t.Helper()
	for {
		recs, err := slurm.ReadRecords(s.out, label)
		if err != nil {
			s.t.Fatal(err)
		}
		if len(recs) > 0 {
			if len(recs) != 1 {
				s.t.Fatalf("probe %q: %d records, want 1", label, len(recs))
			}
			return recs[0]
		}
		if q, err := s.c.Queue(s.ctx, jobID, "%T"); err == nil && len(q) == 0 {
			// Gone: one last look (the record may have landed meanwhile).
			if recs, _ := slurm.ReadRecords(s.out, label); len(recs) == 1 {
				return recs[0]
			}
			jobs, _ := s.c.ShowJob(s.ctx, jobID)
			s.t.Fatalf("job %s left the queue without writing probe record %q: %v%s", jobID, label, jobs, s.c.LogTail(15))
		}
		select {
		case <-s.ctx.Done():
			s.t.Fatalf("probe record %q did not appear: %v%s", label, s.ctx.Err(), s.c.LogTail(15))
		case <-time.After(slurm.PollInterval):
		}
	}
}

// job returns the single scontrol record of a job id (non-array).
func (s *scenario) job(id string) slurm.Job {
	s.t.Helper()
	jobs, err := s.c.ShowJob(s.ctx, id)
	if err != nil {
		s.t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0]["JobId"] != id {
		s.t.Fatalf("scontrol show job %s: %d records %v", id, len(jobs), jobs)
	}
	return jobs[0]
}

// finished waits until the job has left the queue (srun and salloc return
// while it may still be COMPLETING) and returns its scontrol record.
func (s *scenario) finished(id string) slurm.Job {
	s.t.Helper()
	if err := s.c.WaitGone(s.ctx, id); err != nil {
		s.t.Fatal(err)
	}
	return s.job(id)
}

// finishedNamed is finished for the single job called name (srun has no
// --parsable; the name is unique per test binary).
func (s *scenario) finishedNamed(name string) slurm.Job {
	s.t.Helper()
	jobs, err := s.c.JobsNamed(s.ctx, name)
	if err != nil {
		s.t.Fatal(err)
	}
	if len(jobs) != 1 {
		s.t.Fatalf("scontrol show job: %d jobs named %q, want 1", len(jobs), name)
	}
	return s.finished(jobs[0]["JobId"])
}

// requireCompleted fails unless the job(s) completed with exit code 0.
func (s *scenario) requireCompleted(jobs ...slurm.Job) {
	s.t.Helper()
	for _, j := range jobs {
		if j["JobState"] != "COMPLETED" || j["ExitCode"] != "0:0" {
			s.t.Errorf("job %s (%s): JobState=%s ExitCode=%s Reason=%s", j["JobId"], j["JobName"], j["JobState"], j["ExitCode"], j["Reason"])
		}
	}
}

func (s *scenario) dumpJobOutputs() {
	files, _ := filepath.Glob(filepath.Join(s.out, "*.out"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		s.t.Logf("----- %s -----\n%s", f, data)
	}
}

// ---------------------------------------------------------------- expectations

// uuidv5 is RFC 4122 version 5 (SHA-1) in the URL namespace
// 6ba7b811-9dad-11d1-80b4-00c04fd430c8, written here independently of lens-go.
func uuidv5(name string) string {
	ns := []byte{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	sum := sha1.Sum(append(ns, name...))
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	x := hex.EncodeToString(u)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// expect is what detect_slurm must produce in one context, derived from
// Slurm's own view of the job.
type expect struct {
	cluster     string
	jobID       string // slurm.job.id
	jobIDRaw    string // SLURM_JOB_ID of the element
	arrayJobID  string
	taskID      string
	arrayCount  int64
	array       bool // SLURM_ARRAY_TASK_ID present
	jobName     string
	partition   string
	nnodes      int64
	ntasks      int64
	restarts    int64
	user        string // "" = absent (salloc shell)
	topoAddr    string // "" = absent
	topoPattern string
	headNode    string // "" = absent (srun steps, salloc shell)
	// carrier: inherited values that come first, in carrier order; their
	// keys are not repeated among the derived ones.
	carrier []kv
}

// base fills the job-level fields from `scontrol show job` (non-array job).
func base(cluster string, j slurm.Job) expect {
	return expect{
		cluster:    cluster,
		jobID:      j["JobId"],
		jobIDRaw:   j["JobId"],
		arrayJobID: j["JobId"],
		taskID:     "0",
		arrayCount: 1,
		jobName:    j["JobName"],
		partition:  j["Partition"],
		nnodes:     atoi(j["NumNodes"]),
		restarts:   atoi(j["Restarts"]),
		user:       userName(j["UserId"]),
	}
}

func (e expect) jobKey() string {
	if e.array {
		return e.arrayJobID
	}
	return e.jobIDRaw
}

func (e expect) jobUUIDName() string { return "nemo.lens.job/" + e.cluster + "/" + e.jobKey() }

func (e expect) runUUIDName() string {
	n := "nemo.lens.run/" + e.cluster + "/" + e.jobKey()
	if !e.array {
		n += "/sr" + strconv.FormatInt(e.restarts, 10)
	}
	return n
}

type kv struct{ key, kind, val string }

func (x kv) String() string { return fmt.Sprintf("%s=%s(%s)", x.key, x.kind, x.val) }

func str(k, v string) kv { return kv{k, "string", v} }
func num(k string, v int64) kv {
	return kv{k, "int64", strconv.FormatInt(v, 10)}
}

// slurmAttrs is the exact ordered detect_slurm output (spec §1.3 emission
// order; carrier keys first).
func (e expect) slurmAttrs() []kv {
	out := slices.Clone(e.carrier)
	add := func(x kv) {
		if x.kind == "string" && x.val == "" {
			return
		}
		if slices.ContainsFunc(out, func(y kv) bool { return y.key == x.key }) {
			return
		}
		out = append(out, x)
	}
	add(str("slurm.job.id", e.jobID))
	add(str("slurm.job.id.raw", e.jobIDRaw))
	add(str("slurm.array.job_id", e.arrayJobID))
	add(str("slurm.array.task_id", e.taskID))
	add(num("slurm.array.count", e.arrayCount))
	add(str("slurm.job.name", e.jobName))
	add(str("slurm.cluster.name", e.cluster))
	add(str("slurm.partition", e.partition))
	add(num("slurm.nnodes", e.nnodes))
	add(num("slurm.ntasks", e.ntasks))
	add(num("slurm.restart_count", e.restarts))
	add(str("slurm.job.user", e.user))
	add(str("slurm.topology.addr", e.topoAddr))
	add(str("slurm.topology.addr_pattern", e.topoPattern))
	add(str("slurm.head_node.name", e.headNode))
	add(str("nv.dl.job.uuid", uuidv5(e.jobUUIDName())))
	return out
}

var intKeys = []string{"slurm.nnodes", "slurm.ntasks", "slurm.restart_count", "slurm.array.count"}

// gotAttrs renders recorded attributes like kv; an int64 whose JSON value is
// not a bare integer number is shown with kind "int64?".
func gotAttrs(attrs []slurm.Attr) []kv {
	out := make([]kv, 0, len(attrs))
	for _, a := range attrs {
		x := kv{key: a.Key, kind: a.Kind, val: string(a.Value)}
		switch a.Kind {
		case "string":
			if s, ok := a.String(); ok {
				x.val = s
			}
		case "int64":
			if n, ok := a.Int64(); ok {
				x.val = strconv.FormatInt(n, 10)
			} else {
				x.kind = "int64?"
			}
		}
		out = append(out, x)
	}
	return out
}

func fmtKVs(xs []kv) string {
	var b strings.Builder
	for _, x := range xs {
		b.WriteString("\n    " + x.String())
	}
	return b.String()
}

// check asserts one probe record against e.
func check(t *testing.T, r slurm.Record, e expect) {
	t.Helper()
	f := filepath.Base(r.File)
	if r.Error != "" {
		t.Errorf("%s: probe error: %s", f, r.Error)
		return
	}
	// Slurm's own variable must agree with Slurm's view (harness sanity).
	if got := r.Env["SLURM_JOB_ID"]; got != e.jobIDRaw {
		t.Errorf("%s: raw SLURM_JOB_ID=%q, scontrol says %q", f, got, e.jobIDRaw)
	}
	want := e.slurmAttrs()
	got := gotAttrs(r.Slurm)
	if !slices.Equal(got, want) {
		t.Errorf("%s: DetectSlurm mismatch\n  got:%s\n  want:%s", f, fmtKVs(got), fmtKVs(want))
	}
	for _, k := range intKeys {
		if a, ok := slurm.Lookup(r.Slurm, k); ok {
			if _, isInt := a.Int64(); !isInt {
				t.Errorf("%s: %s arrived as %s %s, want an int64", f, k, a.Kind, a.Value)
			}
		}
	}
	if wantJob := uuidv5(e.jobUUIDName()); r.JobUUID != wantJob {
		t.Errorf("%s: DeriveJobUUID = %q, want %q (uuid5 of %q)", f, r.JobUUID, wantJob, e.jobUUIDName())
	}
	if wantRun := uuidv5(e.runUUIDName()); !r.RunUUIDOK || r.RunUUID != wantRun {
		t.Errorf("%s: DeriveRunUUID = %q, %v; want %q, true (uuid5 of %q)", f, r.RunUUID, r.RunUUIDOK, wantRun, e.runUUIDName())
	}
	// Detect = local <- slurm <- kubernetes: the live process plus every
	// Slurm key with the same typed value.
	det := gotAttrs(r.Detect)
	find := func(k string) (kv, bool) {
		i := slices.IndexFunc(det, func(x kv) bool { return x.key == k })
		if i < 0 {
			return kv{}, false
		}
		return det[i], true
	}
	if x, ok := find("host.name"); !ok || x != str("host.name", r.OSHostname) {
		t.Errorf("%s: Detect host.name = %v, want %q", f, x, r.OSHostname)
	}
	if x, ok := find("process.pid"); !ok || x != num("process.pid", int64(r.PID)) {
		t.Errorf("%s: Detect process.pid = %v, want int64 %d", f, x, r.PID)
	}
	for _, w := range want {
		if x, ok := find(w.key); !ok || x != w {
			t.Errorf("%s: Detect %s = %v, want %v", f, w.key, x, w)
		}
	}
}

func atoi(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1 // never matches a real count
	}
	return n
}

// userName turns scontrol's "root(0)" into "root".
func userName(s string) string {
	u, _, _ := strings.Cut(s, "(")
	return u
}

func procIDs(recs []slurm.Record) []string {
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.Env["SLURM_PROCID"])
	}
	sort.Strings(ids)
	return ids
}

func requireProcIDs(t *testing.T, label string, recs []slurm.Record, want ...string) {
	t.Helper()
	if got := procIDs(recs); !slices.Equal(got, want) {
		t.Fatalf("%s: SLURM_PROCID of the records = %v, want %v", label, got, want)
	}
}

// ---------------------------------------------------------------- tests

func TestSlurmUUIDHelper(t *testing.T) {
	// Vectors of docs/detection.md#uuid-worked-examples, to make sure the
	// test's own helper is right.
	for name, want := range map[string]string{
		"nemo.lens.job/cluster-a/12345":     "be34ba0f-41ed-5d53-84c1-e3f3dd25bfd7",
		"nemo.lens.run/cluster-a/12345/sr0": "1a280c0a-71d2-54bd-bd00-fa82efd94290",
		"nemo.lens.run/cluster-a/12345/sr1": "be42db52-ed95-5653-b035-190f2392e702",
		"nemo.lens.run/cluster-a/12345":     "36f67cd8-29dd-57c0-873e-7b4db6f2437e",
		"nemo.lens.job/nocluster/nojob":     "d2badfc7-0e4c-537b-b4ea-8785f79f8679",
	} {
		if got := uuidv5(name); got != want {
			t.Errorf("uuidv5(%q) = %s, want %s", name, got, want)
		}
	}
}

// A: srun -N1 -n2 run directly (creates the job and step 0).
func TestSlurmSrun(t *testing.T) {
	s := newScenario(t, 1)
	name := s.name("lens-srun")
	if _, err := s.c.Srun(s.ctx, s.c.Env(), "-N1", "-n2", "-J", name, s.probe, "-out", s.out, "-label", "A"); err != nil {
		t.Fatal(err)
	}
	j := s.finishedNamed(name)
	s.requireCompleted(j)
	recs := s.records("A", 2)
	requireProcIDs(t, "A", recs, "0", "1")
	for _, r := range recs {
		e := base(s.c.Name, j)
		e.ntasks = 2
		e.topoAddr, e.topoPattern = "localhost", "node"
		if r.Env["SLURM_STEP_ID"] != "0" {
			t.Errorf("%s: SLURM_STEP_ID=%q, want step 0", filepath.Base(r.File), r.Env["SLURM_STEP_ID"])
		}
		check(t, r, e)
	}
}

// B + C: sbatch -N1 -n2; the batch step runs the probe, then srun -n2 inside.
func TestSlurmSbatch(t *testing.T) {
	s := newScenario(t, 1)
	script := s.script(s.name("lens-batch")+".sh",
		s.probeCmd("B"),
		"srun -n2 "+s.probeCmd("C"))
	id, err := s.c.Sbatch(s.ctx, s.c.Env(), "-N1", "-n2", "-o", filepath.Join(s.out, "job-%j.out"), script)
	if err != nil {
		t.Fatal(err)
	}
	j := s.finished(id)
	s.requireCompleted(j)
	if j["JobName"] != filepath.Base(script) {
		t.Errorf("scontrol JobName=%q, want the script's file name %q", j["JobName"], filepath.Base(script))
	}

	batch := s.records("B", 1)[0]
	e := base(s.c.Name, j)
	e.ntasks = atoi(j["NumTasks"]) // the job's task count, in the batch step
	e.topoAddr, e.topoPattern = "localhost", "node"
	e.headNode = j["BatchHost"]
	if e.headNode != "localhost" {
		t.Errorf("scontrol BatchHost=%q, want localhost", e.headNode)
	}
	check(t, batch, e)

	steps := s.records("C", 2)
	requireProcIDs(t, "C", steps, "0", "1")
	for _, r := range steps {
		e := base(s.c.Name, j)
		e.ntasks = 2 // the step's task count
		e.topoAddr, e.topoPattern = "localhost", "node"
		check(t, r, e) // no head_node.name inside a step
	}
}

// D, E, F: an array job --array=0-2; each task runs the probe in its batch
// step and in srun -n1.
func TestSlurmArray(t *testing.T) {
	s := newScenario(t, 1)
	script := s.script(s.name("lens-array")+".sh",
		s.probeCmd("D"),
		"srun -n1 "+s.probeCmd("F"))
	arrayID, err := s.c.Sbatch(s.ctx, s.c.Env(), "--array=0-2", "-N1", "-n1", "-o", filepath.Join(s.out, "job-%A_%a.out"), script)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.c.WaitGone(s.ctx, arrayID); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.c.ShowJob(s.ctx, arrayID)
	if err != nil {
		t.Fatal(err)
	}
	byJobID := map[string]slurm.Job{}
	var tasks []string
	for _, j := range jobs {
		if j["ArrayJobId"] != arrayID {
			t.Fatalf("scontrol show job %s: element with ArrayJobId=%q", arrayID, j["ArrayJobId"])
		}
		byJobID[j["JobId"]] = j
		tasks = append(tasks, j["ArrayTaskId"])
	}
	sort.Strings(tasks)
	if !slices.Equal(tasks, []string{"0", "1", "2"}) {
		t.Fatalf("scontrol show job %s: array task ids %v, want [0 1 2]", arrayID, tasks)
	}
	s.requireCompleted(jobs...)
	if j, ok := byJobID[arrayID]; !ok || j["ArrayTaskId"] != "2" {
		t.Logf("note: Slurm gave the array job id %s to task %v (usually the highest task)", arrayID, j["ArrayTaskId"])
	}

	jobUUID := uuidv5("nemo.lens.job/" + s.c.Name + "/" + arrayID)
	for _, label := range []string{"D", "F"} {
		recs := s.records(label, 3)
		seen := map[string]bool{}
		for _, r := range recs {
			j, ok := byJobID[r.Env["SLURM_JOB_ID"]]
			if !ok {
				t.Errorf("%s: SLURM_JOB_ID=%q is not an element of array %s", filepath.Base(r.File), r.Env["SLURM_JOB_ID"], arrayID)
				continue
			}
			task := j["ArrayTaskId"]
			seen[task] = true
			e := base(s.c.Name, j)
			e.array = true
			e.jobID = arrayID + "_" + task
			e.arrayJobID = arrayID
			e.taskID = task
			e.arrayCount = 3
			e.ntasks = 1
			e.topoAddr, e.topoPattern = "localhost", "node"
			if label == "D" {
				e.headNode = j["BatchHost"]
			}
			check(t, r, e)
			if r.JobUUID != jobUUID {
				t.Errorf("%s: array elements must share one job uuid %s, got %s", filepath.Base(r.File), jobUUID, r.JobUUID)
			}
		}
		if len(seen) != 3 {
			t.Errorf("%s: records cover array tasks %v, want 0, 1, 2", label, seen)
		}
	}
}

// I: a requeued batch job keeps its job UUID; the run UUID moves sr0 -> sr1.
func TestSlurmRequeue(t *testing.T) {
	s := newScenario(t, 1)
	script := s.script(s.name("lens-requeue")+".sh",
		`attempt=${SLURM_RESTART_COUNT:-0}`,
		s.probeCmd("R")+`"$attempt"`,
		`if [ "$attempt" = 0 ]; then sleep 300; fi`)
	id, err := s.c.Sbatch(s.ctx, s.c.Env(), "--requeue", "-N1", "-n1", "-o", filepath.Join(s.out, "job-%j.out"), "--open-mode=append", script)
	if err != nil {
		t.Fatal(err)
	}
	first := s.waitRecord("R0", id)
	if j := s.job(id); j["Restarts"] != "0" || j["JobState"] != "RUNNING" {
		t.Fatalf("before requeue: JobState=%s Restarts=%s, want RUNNING 0", j["JobState"], j["Restarts"])
	}
	rq := time.Now()
	if err := s.c.Requeue(s.ctx, id); err != nil {
		t.Fatal(err)
	}
	second := s.waitRecord("R1", id)
	t.Logf("requeue round trip: %v", time.Since(rq).Round(time.Millisecond))
	j := s.finished(id)
	s.requireCompleted(j)
	if j["Restarts"] != "1" {
		t.Fatalf("scontrol Restarts=%q after one requeue, want 1", j["Restarts"])
	}
	if _, ok := first.Env["SLURM_RESTART_COUNT"]; ok {
		t.Errorf("first attempt: SLURM_RESTART_COUNT=%q present, Slurm sets it only after a requeue", first.Env["SLURM_RESTART_COUNT"])
	}

	for attempt, r := range []slurm.Record{first, second} {
		e := base(s.c.Name, j)
		e.restarts = int64(attempt)
		e.ntasks = atoi(j["NumTasks"])
		e.topoAddr, e.topoPattern = "localhost", "node"
		e.headNode = j["BatchHost"]
		check(t, r, e)
	}
	if first.JobUUID != second.JobUUID {
		t.Errorf("job uuid changed across the requeue: %s -> %s", first.JobUUID, second.JobUUID)
	}
	if first.RunUUID == second.RunUUID {
		t.Errorf("run uuid did not change across the requeue: %s", first.RunUUID)
	}
}

// G + H: salloc -N1 -n2 runs a shell (not a Slurm task) that runs the probe
// and then srun -n2 twice (steps 0 and 1).
func TestSlurmSalloc(t *testing.T) {
	s := newScenario(t, 1)
	name := s.name("lens-salloc")
	inner := strings.Join([]string{
		s.probeCmd("G"),
		"srun -n2 " + s.probeCmd("H"),
		"srun -n2 " + s.probeCmd("H"),
	}, " && ")
	id, _, err := s.c.Salloc(s.ctx, s.c.Env(), "-N1", "-n2", "-J", name, "bash", "-c", inner)
	if err != nil {
		t.Fatal(err)
	}
	j := s.finished(id)
	s.requireCompleted(j)
	if j["JobName"] != name {
		t.Errorf("scontrol JobName=%q, want %q", j["JobName"], name)
	}

	shell := s.records("G", 1)[0]
	e := base(s.c.Name, j)
	e.ntasks = atoi(j["NumTasks"])
	e.user = "" // the salloc shell has no SLURM_JOB_USER, no SLURMD_NODENAME, no topology
	check(t, shell, e)

	steps := s.records("H", 4)
	stepIDs := map[string]int{}
	for _, r := range steps {
		stepIDs[r.Env["SLURM_STEP_ID"]]++
		e := base(s.c.Name, j)
		e.ntasks = 2
		e.topoAddr, e.topoPattern = "localhost", "node"
		check(t, r, e)
	}
	if stepIDs["0"] != 2 || stepIDs["1"] != 2 {
		t.Errorf("salloc steps: SLURM_STEP_ID counts %v, want steps 0 and 1 with 2 tasks each", stepIDs)
	}
}

// The carrier: OTEL_RESOURCE_ATTRIBUTES exported by the submitter reaches
// every task; carrier values are authoritative, invalid ones fall back to
// the local value, nv.dl.run.uuid is passed through, unknown keys ignored.
func TestSlurmCarrier(t *testing.T) {
	s := newScenario(t, 1)
	name := s.name("lens-carrier")
	const carrier = "slurm.job.name=train%2Cgpt,slurm.nnodes=invalid,nv.dl.run.uuid=run-from-launch,custom.key=x"
	env := s.c.Env("OTEL_RESOURCE_ATTRIBUTES=" + carrier)
	if _, err := s.c.Srun(s.ctx, env, "-N1", "-n2", "-J", name, s.probe, "-out", s.out, "-label", "K"); err != nil {
		t.Fatal(err)
	}
	j := s.finishedNamed(name)
	s.requireCompleted(j)
	recs := s.records("K", 2)
	requireProcIDs(t, "K", recs, "0", "1")
	for _, r := range recs {
		f := filepath.Base(r.File)
		if got := r.Env["OTEL_RESOURCE_ATTRIBUTES"]; got != carrier {
			t.Errorf("%s: OTEL_RESOURCE_ATTRIBUTES=%q in the task, want the submitter's %q", f, got, carrier)
		}
		e := base(s.c.Name, j) // nnodes: the real local integer (carrier value invalid)
		e.ntasks = 2
		e.topoAddr, e.topoPattern = "localhost", "node"
		e.carrier = []kv{
			str("slurm.job.name", "train,gpt"), // carrier wins over the local -J name
			str("nv.dl.run.uuid", "run-from-launch"),
		}
		check(t, r, e)
		if _, ok := slurm.Lookup(r.Slurm, "custom.key"); ok {
			t.Errorf("%s: custom.key is not a Slurm key and must not be in DetectSlurm", f)
		}
	}
}

// K: two slurmd on one host; srun -N2 -n4 (2 tasks per node), and a two-node batch job whose
// batch step runs on node1.
func TestSlurmTwoNodes(t *testing.T) {
	s := newScenario(t, 2)
	name := s.name("lens-2n")
	if _, err := s.c.Srun(s.ctx, s.c.Env(), "-N2", "-n4", "--ntasks-per-node=2", "-J", name, s.probe, "-out", s.out, "-label", "N"); err != nil {
		t.Fatal(err)
	}
	j := s.finishedNamed(name)
	s.requireCompleted(j)
	if j["NumNodes"] != "2" || j["NodeList"] != "node[1-2]" {
		t.Fatalf("scontrol: NumNodes=%s NodeList=%s, want 2 node[1-2]", j["NumNodes"], j["NodeList"])
	}
	recs := s.records("N", 4)
	requireProcIDs(t, "N", recs, "0", "1", "2", "3")
	for _, r := range recs {
		// --ntasks-per-node=2 with the default block distribution: tasks
		// 0-1 on node1, 2-3 on node2.
		node := "node" + strconv.Itoa(1+int(atoi(r.Env["SLURM_PROCID"]))/2)
		if got := r.Env["SLURMD_NODENAME"]; got != node {
			t.Errorf("%s: SLURMD_NODENAME=%q, want %s", filepath.Base(r.File), got, node)
		}
		e := base(s.c.Name, j)
		e.ntasks = 4
		e.topoAddr, e.topoPattern = node, "node"
		check(t, r, e)
	}

	script := s.script(s.name("lens-2n-batch")+".sh",
		s.probeCmd("NB"),
		"srun -n4 "+s.probeCmd("NS"))
	id, err := s.c.Sbatch(s.ctx, s.c.Env(), "-N2", "-n4", "--ntasks-per-node=2", "-o", filepath.Join(s.out, "job-%j.out"), script)
	if err != nil {
		t.Fatal(err)
	}
	bj := s.finished(id)
	s.requireCompleted(bj)
	if bj["BatchHost"] != "node1" {
		t.Errorf("scontrol BatchHost=%q, want node1", bj["BatchHost"])
	}
	batch := s.records("NB", 1)[0]
	e := base(s.c.Name, bj)
	e.ntasks = atoi(bj["NumTasks"])
	e.topoAddr, e.topoPattern = bj["BatchHost"], "node"
	e.headNode = bj["BatchHost"]
	check(t, batch, e)
	steps := s.records("NS", 4)
	requireProcIDs(t, "NS", steps, "0", "1", "2", "3")
	for _, r := range steps {
		node := "node" + strconv.Itoa(1+int(atoi(r.Env["SLURM_PROCID"]))/2)
		e := base(s.c.Name, bj)
		e.ntasks = 4
		e.topoAddr, e.topoPattern = node, "node"
		check(t, r, e)
	}
}
