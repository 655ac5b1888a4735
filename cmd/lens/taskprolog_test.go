package main

import (
	"bytes"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/testvectors"
)

// slurmstepdApply returns env after slurmstepd has read a TaskProlog's
// output, following _proc_stdout of SchedMD's
// src/slurmd/slurmstepd/task.c (the same in 22.05 and today's development
// branch) step by step, on the whole output as one C string:
//
//   - the output ends at its first NUL (it is read into a C string);
//   - lines end at '\n' (the last one may lack it);
//   - "print " lines are written to the task's stdout (ignored here);
//   - "export " lines: skip isspace() after "export " (this may run past
//     the end of the line), find the first '=' after that; if there is none
//     before the end of the line, the line is ignored; the name is what lies
//     before the '=' without trailing isspace(); the value is everything
//     after the '=' up to the end of the line, verbatim;
//   - "unset " lines: skip isspace(), the name is the rest of the line
//     without trailing isspace();
//   - every other line is ignored.
func slurmstepdApply(env map[string]string, out string) map[string]string {
	res := maps.Clone(env)
	if res == nil {
		res = map[string]string{}
	}
	isspace := func(c byte) bool { return c == ' ' || ('\t' <= c && c <= '\r') }
	buf := out
	if i := strings.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	at := func(i int) byte { // buf[i] as C sees it: NUL past the end
		if i < len(buf) {
			return buf[i]
		}
		return 0
	}
	pos := 0
	for pos < len(buf) {
		end := strings.IndexByte(buf[pos:], '\n')
		endBuf := end < 0
		if endBuf {
			end = len(buf)
		} else {
			end += pos
		}
		switch rest := buf[pos:]; {
		case strings.HasPrefix(rest, "print "):
		case strings.HasPrefix(rest, "export "):
			n := pos + 7
			for isspace(at(n)) {
				n++
			}
			eq := strings.IndexByte(buf[min(n, len(buf)):], '=')
			if eq < 0 || n+eq > end {
				break
			}
			eq += n
			nameEnd := eq
			for nameEnd > 0 && isspace(buf[nameEnd-1]) {
				nameEnd--
			}
			res[buf[n:max(n, nameEnd)]] = buf[eq+1 : end]
		case strings.HasPrefix(rest, "unset "):
			n := pos + 6
			for isspace(at(n)) {
				n++
			}
			if at(n) == '\n' || at(n) == 0 {
				break
			}
			e := end
			for e > n && isspace(buf[e-1]) {
				e--
			}
			delete(res, buf[n:e])
		}
		if endBuf {
			break
		}
		pos = end + 1
	}
	return res
}

// TestSlurmstepdApply pins the parser to task.c's rules on the cases that
// differ from a shell's reading.
func TestSlurmstepdApply(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GONE": "x", "KEEP": "k"}
	out := "export A='quoted' $(x) `y`\n" + // no quote removal
		"export  B = spaced  \n" + // name trimmed, value verbatim
		"export C=a=b\n" + // the first '=' splits
		"unset GONE  \n" +
		"print export D=no\n" +
		"exportE=no\n" +
		"export F\n" + // no '=' on its line: ignored
		"G=no\n" +
		"export H=cr\r\n" +
		"export I=last" // no final newline
	got := slurmstepdApply(env, out)
	want := map[string]string{"KEEP": "k", "A": "'quoted' $(x) `y`", "B": " spaced  ", "C": "a=b", "H": "cr\r", "I": "last"}
	if !maps.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := slurmstepdApply(nil, "export A=1\x00\nexport B=2\n"); !maps.Equal(got, map[string]string{"A": "1"}) {
		t.Errorf("after a NUL: %q, want only A", got)
	}
}

// prologRow is one environment in which lens taskprolog must give the
// carrier of the two evals. The rows also seed FuzzTaskProlog.
type prologRow struct {
	name string
	env  map[string]string
}

// hostileCarrier holds keys a shell would interpret and a value with every
// byte class; "new\nline" makes the composed carrier unprintable in the
// TaskProlog syntax.
const hostileCarrier = "$(touch pwned3)=1,it's=2,back\\slash=3,bang!!=5,`id`=7,x y=%27%22,pct=100%25,custom.attr=kept"

