package e2e_test

// Lens-level end-to-end tests: real processes built from lens-go
// (cmd/worker; the lens CLI in exec_jaeger_test.go, job_jaeger_test.go,
// example_sbatch_test.go and example_k8s_test.go) set up telemetry from their environment with
// lens.Setup and export spans to a real Jaeger v2; the tests read the
// resources back as Jaeger Process tags through the query API.
//
// Every expected value is built here from the inputs (the carrier text the
// test or the parent chose, os.Hostname, the pids the parent saw, Slurm's
// own job records) and the rules of docs/ (docs/compatibility.md#percent-decoding,
// #percent-encoding and #compose; docs/detection.md#uuids;
// docs/resource.md#run-id-fill-in and #service-instance-id), never by
// calling lens-go's derivation code.
//
// Gating: the Jaeger binary (JAEGER_BIN or <repo>/.bin/jaeger; see
// jaeger.StartForTest) and, for the Slurm cases, root and the local Slurm
// cluster (needCluster). Missing prerequisites skip the test, or fail it
// when CI=true.
//
//	cd e2e && go test -race -run 'Lens|Exec|Example|Readme|Job|Torchrun' -v .

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/jaeger"
	"github.com/nemolens/lens-go/e2e/internal/worker"
)

// ---------------------------------------------------------------- helper binaries

// bins builds the worker and the lens CLI once per test binary, into the
// harness's temp dir (removed by TestMain).
// builds holds one sync.OnceValues per helper binary, so that each is built
// once per test binary, whichever test asks first.
var builds = struct {
	mu sync.Mutex
	m  map[string]func() (string, error)
}{m: map[string]func() (string, error){}}

// raceEnabled reports whether this test binary was built with -race; the
// helper binaries are then built with -race too, so a data race in lens-go
// inside a real process fails the test (exit status 66).
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// goBuild runs `go build [-race] -o out pkg` in dir.
func goBuild(dir, out, pkg string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("building %s needs the go command: %w", pkg, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := []string{"build", "-o", out}
	if raceEnabled() {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, goBin, append(args, pkg)...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s (in %s): %v\n%s", pkg, dir, err, b)
	}
	return nil
}

// builtBinary builds package pkg of the module in dir once, into
// <temp dir>/bin/name, and returns its path.
func builtBinary(t *testing.T, name, dir, pkg string) string {
	t.Helper()
	builds.mu.Lock()
	build, ok := builds.m[name]
	if !ok {
		build = sync.OnceValues(func() (string, error) {
			start := time.Now()
			out := filepath.Join(h.root, "bin", name)
			err := goBuild(dir, out, pkg)
			h.timing("%s build (race %v): %v", name, raceEnabled(), time.Since(start).Round(time.Millisecond))
			return out, err
		})
		builds.m[name] = build
	}
	builds.mu.Unlock()
	path, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// workerBinary builds e2e/cmd/worker once.
func workerBinary(t *testing.T) string {
	return builtBinary(t, "worker", moduleDir(), "./cmd/worker")
}

// lensBinary builds the lens CLI (github.com/nemolens/lens-go/cmd/lens) once,
// in the root module, whose go.mod is the CLI's own.
func lensBinary(t *testing.T) string {
	return builtBinary(t, "lens", repoRoot(), "./cmd/lens")
}

// repoRoot is the root module's directory, the parent of the e2e module's.
func repoRoot() string { return filepath.Dir(moduleDir()) }

// ---------------------------------------------------------------- environments

// controlledPrefixes and controlledNames are removed from every environment
// the tests hand to a Lens process, so that only the test decides what
// Lens, the OTel SDK and the detectors see.
var controlledPrefixes = []string{
	"OTEL_", "NEMO_LENS_", "WANDB_", "LENS_WORKER_",
	"SLURM_", "SLURMD_", "SBATCH_", "SALLOC_", "SRUN_",
	"TORCHELASTIC_", "NV_LAUNCH_", "LENS_SLURM_", "K8S_", "LENS_TASKPROLOG",
	"OMPI_", "PMIX_", "PMI_", "NVRX_",
}

var controlledNames = []string{
	"TRACEPARENT", "TRACESTATE", "BAGGAGE", "DEPLOYMENT_ENV", "ENVIRONMENT",
	"KUBERNETES_SERVICE_HOST", "LENS",
	// the launcher variables lens exec --rank-from and lens.WithRankFrom read
	"RANK", "WORLD_SIZE", "LOCAL_RANK", "JOB_COMPLETION_INDEX",
	"MPI_LOCALRANKID", "MASTER_ADDR", "MASTER_PORT", "GROUP_RANK",
}

// lensEnv returns base without the controlled variables (SLURM_CONF is
// kept), plus extra "KEY=VALUE" entries (later entries win). Unless base
// sets GORACE, it shortens the race runtime's 1 s sleep at exit, which
// race-built helpers would otherwise add to every process they run.
func lensEnv(base []string, extra ...string) []string {
	out := make([]string, 0, len(base)+len(extra)+1)
	if !slices.ContainsFunc(base, func(kv string) bool { return strings.HasPrefix(kv, "GORACE=") }) {
		out = append(out, "GORACE=atexit_sleep_ms=50")
	}
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if k != "SLURM_CONF" && (slices.Contains(controlledNames, k) ||
			slices.ContainsFunc(controlledPrefixes, func(p string) bool { return strings.HasPrefix(k, p) })) {
			continue
		}
		out = append(out, kv)
	}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		out = slices.DeleteFunc(out, func(e string) bool { ek, _, _ := strings.Cut(e, "="); return ek == k })
		out = append(out, kv)
	}
	return out
}