// prologRows are the Slurm contexts of the e2e notes (batch step, its srun,
// array, requeue, two nodes, direct srun) and hostile values.
func prologRows() []prologRow {
	batch := map[string]string{
		"SLURM_JOB_ID": "3", "SLURM_JOBID": "3", "SLURM_JOB_NUM_NODES": "1", "SLURM_NNODES": "1",
		"SLURM_NTASKS": "2", "SLURM_NPROCS": "2", "SLURMD_NODENAME": "localhost", "SLURM_CLUSTER_NAME": "probe",
		"SLURM_JOB_PARTITION": "debug", "SLURM_JOB_USER": "root", "SLURM_JOB_UID": "0",
		"SLURM_TOPOLOGY_ADDR": "localhost", "SLURM_TOPOLOGY_ADDR_PATTERN": "node", "SLURM_PROCID": "0",
		"SLURM_LOCALID": "0", "SLURM_NODEID": "0", "SLURM_JOB_NODELIST": "localhost", "SLURM_JOB_NAME": "b2.sh",
		"ENVIRONMENT": "BATCH", "SLURM_SCRIPT_CONTEXT": "prolog_task",
	}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "\x00unset" {
				delete(m, kv[i])
				continue
			}
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	step := with(batch, "SLURM_STEP_ID", "0", "SLURM_STEPID", "0", "SLURM_STEP_NUM_TASKS", "2", "SLURM_PROCID", "1", "SLURM_LOCALID", "1")
	array := with(batch, "SLURM_JOB_ID", "5", "SLURM_ARRAY_JOB_ID", "4", "SLURM_ARRAY_TASK_ID", "0", "SLURM_ARRAY_TASK_COUNT", "3",
		"SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_MAX", "2", "SLURM_ARRAY_TASK_STEP", "1", "SLURM_NTASKS", "1")
	hostileName := `it's "quoted" $(touch pwned1) ` + "`touch pwned2` \\ 100% ! ${HOME} ~ * ; & | < > # é"
	return []prologRow{
		{"batch step", batch},
		{"srun in batch", step},
		{"array batch", array},
		{"srun in array", with(array, "SLURM_STEP_ID", "0", "SLURM_STEPID", "0")},
		{"requeued batch", with(batch, "SLURM_RESTART_COUNT", "1")},
		{"two-node srun task 3", with(step, "SLURM_JOB_NUM_NODES", "2", "SLURM_NNODES", "2", "SLURM_NTASKS", "4", "SLURMD_NODENAME", "node2",
			"SLURM_TOPOLOGY_ADDR", "node2", "SLURM_PROCID", "3", "SLURM_NODEID", "1", "SLURM_JOB_NODELIST", "node[1-2]")},
		{"direct srun", with(step, "SLURM_JOB_NAME", "bash", "ENVIRONMENT", "\x00unset")},
		{"batch step with the sbatch carrier", with(batch, carrier.EnvVar, "slurm.job.id=3,slurm.job.name=b2.sh")},
		{"step with a launcher carrier", with(step, carrier.EnvVar, "slurm.head_node.name=head-01,slurm.job.id=from-launch,custom.attr=kept")},
		{"hostile job name, batch", with(batch, "SLURM_JOB_NAME", hostileName, "SLURM_CLUSTER_NAME", "it's")},
		{"hostile job name, step", with(step, "SLURM_JOB_NAME", hostileName+"\nline two", "SLURM_TOPOLOGY_ADDR", "rack'1.node`2`")},
		{"hostile carrier, step", with(step, carrier.EnvVar, hostileCarrier)},
		{"hostile carrier, batch", with(batch, carrier.EnvVar, hostileCarrier+",raw=\xc3")},
		{"carrier key with a newline", with(step, carrier.EnvVar, "new\nline=4,custom.attr=kept")},
		{"carrier key with a carriage return", with(step, carrier.EnvVar, "cr\r=4")},
		{"blank step id", with(batch, "SLURM_STEP_ID", " ")},
		{"no Slurm", map[string]string{"HOME": "/root"}},
	}
}

// evalStages is what a task carries today: the batch step evaluates
// `lens env --stage sbatch`, a step's task then `lens env --stage task`,
// here in real bash with the built lens. ok is false when the carrier is
// unset at the end.
func evalStages(t *testing.T, env map[string]string) (value string, ok bool) {
	t.Helper()
	script := `eval "$("$LENS" env --stage sbatch)"` + "\n"
	if env["SLURM_STEP_ID"] != "" || env["SLURM_STEPID"] != "" { // a step's task, not the batch step
		script += `eval "$("$LENS" env --stage task)"` + "\n"
	}
	script += `[ "${` + carrier.EnvVar + `+set}" = set ] && printf 'set:%s' "$` + carrier.EnvVar + `"`
	e := maps.Clone(env)
	e["LENS"] = lensBin
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = cliEnv(e)
	cmd.Dir = t.TempDir()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, _ := cmd.Output() // exit 1 when unset
	v, ok := strings.CutPrefix(string(out), "set:")
	return v, ok
}

// prologBin runs the built lens taskprolog with the policy file policy.
func prologBin(t *testing.T, env map[string]string, policy string) result {
	t.Helper()
	return runBin(t, env, "", "taskprolog", "--policy", policy)
}

func emptyPolicy(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.conf")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// prologEnvs are the rows and every Slurm environment of the conformance
// vectors (values with NUL cannot be in an environment and are skipped).
func prologEnvs(t *testing.T) []prologRow {
	rows := prologRows()
	vf, err := testvectors.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vf.Vectors {
		if len(v.Env) == 0 || !slices.ContainsFunc(slices.Collect(maps.Keys(v.Env)), func(k string) bool { return strings.HasPrefix(k, "SLURM") }) {
			continue
		}
		if slices.ContainsFunc(slices.Collect(maps.Values(v.Env)), func(s string) bool { return strings.IndexByte(s, 0) >= 0 }) {
			continue
		}
		rows = append(rows, prologRow{"vector " + v.ID, v.Env})
	}
	return rows
}

// TestTaskPrologMatchesEvals: for every environment, the environment
// slurmstepd builds from lens taskprolog's output holds, byte for byte, the
// carrier a task gets today from the evals; or, when that carrier holds a
// newline (which the TaskProlog syntax cannot carry), that carrier without
// the segments holding one, and lens says why (on edd0320 the task kept
// its inherited carrier and lost its Slurm attributes).
func TestTaskPrologMatchesEvals(t *testing.T) {
	t.Parallel()
	policy := emptyPolicy(t)
	for _, row := range prologEnvs(t) {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			want, wantSet := evalStages(t, row.env)
			r := prologBin(t, row.env, policy)
			if r.code != 0 {
				t.Fatalf("lens taskprolog: %v", r)
			}
			got := slurmstepdApply(row.env, r.stdout)
			gotValue, gotSet := got[carrier.EnvVar]
			if strings.Contains(want, "\n") {
				var kept []string
				for _, seg := range strings.Split(want, ",") {
					if !strings.Contains(seg, "\n") {
						kept = append(kept, seg)
					}
				}
				if w := strings.Join(kept, ","); gotValue != w || !gotSet || !strings.Contains(r.stderr, "segment holding a newline or a NUL was left out") {
					t.Errorf("the evals' carrier %q holds a newline: want it without that segment, %q, and a report; got %q (set %v)\n%v",
						want, w, gotValue, gotSet, r)
				}
				return
			}
			if gotValue != want || gotSet != wantSet {
				t.Errorf("TaskProlog carrier\n%q (set %v)\nthe evals give\n%q (set %v)\n%v", gotValue, gotSet, want, wantSet, r)
			}
			for _, line := range strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n") {
				if line != "" && !strings.HasPrefix(line, "lens taskprolog: ") {
					t.Errorf("report line %q does not start with \"lens taskprolog: \" (slurmstepd reads stderr with stdout)", line)
				}
			}
			// Every line is an export slurmstepd applies as printed: no
			// line is lost or read differently.
			for _, line := range strings.SplitAfter(r.stdout, "\n") {
				if line == "" {
					continue
				}
				name, value, _ := strings.Cut(strings.TrimPrefix(strings.TrimSuffix(line, "\n"), "export "), "=")
				if !strings.HasPrefix(line, "export ") || !strings.HasSuffix(line, "\n") || got[name] != value {
					t.Errorf("line %q is not applied as printed (%s=%q)", line, name, got[name])
				}
			}
		})
	}
}