// exportTo are the variables that make a Lens process export traces (only)
// to j over OTLP/gRPC.
func exportTo(j *jaeger.Jaeger, service string) []string {
	env := []string{
		"NEMO_LENS_ENABLED=true",
		"NEMO_LENS_METRICS_ENABLED=false",
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + j.OTLPGRPCEndpoint(),
		"OTEL_EXPORTER_OTLP_INSECURE=true",
	}
	if service != "" {
		env = append(env, "OTEL_SERVICE_NAME="+service)
	}
	return env
}

// uniqueName is a name unique within this test binary run.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), seq.Add(1))
}

// outDir is a fresh record directory for t.
func outDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(h.root, "out", fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), seq.Add(1)))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// runCmd runs name args with env and returns its combined output; it fails
// the test unless the exit status is wantExit.
func runCmd(ctx context.Context, t *testing.T, env []string, wantExit int, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s %q: %v\n%s", name, args, err, out)
		}
		code = ee.ExitCode()
	}
	if code != wantExit {
		t.Fatalf("%s %q: exit status %d, want %d\n%s", name, args, code, wantExit, out)
	}
	return string(out)
}

// records reads the worker records labelled label from dir and requires
// exactly want of them, without errors.
func records(t *testing.T, dir, label string, want int) []worker.Record {
	t.Helper()
	recs, err := worker.Read(dir, label)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != want {
		t.Fatalf("%s: %d worker record(s) %q, want %d", dir, len(recs), label, want)
	}
	for _, r := range recs {
		if r.Error != "" {
			t.Errorf("%s: worker error: %s", filepath.Base(r.File), r.Error)
		}
	}
	return recs
}

// ---------------------------------------------------------------- expectations

// encodeValue is the carrier's value encoding
// (docs/compatibility.md#percent-encoding), written independently: every
// byte except A–Z a–z 0–9 _ . - ~ as %XX (uppercase).
func encodeValue(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_', c == '.', c == '-', c == '~':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// carrierText formats ordered key/value pairs as the carrier (no spaces, no
// trailing comma).
func carrierText(kv ...string) string {
	parts := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, kv[i]+"="+encodeValue(kv[i+1]))
	}
	return strings.Join(parts, ",")
}

// tagWant is an expected Process (or span) tag.
type tagWant struct {
	key, typ string
	val      any // string, int64 or bool
}

func wstr(k, v string) tagWant       { return tagWant{k, jaeger.TypeString, v} }
func wint(k string, v int64) tagWant { return tagWant{k, jaeger.TypeInt64, v} }
func wbool(k string, v bool) tagWant { return tagWant{k, jaeger.TypeBool, v} }

// checkTags reports every expected tag that is missing, mistyped or wrong.
func checkTags(t *testing.T, what string, tags []jaeger.Tag, want ...tagWant) {
	t.Helper()
	got := map[string]jaeger.Tag{}
	for _, tag := range tags {
		got[tag.Key] = tag
	}
	for _, w := range want {
		tag, ok := got[w.key]
		switch {
		case !ok:
			t.Errorf("%s: no tag %s; tags: %v", what, w.key, tags)
		case tag.Type != w.typ || tag.Value != w.val:
			t.Errorf("%s: %v, want %s=%s(%#v)", what, tag, w.key, w.typ, w.val)
		}
	}
}