// TestTaskPrologBatchThenStep follows one job: the batch step's TaskProlog
// output becomes the batch script's environment, which srun hands to the
// step's task, whose TaskProlog runs in turn. Its carrier must be what
// `eval "$(lens env --stage sbatch)"` in the batch script followed by
// `eval "$(lens env --stage task)"` in the task gives.
func TestTaskPrologBatchThenStep(t *testing.T) {
	t.Parallel()
	policy := emptyPolicy(t)
	rows := prologRows()
	batch, step := rows[0].env, rows[1].env
	for _, c := range []struct {
		name        string
		submitterCA string // the carrier the job inherits from the submitter ("" none)
	}{{"plain", ""}, {"inherited", "custom.attr=kept,slurm.job.name=from-launch"}, {"hostile", hostileCarrier}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, s := maps.Clone(batch), maps.Clone(step)
			if c.submitterCA != "" {
				b[carrier.EnvVar], s[carrier.EnvVar] = c.submitterCA, c.submitterCA
			}
			// Today: the batch script evals the sbatch stage, the task the
			// task stage.
			sb := runBin(t, b, "", "env", "--stage", "sbatch")
			c1, ok := evalExport(t, sb.stdout)
			if !ok {
				t.Fatalf("lens env --stage sbatch: %v", sb)
			}
			today := maps.Clone(s)
			today[carrier.EnvVar] = c1
			want, _ := evalExport(t, runBin(t, today, "", "env", "--stage", "task").stdout)

			// With the TaskProlog.
			bEnv := slurmstepdApply(b, prologBin(t, b, policy).stdout)
			sEnv := maps.Clone(s)
			for _, k := range []string{carrier.EnvVar, "NEMO_LENS_RUN_ID"} {
				sEnv[k] = bEnv[k] // srun hands the batch script's environment on
			}
			got := slurmstepdApply(sEnv, prologBin(t, sEnv, policy).stdout)
			if got[carrier.EnvVar] != want {
				t.Errorf("task carrier\n%q\nwant (the two evals)\n%q", got[carrier.EnvVar], want)
			}
			if bEnv[carrier.EnvVar] != c1 {
				t.Errorf("batch step carrier\n%q\nwant (the sbatch eval)\n%q", bEnv[carrier.EnvVar], c1)
			}
			if got["NEMO_LENS_RUN_ID"] != "3" || bEnv["NEMO_LENS_RUN_ID"] != "3" {
				t.Errorf("NEMO_LENS_RUN_ID batch %q task %q, want the job id 3", bEnv["NEMO_LENS_RUN_ID"], got["NEMO_LENS_RUN_ID"])
			}
			// A script that still evals lens env, or a task that runs
			// lens env again, changes nothing: the stages are idempotent.
			again := slurmstepdApply(got, prologBin(t, got, policy).stdout)
			if !maps.Equal(again, got) {
				t.Errorf("a second TaskProlog changed the task environment:\n%q\n%q", got, again)
			}
			if v, _ := evalExport(t, runBin(t, got, "", "env", "--stage", "task").stdout); v != got[carrier.EnvVar] {
				t.Errorf("lens env --stage task after the TaskProlog gives %q, want it unchanged %q", v, got[carrier.EnvVar])
			}
		})
	}
}

// evalExport evaluates one `export NAME=WORD` line of lens env in bash.
func evalExport(t *testing.T, line string) (string, bool) {
	t.Helper()
	if line == "" {
		return "", false
	}
	cmd := exec.Command("bash", "-c", `eval "$1" && printf %s "$`+carrier.EnvVar+`"`, "eval", line)
	cmd.Env = cliEnv(nil)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash eval %q: %v", line, err)
	}
	return string(out), true
}

// prologIn runs lens taskprolog in-process with the policy text (nil: no
// file at the default path), a fixed host name and no syslog.
func prologIn(t testing.TB, env map[string]string, policy []byte, args ...string) (result, *bytes.Buffer) {
	path := "/nonexistent-lens-test-dir/taskprolog.conf"
	if policy != nil {
		path = filepath.Join(t.TempDir(), "taskprolog.conf")
		if err := os.WriteFile(path, policy, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	syslogged := &bytes.Buffer{}
	a := &app{
		stdout: &stdout, stderr: &stderr, env: environ.Map(env),
		hostname:   func() (string, error) { return "node-x", nil },
		policyPath: path,
		clock:      func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		syslog:     func() io.WriteCloser { return nopCloser{syslogged} },
		getpid:     func() int { return 77 },
		// Far from the 1 s bound: no test but TestTaskPrologWatchdog
		// depends on how fast the machine is.
		prologBound: time.Minute,
	}
	code := a.main(t.Context(), append([]string{"taskprolog"}, args...))
	return result{stdout.String(), stderr.String(), code}, syslogged
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func TestTaskPrologPolicy(t *testing.T) {
	t.Parallel()
	rows := prologRows()
	batch, step := rows[0].env, rows[1].env
	logDir := t.TempDir()
	with := func(base map[string]string, kv ...string) map[string]string {
		m := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	full := "# cluster policy\n" +
		"ranks = slurm\r\n" +
		"  service_name =  cluster-jobs \n" +
		"env.NEMO_LENS_ENABLED = true\n" +
		"env.OTEL_EXPORTER_OTLP_ENDPOINT = http://collector:4317/a#b=c\n" +
		"log = " + filepath.Join(logDir, "ok.log") + "\n"
	for _, c := range []struct {
		name   string
		env    map[string]string
		policy string
		want   map[string]string // variables the task ends with (carrier checked apart)
		ranks  bool              // the carrier ends with the Slurm ranks
		absent []string
		report string // a report that must appear on stderr
	}{
		{name: "no policy file", env: step, policy: "\x00none",
			want: map[string]string{"NEMO_LENS_RUN_ID": "3"}, absent: []string{"OTEL_SERVICE_NAME", "NEMO_LENS_ENABLED"}},
		{name: "full policy, step", env: step, policy: full, ranks: true,
			want: map[string]string{"NEMO_LENS_RUN_ID": "3", "OTEL_SERVICE_NAME": "cluster-jobs", "NEMO_LENS_ENABLED": "true",
				"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317/a#b=c"}},
		{name: "full policy, batch step: no ranks", env: batch, policy: full,
			want: map[string]string{"NEMO_LENS_RUN_ID": "3", "OTEL_SERVICE_NAME": "cluster-jobs"}},
		{name: "the job's own settings win", env: with(step, "NEMO_LENS_RUN_ID", "mine", "OTEL_SERVICE_NAME", "my-svc", "NEMO_LENS_ENABLED", "false",
			"OTEL_EXPORTER_OTLP_ENDPOINT", ""), policy: full, ranks: true,
			want: map[string]string{"NEMO_LENS_RUN_ID": "mine", "OTEL_SERVICE_NAME": "my-svc", "NEMO_LENS_ENABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": ""}},
		{name: "a blank run id is no run id", env: with(step, "NEMO_LENS_RUN_ID", " \t"), policy: "",
			want: map[string]string{"NEMO_LENS_RUN_ID": "3"}},
		{name: "opt-out", env: with(step, "LENS_TASKPROLOG", " OFF "), policy: full, want: map[string]string{}, absent: []string{"NEMO_LENS_RUN_ID", carrier.EnvVar}},
		{name: "carrier off", env: step, policy: "carrier = off\n", want: map[string]string{"NEMO_LENS_RUN_ID": "3"}, absent: []string{carrier.EnvVar}},
		{name: "broken policy: carrier and run id only", env: step,
			policy: "ranks = all\nservice_name = x\nnonsense\nfoo = 1\nenv.PATH = /evil\nenv.OTEL_RESOURCE_ATTRIBUTES = a=1\nservice_name = y\n" +
				"env.OTEL_X = a\x00b\nlog = " + filepath.Join(logDir, "broken.log") + "\n",
			want: map[string]string{"NEMO_LENS_RUN_ID": "3"}, absent: []string{"OTEL_SERVICE_NAME", "OTEL_X"},
			report: "taskprolog.conf:8: invalid value for env.OTEL_X: the value holds a NUL byte"},
		{name: "unexpected flag", env: step, policy: "", want: map[string]string{"NEMO_LENS_RUN_ID": "3"}, report: "unknown flag --bogus; running with the defaults"},
		{name: "a carrier segment with a newline is left out, not the line", env: with(step, carrier.EnvVar, "new\nline=1"), policy: full, ranks: true,
			want:   map[string]string{"OTEL_SERVICE_NAME": "cluster-jobs"},
			report: "an inherited OTEL_RESOURCE_ATTRIBUTES segment holding a newline or a NUL was left out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var pol []byte
			if c.policy != "\x00none" {
				pol = []byte(c.policy)
			}
			var args []string
			if c.name == "unexpected flag" {
				args = []string{"--bogus"}
			}
			r, _ := prologIn(t, c.env, pol, args...)
			if r.code != 0 {
				t.Fatalf("exit %d, want 0 always: %v", r.code, r)
			}
			got := slurmstepdApply(c.env, r.stdout)
			for k, v := range c.want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("%s = %q (set %v), want %q\n%v", k, g, ok, v, r)
				}
			}
			for _, k := range c.absent {
				if g, ok := got[k]; ok && c.env[k] != g {
					t.Errorf("%s = %q, want it not set by the TaskProlog", k, g)
				}
			}
			if ca, ok := got[carrier.EnvVar]; ok && !slices.Contains(c.absent, carrier.EnvVar) && !strings.Contains(ca, "\n") {
				hasRanks := strings.HasSuffix(ca, ",nv.dl.rank=1,nv.dl.world_size=2,nv.dl.local_rank=1")
				if hasRanks != c.ranks {
					t.Errorf("carrier %q: ranks at the end %v, want %v", ca, hasRanks, c.ranks)
				}
			}
			if c.report != "" && !strings.Contains(r.stderr, c.report) {
				t.Errorf("stderr %q lacks %q", r.stderr, c.report)
			}
			if strings.HasPrefix(c.name, "broken") {
				// The faulty policy's valid log line still says where reports go.
				if data, err := os.ReadFile(filepath.Join(logDir, "broken.log")); err != nil || !strings.Contains(string(data), c.report) {
					t.Errorf("log file: %v, %q lacks %q", err, data, c.report)
				}
			}
			for _, line := range strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n") {
				if line != "" && !strings.HasPrefix(line, "lens taskprolog:") {
					t.Errorf("report line %q does not start with \"lens taskprolog:\" (slurmstepd reads stderr too)", line)
				}
			}
		})
	}
}