// checkTagKeys requires the tag keys to be exactly want, plus any of
// optional.
func checkTagKeys(t *testing.T, what string, tags []jaeger.Tag, want, optional []string) {
	t.Helper()
	var got []string
	for _, tag := range tags {
		if !slices.Contains(optional, tag.Key) {
			got = append(got, tag.Key)
		}
	}
	sort.Strings(got)
	want = slices.Clone(want)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: tag keys %v (ignoring %v), want %v", what, got, optional, want)
	}
}

// noTag requires tag key to be absent.
func noTag(t *testing.T, what string, tags []jaeger.Tag, key string) {
	t.Helper()
	for _, tag := range tags {
		if tag.Key == key {
			t.Errorf("%s: unexpected tag %v", what, tag)
		}
	}
}

func ids(traces []jaeger.Trace) []string {
	var out []string
	for _, tr := range traces {
		out = append(out, tr.TraceID)
	}
	sort.Strings(out)
	return out
}

// checkSearch requires FindTraces(service, tags) to return exactly want.
func checkSearch(ctx context.Context, t *testing.T, j *jaeger.Jaeger, service string, tags map[string]string, want ...string) {
	t.Helper()
	got, err := j.FindTraces(ctx, service, tags)
	if err != nil {
		t.Fatal(err)
	}
	want = slices.Clone(want)
	sort.Strings(want)
	if g := ids(got); !slices.Equal(g, want) {
		t.Errorf("search service=%q tags=%v: traces %v, want %v", service, tags, g, want)
	}
}

func hostname(t *testing.T) string {
	t.Helper()
	hn, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return hn
}

// elapsed logs and records the wall time of a test.
func elapsed(t *testing.T) {
	start := time.Now()
	t.Cleanup(func() {
		d := time.Since(start).Round(time.Millisecond)
		t.Logf("%s: %v", t.Name(), d)
		h.timing("lens e2e %-40s %v", t.Name()+":", d)
	})
}

// ---------------------------------------------------------------- issue 4: parent → two children

// The SDK keys and the keys every child of the parent exports (besides the
// case's own carrier keys). host.gpu.count depends on the machine.
var (
	sdkTagKeys    = []string{"telemetry.sdk.language", "telemetry.sdk.name", "telemetry.sdk.version"}
	lensTagKeys   = []string{"service.version", "nemo.run.id", "host.name", "process.pid"}
	optionalHWKey = []string{"host.gpu.count"}
)

// TestLensParentChildrenJaeger: a parent program (worker -mode parent)
// publishes job-level attributes — nv.dl.world_size, a nemo.run.id and an
// e2e.experiment whose value holds ',', '=' and '/' — with carrier.Publish
// and starts two children through carrier.ChildEnv with nv.dl.rank 0 and 1.
// Each child runs lens.FromEnv + lens.Setup and exports one span to Jaeger.
//
// The configuration's run id (NEMO_LENS_RUN_ID) beats the carrier's
// nemo.run.id in the resource (the Lens base map, layer 3, is above the
// carrier, layer 2: docs/resource.md#resource-precedence; Setup always has a
// run id, docs/resource.md#run-id-fill-in), so the ',' '=' value is checked intact in the exported
// e2e.experiment tag and, for nemo.run.id, in the carrier text each child
// received.
func TestLensParentChildrenJaeger(t *testing.T) {
	elapsed(t)
	j := jaeger.StartForTest(t) // first: skips at once without the binary
	workerBin := workerBinary(t)
	host := hostname(t)

	const tricky = "exp/2026,seed=7" // ',' '=' '/' must survive the carrier
	for _, c := range []struct {
		name string
		// inherited is the parent's own OTEL_RESOURCE_ATTRIBUTES ("" = unset).
		inherited string
		// inheritedKV is inherited after Lens decoding (split at every ',',
		// trimmed, percent-decoded: docs/compatibility.md#carrier-parse), in order.
		inheritedKV []string
	}{
		{name: "plain"},
		{
			// Malformed escape, invalid UTF-8 (maximal subpart → one U+FFFD),
			// '+' that must not become a space, a trailing comma, and
			// host.name/process.pid that the live process must override.
			name:        "tricky-inherited",
			inherited:   "a=%zz,x=%C3%28,b=x+y,host.name=parent-host,process.pid=12,",
			inheritedKV: []string{"a", "%zz", "x", "\uFFFD(", "b", "x+y", "host.name", "parent-host", "process.pid", "12"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			service := uniqueName("lens-e2e-parent-" + c.name)
			runID := uniqueName("run-" + c.name)
			out := outDir(t)
			extra := append(exportTo(j, service), "NEMO_LENS_RUN_ID="+runID)
			if c.inherited != "" {
				extra = append(extra, "OTEL_RESOURCE_ATTRIBUTES="+c.inherited)
			}
			runCmd(ctx, t, lensEnv(os.Environ(), extra...), 0, workerBin,
				"-mode", "parent", "-ranks", "2", "-span", "child-work", "-out", out, "-label", "parent", "-child-label", "child",
				"-attr", "nemo.run.id="+tricky, "-attr", "e2e.experiment="+tricky)

			parent := records(t, out, "parent", 1)[0]
			children := records(t, out, "child", 2)
			if len(parent.Children) != 2 {
				t.Fatalf("parent record: %d children, want 2", len(parent.Children))
			}
			byPID := map[int]worker.Record{}
			for _, r := range children {
				byPID[r.PID] = r
			}

			var traceIDs [2]string
			for rank, pc := range parent.Children {
				what := fmt.Sprintf("rank %d", rank)
				if pc.Rank != rank || pc.ExitCode != 0 {
					t.Errorf("%s: parent saw rank %d exit %d", what, pc.Rank, pc.ExitCode)
				}
				rec, ok := byPID[pc.PID]
				if !ok {
					t.Fatalf("%s: no record of child pid %d (records: %v)", what, pc.PID, byPID)
				}
				if rec.PPID != parent.PID {
					t.Errorf("%s: child ppid %d, want the parent's pid %d", what, rec.PPID, parent.PID)
				}

				// The carrier each child received: the inherited entries
				// (decoded, re-encoded), then the published job-level keys,
				// then the rank (Compose's key order, current keys then new
				// override keys: docs/compatibility.md#compose; encoding:
				// docs/compatibility.md#percent-encoding).
				kv := append(slices.Clone(c.inheritedKV),
					"nv.dl.world_size", "2", "nemo.run.id", tricky, "e2e.experiment", tricky,
					"nv.dl.rank", strconv.Itoa(rank))
				if want := carrierText(kv...); rec.Carrier != want || pc.Carrier != want {
					t.Errorf("%s: carrier\n child got   %q\n parent gave %q\n want        %q", what, rec.Carrier, pc.Carrier, want)
				}

				tr, err := j.Trace(ctx, rec.TraceID)
				if err != nil {
					t.Fatal(err)
				}
				traceIDs[rank] = tr.TraceID
				if len(tr.Spans) != 1 || tr.Spans[0].OperationName != "child-work" || tr.Spans[0].SpanID != rec.SpanID {
					t.Errorf("%s: trace %s has spans %+v, want the one span %s named child-work", what, tr.TraceID, tr.Spans, rec.SpanID)
				}
				if len(tr.Spans) == 1 && len(tr.Spans[0].References) != 0 {
					t.Errorf("%s: span has references %v, want a root span", what, tr.Spans[0].References)
				}
				p, err := tr.SingleProcess()
				if err != nil {
					t.Fatal(err)
				}
				if p.ServiceName != service {
					t.Errorf("%s: serviceName %q, want %q", what, p.ServiceName, service)
				}
				want := []tagWant{
					wint("nv.dl.rank", int64(rank)),
					wint("nv.dl.world_size", 2),
					wstr("service.instance.id", runID+"-rank"+strconv.Itoa(rank)),
					// The configuration's run id (NEMO_LENS_RUN_ID) beats the
					// carrier's nemo.run.id (docs/resource.md#resource-precedence).
					wstr("nemo.run.id", runID),
					wstr("e2e.experiment", tricky),
					wstr("telemetry.sdk.language", "go"),
					wstr("telemetry.sdk.name", "opentelemetry"),
					// Live values beat the carrier (detection, layer 5,
					// describes the live process: docs/resource.md#resource-precedence): the pid the
					// parent started, this machine's host name.
					wstr("host.name", host),
					wint("process.pid", int64(pc.PID)),
				}
				keys := append(slices.Concat(sdkTagKeys, lensTagKeys), "nv.dl.rank", "nv.dl.world_size", "service.instance.id", "e2e.experiment")
				for i := 0; i+1 < len(c.inheritedKV); i += 2 {
					k, v := c.inheritedKV[i], c.inheritedKV[i+1]
					if k != "host.name" && k != "process.pid" {
						want = append(want, wstr(k, v)) // Lens-decoded (docs/compatibility.md#percent-decoding)
						keys = append(keys, k)
					}
				}
				checkTags(t, what+" process", p.Tags, want...)
				checkTagKeys(t, what+" process", p.Tags, keys, optionalHWKey)
			}
			if traceIDs[0] == traceIDs[1] {
				t.Fatalf("both children exported trace %s", traceIDs[0])
			}

			// The service finds both; the rank tag separates them.
			all, err := j.WaitTraces(ctx, service, nil, 2)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := ids(all), []string{traceIDs[0], traceIDs[1]}; !slices.Equal(g, sorted2(w)) {
				t.Errorf("service %q: traces %v, want %v", service, g, sorted2(w))
			}
			checkSearch(ctx, t, j, service, map[string]string{"nv.dl.rank": "0"}, traceIDs[0])
			checkSearch(ctx, t, j, service, map[string]string{"nv.dl.rank": "1"}, traceIDs[1])
			checkSearch(ctx, t, j, service, map[string]string{"service.instance.id": runID + "-rank1"}, traceIDs[1])
			checkSearch(ctx, t, j, service, map[string]string{"e2e.experiment": tricky, "nv.dl.world_size": "2"}, traceIDs[:]...)
			checkSearch(ctx, t, j, service, map[string]string{"nv.dl.rank": "2"})
		})
	}
}