// TestTaskPrologReports: a broken policy is reported, one line per fault,
// in the policy's log file (when its log line is valid), in syslog and on
// stderr, with the task's labels and no setting's value.
func TestTaskPrologReports(t *testing.T) {
	t.Parallel()
	logFile := filepath.Join(t.TempDir(), "lens.log")
	step := prologRows()[1].env
	policy := "ranks = all\nenv.OTEL_EXPORTER_OTLP_HEADERS = authorization=Bearer s3cret\nbogus line\nlog = " + logFile + "\n"
	r, syslogged := prologIn(t, step, []byte(policy))
	if r.code != 0 {
		t.Fatal(r)
	}
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("log file: %v", err)
	}
	wantLines := []string{
		`2026-01-02T03:04:05Z lens taskprolog: job 3 step 0 task 1 node localhost pid 77: policy ` + "%s" + `:1: invalid value for ranks: "all" (want none or slurm)`,
		`2026-01-02T03:04:05Z lens taskprolog: job 3 step 0 task 1 node localhost pid 77: policy ` + "%s" + `:3: want KEY = VALUE`,
		`2026-01-02T03:04:05Z lens taskprolog: job 3 step 0 task 1 node localhost pid 77: policy ` + "%s" + ` not applied: carrier and run id only`,
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != len(wantLines) {
		t.Fatalf("log file has %d lines, want %d:\n%s", len(lines), len(wantLines), data)
	}
	for i, l := range lines {
		pol := strings.TrimSuffix(strings.TrimPrefix(l, wantLines[i][:strings.Index(wantLines[i], "%s")]), wantLines[i][strings.Index(wantLines[i], "%s")+2:])
		if !strings.HasSuffix(pol, "taskprolog.conf") {
			t.Errorf("log line %d\n%q\nwant\n%q", i, l, wantLines[i])
		}
	}
	if got := strings.Count(syslogged.String(), "policy "); got != 3 {
		t.Errorf("syslog got %d reports, want 3: %q", got, syslogged.String())
	}
	if n := strings.Count(r.stderr, "\n"); n != 3 {
		t.Errorf("stderr has %d lines, want 3: %q", n, r.stderr)
	}
	for _, where := range []string{string(data), syslogged.String(), r.stderr} {
		if strings.Contains(where, "s3cret") {
			t.Errorf("a report holds a setting's value: %q", where)
		}
	}
	// Nothing to report: nothing written anywhere.
	quiet := filepath.Join(t.TempDir(), "quiet.log")
	r, syslogged = prologIn(t, step, []byte("log = "+quiet+"\n"))
	if _, err := os.Stat(quiet); err == nil || r.stderr != "" || syslogged.Len() != 0 {
		t.Errorf("a clean run wrote a report: stderr %q, syslog %q, log file err %v", r.stderr, syslogged.String(), err)
	}
}