func sorted2(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// ---------------------------------------------------------------- issue 4 under Slurm: srun -n2

// TestLensSlurmSrunJaeger: `srun -N1 -n2 worker -rank-env SLURM_PROCID` on
// the local Slurm cluster, with the submitter's carrier
// nv.dl.world_size=2 and no NEMO_LENS_RUN_ID. Each task passes its
// SLURM_PROCID as nv.dl.rank (a caller attribute). The exported resources
// carry Slurm's view of the job, and the run id defaults to SLURM_JOB_ID
// (docs/resource.md#run-id-fill-in), so service.instance.id is "<job id>-rank<k>".
func TestLensSlurmSrunJaeger(t *testing.T) {
	elapsed(t)
	gate(t)
	j := jaeger.StartForTest(t)
	workerBin := workerBinary(t)
	c := needCluster(t, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	host := hostname(t)

	service := uniqueName("lens-e2e-srun")
	name := uniqueName("lens-srun")
	out := outDir(t)
	env := lensEnv(c.Env(), append(exportTo(j, service), "OTEL_RESOURCE_ATTRIBUTES=nv.dl.world_size=2")...)
	if _, err := c.Srun(ctx, env, "-N1", "-n2", "-J", name, workerBin,
		"-rank-env", "SLURM_PROCID", "-span", "srun-work", "-out", out, "-label", "task"); err != nil {
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
	if js, err := c.ShowJob(ctx, jobID); err != nil {
		t.Fatal(err)
	} else if len(js) != 1 || js[0]["JobState"] != "COMPLETED" || js[0]["ExitCode"] != "0:0" {
		t.Fatalf("job %s: %v, want COMPLETED 0:0", jobID, js)
	}

	recs := records(t, out, "task", 2)
	traceByRank := map[int]string{}
	for _, rec := range recs {
		rank, err := strconv.Atoi(rec.SlurmProcID)
		if err != nil {
			t.Fatalf("%s: SLURM_PROCID %q", filepath.Base(rec.File), rec.SlurmProcID)
		}
		what := fmt.Sprintf("task %d", rank)
		if rec.RunID != jobID {
			t.Errorf("%s: Setup's run id %q, want SLURM_JOB_ID %s", what, rec.RunID, jobID)
		}
		tr, err := j.Trace(ctx, rec.TraceID)
		if err != nil {
			t.Fatal(err)
		}
		traceByRank[rank] = tr.TraceID
		if len(tr.Spans) != 1 || tr.Spans[0].OperationName != "srun-work" {
			t.Errorf("%s: trace %s spans %+v, want one srun-work span", what, tr.TraceID, tr.Spans)
		}
		p, err := tr.SingleProcess()
		if err != nil {
			t.Fatal(err)
		}
		if p.ServiceName != service {
			t.Errorf("%s: serviceName %q, want %q", what, p.ServiceName, service)
		}
		checkTags(t, what+" process", p.Tags,
			wstr("slurm.job.id", jobID),
			wstr("slurm.job.name", name),
			wstr("slurm.cluster.name", c.Name),
			wint("slurm.ntasks", 2),
			wint("slurm.nnodes", 1),
			wstr("nv.dl.job.uuid", uuidv5("nemo.lens.job/"+c.Name+"/"+jobID)),
			wint("nv.dl.rank", int64(rank)),
			wint("nv.dl.world_size", 2),
			wstr("nemo.run.id", jobID),
			wstr("service.instance.id", jobID+"-rank"+strconv.Itoa(rank)),
			wstr("telemetry.sdk.language", "go"),
			wstr("host.name", host),
			wint("process.pid", int64(rec.PID)),
		)
		// srun, unlike sbatch, sets no ENVIRONMENT variable.
		noTag(t, what+" process", p.Tags, "deployment.environment")
	}
	if len(traceByRank) != 2 || traceByRank[0] == "" || traceByRank[1] == "" || traceByRank[0] == traceByRank[1] {
		t.Fatalf("traces by SLURM_PROCID: %v, want two distinct for 0 and 1", traceByRank)
	}
	checkSearch(ctx, t, j, service, map[string]string{"slurm.job.id": jobID}, traceByRank[0], traceByRank[1])
	checkSearch(ctx, t, j, service, map[string]string{"nv.dl.rank": "0"}, traceByRank[0])
	checkSearch(ctx, t, j, service, map[string]string{"nv.dl.rank": "1"}, traceByRank[1])
}

// TestLensRawCarrierJaeger: a worker that inherits a malformed carrier
// directly (no Lens parent re-encodes it). The OpenTelemetry Go SDK parses
// OTEL_RESOURCE_ATTRIBUTES itself and merges its result under every
// provider's resource (docs/resource.md#sdk-provider-merge); its parser rejects "%zz", keeps the raw
// bytes C3 28 (invalid UTF-8) and does not trim U+001F around a key. The
// exported resource must nevertheless be exactly Lens's: the Lens-decoded
// values ("%zz" kept, one U+FFFD for the maximal invalid subpart, '+' kept:
// docs/compatibility.md#percent-decoding) and the key trimmed with the
// Python whitespace set (docs/compatibility.md#whitespace),
// with no SDK-only key beside it.
func TestLensRawCarrierJaeger(t *testing.T) {
	elapsed(t)
	j := jaeger.StartForTest(t)
	workerBin := workerBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	service := uniqueName("lens-e2e-raw")
	runID := uniqueName("run-raw")
	out := outDir(t)
	const raw = "a=%zz,x=%C3%28,b=x+y,\x1fsdk.only\x1f=v,nv.dl.rank=0,"
	env := lensEnv(os.Environ(), append(exportTo(j, service), "NEMO_LENS_RUN_ID="+runID, "OTEL_RESOURCE_ATTRIBUTES="+raw)...)
	runCmd(ctx, t, env, 0, workerBin, "-span", "raw-work", "-out", out, "-label", "raw")

	rec := records(t, out, "raw", 1)[0]
	if rec.Carrier != raw {
		t.Errorf("worker carrier %q, want the raw %q", rec.Carrier, raw)
	}
	tr, err := j.Trace(ctx, rec.TraceID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tr.SingleProcess()
	if err != nil {
		t.Fatal(err)
	}
	checkTags(t, "process", p.Tags,
		wstr("a", "%zz"),
		wstr("x", "\uFFFD("),
		wstr("b", "x+y"),
		wstr("sdk.only", "v"),
		wint("nv.dl.rank", 0),
		wstr("service.instance.id", runID+"-rank0"),
		wstr("nemo.run.id", runID),
		wint("process.pid", int64(rec.PID)),
	)
	keys := append(slices.Concat(sdkTagKeys, lensTagKeys), "a", "x", "b", "sdk.only", "nv.dl.rank", "service.instance.id")
	checkTagKeys(t, "process", p.Tags, keys, optionalHWKey)
	checkSearch(ctx, t, j, service, map[string]string{"x": "\uFFFD("}, tr.TraceID)
}