// TestTaskPrologArgs: any program name whose base name contains
// "taskprolog" runs lens taskprolog, and so does the lens binary itself
// run with no argument as slurmstepd's TaskProlog
// (docs/taskprolog.md#slurm-conf).
func TestTaskPrologArgs(t *testing.T) {
	t.Parallel()
	inProlog := environ.Map{"SLURM_SCRIPT_CONTEXT": "prolog_task"}
	for _, c := range []struct {
		argv0 string
		args  []string
		env   environ.Map
		want  []string
	}{
		{"/usr/local/bin/lens-taskprolog", nil, nil, []string{"taskprolog"}},
		{"lens-taskprolog", []string{"--policy", "p"}, nil, []string{"taskprolog", "--policy", "p"}},
		{"/usr/local/bin/lens_taskprolog", nil, nil, []string{"taskprolog"}},
		{"/usr/local/bin/lens-taskprolog-1.0", nil, nil, []string{"taskprolog"}},
		{"taskprolog", nil, nil, []string{"taskprolog"}},
		{"/usr/local/bin/lens-taskprolog", []string{"taskprolog", "--policy", "p"}, nil, []string{"taskprolog", "--policy", "p"}},
		{"/usr/bin/lens", []string{"env"}, nil, []string{"env"}},
		{"/usr/bin/lens", nil, nil, nil},
		{"/usr/bin/lens", nil, inProlog, []string{"taskprolog"}},
		{"/usr/bin/lens", []string{"env"}, inProlog, []string{"env"}},
		{"/usr/bin/lens", nil, environ.Map{"SLURM_SCRIPT_CONTEXT": "prolog_slurmd"}, nil},
		{"/opt/lens-taskprolog/lens", []string{"detect"}, nil, []string{"detect"}},
		{"/usr/bin/lens-task-prolog", nil, nil, nil},
	} {
		if got := taskPrologArgs(c.argv0, c.args, c.env); !slices.Equal(got, c.want) {
			t.Errorf("taskPrologArgs(%q, %q, %v) = %q, want %q", c.argv0, c.args, c.env, got, c.want)
		}
	}
	// The real binary under such names, and itself, as slurmstepd runs a
	// TaskProlog: no arguments, SLURM_SCRIPT_CONTEXT=prolog_task.
	dir := t.TempDir()
	for _, name := range []string{TaskPrologName, "lens_taskprolog", "lens-taskprolog-1.0", ""} {
		path := lensBin
		if name != "" {
			path = filepath.Join(dir, name)
			if err := os.Symlink(lensBin, path); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(path)
		cmd.Env = cliEnv(map[string]string{"SLURM_JOB_ID": "9", TaskPrologPolicyEnv: emptyPolicy(t), "SLURM_SCRIPT_CONTEXT": "prolog_task"})
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), "export NEMO_LENS_RUN_ID=9\n") {
			t.Errorf("%s: %v, stdout %q; want exit 0 and the exports", filepath.Base(path), err, out)
		}
	}
}

// unquoteWord reads back one shell word as shellquote.Quote writes it
// (Python's shlex.quote): unquoted safe bytes, '...' and "'" pieces.
func unquoteWord(w string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(w); {
		switch c := w[i]; c {
		case '\'', '"':
			j := strings.IndexByte(w[i+1:], c)
			if j < 0 {
				return "", false
			}
			inner := w[i+1 : i+1+j]
			if c == '"' && strings.ContainsAny(inner, "$`\\") {
				return "", false
			}
			b.WriteString(inner)
			i += j + 2
		default:
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_@%+=:,./-", c) >= 0) {
				return "", false // a byte shlex.quote leaves unquoted only in its safe set
			}
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), true
}

// envStageIn runs lens env --stage stage in-process and evaluates its
// export; ok is false when it printed nothing.
func envStageIn(t *testing.T, env map[string]string, stage string) (string, bool) {
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, env: environ.Map(env), hostname: func() (string, error) { return "node-x", nil }}
	if code := a.main(t.Context(), []string{"env", "--stage", stage}); code != 0 {
		t.Fatalf("lens env --stage %s: exit %d: %s", stage, code, stderr.String())
	}
	if stdout.Len() == 0 {
		return "", false
	}
	word, ok := strings.CutPrefix(strings.TrimSuffix(stdout.String(), "\n"), "export "+carrier.EnvVar+"=")
	v, ok2 := unquoteWord(word)
	if !ok || !ok2 {
		t.Fatalf("lens env printed %q", stdout.String())
	}
	return v, true
}

// FuzzTaskProlog: for any job name, inherited carrier and step id on top of
// a row's environment, slurmstepd's reading of lens taskprolog's output
// gives the carrier of the two stages of lens env (evaluated as a shell
// reads shlex.quote's word), without the segments that hold a newline;
// the run id is the job id; lens exits 0.
func FuzzTaskProlog(f *testing.F) {
	rows := prologRows()
	for i, r := range rows {
		f.Add(uint8(i), r.env["SLURM_JOB_NAME"], r.env[carrier.EnvVar], r.env["SLURM_STEP_ID"])
	}
	f.Fuzz(func(t *testing.T, row uint8, jobName, carrierText, stepID string) {
		env := maps.Clone(rows[int(row)%len(rows)].env)
		env["SLURM_JOB_NAME"], env["SLURM_STEP_ID"] = jobName, stepID
		if carrierText != "" {
			env[carrier.EnvVar] = carrierText
		}
		for k, v := range env {
			if strings.IndexByte(v, 0) >= 0 || strings.IndexByte(k, 0) >= 0 {
				return // no environment holds a NUL
			}
		}
		want, wantSet := envStageIn(t, env, "sbatch")
		if wantSet && (env["SLURM_STEP_ID"] != "" || env["SLURM_STEPID"] != "") {
			e := maps.Clone(env)
			e[carrier.EnvVar] = want
			want, wantSet = envStageIn(t, e, "task")
		}
		r, _ := prologIn(t, env, nil)
		if r.code != 0 {
			t.Fatalf("exit %d: %v", r.code, r)
		}
		got := slurmstepdApply(env, r.stdout)
		gotValue, gotSet := got[carrier.EnvVar]
		if strings.Contains(want, "\n") {
			// The segments holding a newline are left out, not the line.
			segs := strings.Split(want, ",")
			kept := segs[:0]
			for _, seg := range segs {
				if !strings.Contains(seg, "\n") {
					kept = append(kept, seg)
				}
			}
			want = strings.Join(kept, ",")
		}
		if gotValue != want || gotSet != wantSet {
			t.Errorf("TaskProlog carrier %q (set %v), the stages give %q (set %v)\n%v", gotValue, gotSet, want, wantSet, r)
		}
		if id := env["SLURM_JOB_ID"]; id != "" && env["NEMO_LENS_RUN_ID"] == "" && got["NEMO_LENS_RUN_ID"] != id {
			t.Errorf("NEMO_LENS_RUN_ID %q, want the job id %q", got["NEMO_LENS_RUN_ID"], id)
		}
	})
}

// BenchmarkTaskProlog is the work of one lens taskprolog run in a step
// task with a full policy, without the process start
// (docs/taskprolog.md#cost).
func BenchmarkTaskProlog(b *testing.B) {
	env := prologRows()[1].env
	path := filepath.Join(b.TempDir(), "taskprolog.conf")
	policy := "ranks = slurm\nservice_name = cluster-jobs\nenv.NEMO_LENS_ENABLED = true\n" +
		"env.OTEL_EXPORTER_OTLP_ENDPOINT = http://collector.example:4317\nenv.OTEL_EXPORTER_OTLP_INSECURE = true\n"
	if err := os.WriteFile(path, []byte(policy), 0o644); err != nil {
		b.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	for b.Loop() {
		stdout.Reset()
		a := &app{stdout: &stdout, stderr: &stderr, env: environ.Map(env),
			hostname: func() (string, error) { return "node-x", nil },
			syslog:   func() io.WriteCloser { return nil }}
		if code := a.main(b.Context(), []string{"taskprolog", "--policy", path}); code != 0 || stderr.Len() != 0 {
			b.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
}

// TestTaskPrologPanic: a panic inside (here: the host name probe) is
// reported and lens still exits 0 with no export, so the task starts.
func TestTaskPrologPanic(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, env: environ.Map(prologRows()[1].env),
		hostname:   func() (string, error) { panic("probe exploded") },
		policyPath: "/nonexistent-lens-test-dir/taskprolog.conf",
		syslog:     func() io.WriteCloser { return nil }}
	if code := a.main(t.Context(), []string{"taskprolog"}); code != 0 || stdout.Len() != 0 ||
		!strings.Contains(stderr.String(), "internal error, nothing exported: probe exploded") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0, nothing, the panic reported", code, stdout.String(), stderr.String())
	}
}

// TestTaskPrologRanksAsLensExec: with ranks = slurm, a step task's carrier
// is what `lens exec --rank-from slurm` gives its command in the task that
// has the carrier without ranks.
func TestTaskPrologRanksAsLensExec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, ranked := filepath.Join(dir, "plain.conf"), filepath.Join(dir, "ranked.conf")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ranked, []byte("ranks = slurm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, row := range prologRows() {
		if row.env["SLURM_STEP_ID"] == "" || strings.Contains(row.env[carrier.EnvVar], "\n") {
			continue
		}
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			without := slurmstepdApply(row.env, prologBin(t, row.env, plain).stdout)
			with := slurmstepdApply(row.env, prologBin(t, row.env, ranked).stdout)
			r := runBin(t, without, "", "exec", "--rank-from", "slurm", "--", "printenv", carrier.EnvVar)
			if r.code != 0 || r.stdout != with[carrier.EnvVar]+"\n" {
				t.Errorf("ranks = slurm gives\n%q\nlens exec --rank-from slurm gives\n%v", with[carrier.EnvVar], r)
			}
		})
	}
}
