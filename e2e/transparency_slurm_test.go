package e2e_test

// Issue 16, "lens exec is invisible to the workload", against the real
// Slurm: each scenario runs twice, as `srun … observer ARGS` and as
// `srun … lens exec -- observer ARGS`, and what the command observes must be
// the same both ways and equal to an expectation written here.
//
// Slurm signals every process of a step (scancel --signal, srun
// --signal=SIG@TIME), lens included. A lens that passed on what it received
// made the command see each signal twice; inside a Slurm job lens exec
// defaults to --signals direct and passes nothing on.
//
// The command is cmd/lens/testdata/observer.c (built here with cc): in mode
// "signals" it counts the standard signals with handlers and real-time
// signal 35 exactly with sigwaitinfo (RT signals are queued, never
// coalesced), prints "ready PID", and on signal 36 prints its counts and
// exits 0. Before the terminator is sent, the test waits until the
// observer has taken the signal it expects (see awaitSigwait), so the counts
// never depend on which of two scancel requests slurmd handles first.
//
//	cd e2e && CI=true go test -count=1 -run TestSlurmTransparency -v ./...

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/slurm"
)

// The observer's real-time signals (observer.c: RT_COUNTED, RT_END).
const (
	sigRTCounted = "35"
	sigRTEnd     = "36"
)

// observerBuild builds cmd/lens/testdata/observer.c once.
var observerBuild = sync.OnceValues(func() (string, error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return "", err
	}
	out := filepath.Join(h.root, "bin", "observer")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	src := filepath.Join(repoRoot(), "cmd", "lens", "testdata", "observer.c")
	if b, err := exec.Command(cc, "-O2", "-o", out, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("cc -O2 -o %s %s: %v\n%s", out, src, err, b)
	}
	return out, nil
})

// observerBinary returns the built observer; without a C compiler it skips,
// or fails when CI=true.
func observerBinary(t *testing.T) string {
	t.Helper()
	path, err := observerBuild()
	var notFound *exec.Error
	if errors.As(err, &notFound) {
		if inCI() {
			t.Fatalf("cc is needed to build cmd/lens/testdata/observer.c and CI=true: %v", err)
		}
		t.Skipf("no C compiler (cc) to build cmd/lens/testdata/observer.c: %v (CI=true turns this into a failure)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// observation is what one run showed: the observer's report and Slurm's
// view of the job.
type observation struct {
	jobID     string
	srunExit  int            // srun's own exit status
	slurmExit string         // scontrol's ExitCode (status:signal)
	state     string         // scontrol's JobState
	counts    map[string]int // the observer's "counts" line (signals mode)
	output    string         // the step's stdout and stderr (--output)
}

// step is one signal of a signals scenario: scancel --signal=sig, or, when
// sig is empty, one that Slurm sends by itself (srun --signal); either way
// the run waits until the observer has taken it.
type step struct{ sig string }

// tspec is one scenario: srun's options, the observer's arguments and, in
// signals mode, the signals before the terminator.
type tspec struct {
	srun  []string
	argv  []string
	steps []step
}

// lensExecArgs are the arguments that wrap the observer in lens exec.
func lensExecArgs(lens string) []string { return []string{lens, "exec", "--"} }

// TestSlurmTransparency runs each scenario as a bare and a wrapped step at
// the same time (one CPU each; with fewer CPUs Slurm queues one of them):
// signals from scancel and from srun --signal=SIG@TIME are counted once, the
// job's exit status is the command's, both ways. About 30 s, most of it
// waiting for slurmctld's time-limit check (every 30 s) in
// srun-signal-at-time.
func TestSlurmTransparency(t *testing.T) {
	elapsed(t)
	gate(t)
	obs := observerBinary(t)
	lens := lensBinary(t) // before the cluster: a build error needs no daemons
	c := needCluster(t, 1)
	dir := outDir(t)
	env := lensEnv(c.Env()) // no telemetry switches, no carrier: the same for both runs
	// The subtests are parallel: they run after this function returns, so
	// the deadline ends in a cleanup, not a defer.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)

	zero := map[string]int{"HUP": 0, "INT": 0, "QUIT": 0, "USR1": 0, "USR2": 0, "TERM": 0, "WINCH": 0, "ALRM": 0, "RT": 0, "RTMAX": 0}
	with := func(k string, n int) map[string]int {
		m := maps.Clone(zero)
		m[k] = n
		return m
	}

	// run runs spec bare and wrapped at the same time and returns both
	// observations.
	run := func(t *testing.T, spec tspec) (bare, wrapped observation) {
		t.Helper()
		var wg sync.WaitGroup
		var errBare, errWrapped error
		wg.Go(func() { bare, errBare = runObserved(ctx, c, env, dir, "bare", obs, nil, spec) })
		wg.Go(func() { wrapped, errWrapped = runObserved(ctx, c, env, dir, "wrapped", obs, lensExecArgs(lens), spec) })
		wg.Wait()
		if err := errors.Join(errBare, errWrapped); err != nil {
			t.Fatal(err)
		}
		return bare, wrapped
	}

	signals := []struct {
		name string
		spec tspec
		want map[string]int
	}{
		{
			// Slurm signals each process of the step once: the command
			// must count one, not one from Slurm and one from lens.
			name: "scancel-rt35",
			spec: tspec{argv: []string{"signals"}, steps: []step{{sigRTCounted}}},
			want: with("RT", 1),
		},
		{
			name: "scancel-usr1",
			spec: tspec{argv: []string{"signals"}, steps: []step{{"USR1"}}},
			want: with("USR1", 1),
		},
		{
			name: "scancel-rt35-twice-then-usr1",
			spec: tspec{argv: []string{"signals"}, steps: []step{{sigRTCounted}, {sigRTCounted}, {"USR1"}}},
			want: func() map[string]int { m := with("RT", 2); m["USR1"] = 1; return m }(),
		},
		{
			// srun --signal=35@299 with a 5-minute limit: slurmctld sends
			// 35 to the step at its next time-limit check (every 30 s),
			// far from the limit itself.
			name: "srun-signal-at-time",
			spec: tspec{srun: []string{"--time=5", "--signal=" + sigRTCounted + "@299"}, argv: []string{"signals"}, steps: []step{{""}}},
			want: with("RT", 1),
		},
	}
	for _, tc := range signals {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bare, wrapped := run(t, tc.spec)
			for _, o := range []struct {
				label string
				obs   observation
			}{{"bare", bare}, {"wrapped", wrapped}} {
				if !maps.Equal(o.obs.counts, tc.want) {
					t.Errorf("%s (job %s): counts %v, want %v\noutput:\n%s", o.label, o.obs.jobID, o.obs.counts, tc.want, o.obs.output)
				}
				if o.obs.srunExit != 0 || o.obs.slurmExit != "0:0" || o.obs.state != "COMPLETED" {
					t.Errorf("%s (job %s): srun exit %d, Slurm ExitCode=%s JobState=%s; want 0, 0:0, COMPLETED\noutput:\n%s",
						o.label, o.obs.jobID, o.obs.srunExit, o.obs.slurmExit, o.obs.state, o.obs.output)
				}
			}
			if !maps.Equal(bare.counts, wrapped.counts) {
				t.Errorf("the command counted %v bare and %v under lens exec", bare.counts, wrapped.counts)
			}
		})
	}

	t.Run("exit-3", func(t *testing.T) {
		t.Parallel()
		bare, wrapped := run(t, tspec{argv: []string{"exit", "3"}})
		for _, o := range []struct {
			label string
			obs   observation
		}{{"bare", bare}, {"wrapped", wrapped}} {
			if o.obs.srunExit != 3 || o.obs.slurmExit != "3:0" || o.obs.state != "FAILED" {
				t.Errorf("%s (job %s): srun exit %d, Slurm ExitCode=%s JobState=%s; want 3, 3:0, FAILED\noutput:\n%s",
					o.label, o.obs.jobID, o.obs.srunExit, o.obs.slurmExit, o.obs.state, o.obs.output)
			}
		}
	})

	t.Run("killed-by-usr1", func(t *testing.T) {
		t.Parallel()
		// observer raise 10: the command dies of SIGUSR1. lens exec ends
		// itself by the same signal, so Slurm's accounting records the same
		// ExitCode (0:10: killed by signal 10) and srun returns the same
		// status to the launch script.
		bare, wrapped := run(t, tspec{argv: []string{"raise", strconv.Itoa(int(syscall.SIGUSR1))}})
		if bare.srunExit == 0 || bare.srunExit != wrapped.srunExit {
			t.Errorf("srun exit status: bare %d, wrapped %d; want equal and non-zero\nbare output:\n%s\nwrapped output:\n%s",
				bare.srunExit, wrapped.srunExit, bare.output, wrapped.output)
		}
		want := "0:" + strconv.Itoa(int(syscall.SIGUSR1))
		if bare.slurmExit != want || wrapped.slurmExit != want || bare.state != wrapped.state {
			t.Errorf("Slurm ExitCode: bare %s (%s), wrapped %s (%s); want %s both", bare.slurmExit, bare.state, wrapped.slurmExit, wrapped.state, want)
		}
	})
}

// bgSrun is srun of a named job running in the background.
type bgSrun struct {
	c    *slurm.Cluster
	name string
	cmd  *exec.Cmd
	out  bytes.Buffer  // srun's own messages (the step's go where --output says)
	done chan struct{} // closed once srun has ended
	err  error         // srun's Wait, read after done
}

// startSrun starts `srun ARGS...` with env; args name the job name.
func startSrun(ctx context.Context, c *slurm.Cluster, env []string, name string, args []string) (*bgSrun, error) {
	s := &bgSrun{c: c, name: name, cmd: exec.CommandContext(ctx, "srun", args...), done: make(chan struct{})}
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	s.cmd.WaitDelay = 5 * time.Second
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	return s, nil
}

// abort cancels the job (it may be pending or running), then srun, and
// waits for srun to end; it does nothing once srun has ended.
func (s *bgSrun) abort() {
	select {
	case <-s.done:
		return
	default:
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	_, _ = s.c.Run(cctx, nil, "scancel", "--name="+s.name)
	ccancel()
	_ = s.cmd.Process.Kill()
	<-s.done
}

// runObserved runs `srun -N1 -n1 SRUN... [WRAP...] OBSERVER ARGV...` in the
// background with the step's output in a file, plays spec's signals (then
// the terminator) in signals mode, and returns what the run showed.
func runObserved(ctx context.Context, c *slurm.Cluster, env []string, dir, label, observer string, wrap []string, spec tspec) (observation, error) {
	var o observation
	name := uniqueName("lens-transp-" + label)
	out := filepath.Join(dir, name+".out")
	args := append([]string{"-N1", "-n1", "--job-name=" + name, "--output=" + out}, spec.srun...)
	args = append(args, wrap...)
	args = append(args, observer)
	args = append(args, spec.argv...)
	step, err := startSrun(ctx, c, env, name, args)
	if err != nil {
		return o, fmt.Errorf("%s: srun: %w", label, err)
	}
	done := step.done
	fail := func(format string, a ...any) (observation, error) {
		step.abort()
		o.output, _ = readString(out)
		return o, fmt.Errorf("%s (srun %s): %s\nsrun output:\n%s\nstep output:\n%s%s", label, strings.Join(args, " "),
			fmt.Sprintf(format, a...), step.out.String(), o.output, c.LogTail(10))
	}

	if spec.steps != nil {
		pid, err := awaitReady(ctx, out, done)
		if err != nil {
			return fail("%v", err)
		}
		jobs, err := c.JobsNamed(ctx, name)
		if err != nil || len(jobs) != 1 {
			return fail("scontrol show job: %d jobs named %s (%v)", len(jobs), name, err)
		}
		o.jobID = jobs[0]["JobId"]
		for _, st := range spec.steps {
			base, err := awaitSigwait(ctx, pid, -1, done)
			if err != nil {
				return fail("before signal %q: %v", st.sig, err)
			}
			if st.sig != "" {
				if _, err := c.Run(ctx, nil, "scancel", "--signal="+st.sig, o.jobID); err != nil {
					return fail("%v", err)
				}
			}
			if _, err := awaitSigwait(ctx, pid, base, done); err != nil {
				return fail("after signal %q: %v", st.sig, err)
			}
		}
		if _, err := c.Run(ctx, nil, "scancel", "--signal="+sigRTEnd, o.jobID); err != nil {
			return fail("%v", err)
		}
	}
	select {
	case <-done:
	case <-ctx.Done():
		return fail("srun did not finish: %v", ctx.Err())
	}
	var exitErr *exec.ExitError
	if step.err != nil && !errors.As(step.err, &exitErr) {
		return fail("srun: %v", step.err)
	}
	o.srunExit = step.cmd.ProcessState.ExitCode()
	if o.jobID == "" {
		jobs, err := c.JobsNamed(ctx, name)
		if err != nil || len(jobs) != 1 {
			return fail("scontrol show job: %d jobs named %s (%v)", len(jobs), name, err)
		}
		o.jobID = jobs[0]["JobId"]
	}
	// srun returns while the job may still be COMPLETING.
	if err := c.WaitGone(ctx, o.jobID); err != nil {
		return fail("%v", err)
	}
	jobs, err := c.ShowJob(ctx, o.jobID)
	if err != nil || len(jobs) != 1 {
		return fail("scontrol show job %s: %d records (%v)", o.jobID, len(jobs), err)
	}
	o.slurmExit, o.state = jobs[0]["ExitCode"], jobs[0]["JobState"]
	if o.output, err = readString(out); err != nil {
		return fail("%v", err)
	}
	if spec.steps != nil {
		if o.counts, err = parseCounts(o.output); err != nil {
			return fail("%v", err)
		}
	}
	return o, nil
}

func readString(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

// awaitReady polls the step's output file until the observer's "ready PID"
// line is there, and returns PID (a process of this machine: the cluster is
// local). It fails when srun ends first or ctx ends.
func awaitReady(ctx context.Context, out string, done <-chan struct{}) (int, error) {
	for {
		if b, err := os.ReadFile(out); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if rest, ok := strings.CutPrefix(line, "ready "); ok {
					pid, err := strconv.Atoi(strings.TrimSpace(rest))
					if err != nil || pid <= 0 {
						return 0, fmt.Errorf("bad ready line %q", line)
					}
					return pid, nil
				}
			}
		}
		select {
		case <-done:
			return 0, errors.New("srun ended before the observer was ready")
		case <-ctx.Done():
			return 0, fmt.Errorf("the observer did not print its ready line: %w", ctx.Err())
		case <-time.After(slurm.PollInterval / 4):
		}
	}
}

// awaitSigwait is the synchronisation with the observer, which takes every
// signal in one loop around sigwaitinfo(2) and sleeps nowhere else. The
// kernel counts each time a process goes to sleep (voluntary_ctxt_switches);
// the observer goes back to sleep in sigwaitinfo once per signal it takes.
//
// With after < 0 it waits until pid sleeps in sigwaitinfo and returns the
// count of that sleep: read count, see it asleep in sigwaitinfo, read the
// same count again. With after >= 0 it waits until pid is asleep in
// sigwaitinfo with a larger count, that is: it has taken at least one
// signal since, and the handler or sigwaitinfo has counted it.
func awaitSigwait(ctx context.Context, pid int, after int64, done <-chan struct{}) (int64, error) {
	last := ""
	for {
		n1, err1 := voluntarySwitches(pid)
		asleep, what, err2 := inSigwait(pid)
		n2, err3 := voluntarySwitches(pid)
		if err := errors.Join(err1, err2, err3); err != nil {
			return 0, fmt.Errorf("observer %d: %w", pid, err)
		}
		last = fmt.Sprintf("switches %d, %s", n2, what)
		if asleep && n1 == n2 && (after < 0 || n2 > after) {
			return n2, nil
		}
		select {
		case <-done:
			return 0, fmt.Errorf("srun ended while waiting for observer %d (last: %s)", pid, last)
		case <-ctx.Done():
			return 0, fmt.Errorf("observer %d did not take a signal (switches still %d; last: %s): %w", pid, after, last, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func voluntarySwitches(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "voluntary_ctxt_switches:"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no voluntary_ctxt_switches", pid)
}

// inSigwait reports whether pid is asleep (state S) in rt_sigtimedwait, by
// its wait channel or, where the kernel hides that, its current system call.
func inSigwait(pid int) (bool, string, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false, "", err
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false, "", fmt.Errorf("/proc/%d/stat: unexpected %q", pid, stat)
	}
	state := stat[i+2]
	wchan, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
	sc, _ := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", pid))
	nr, _, _ := strings.Cut(strings.TrimSpace(string(sc)), " ")
	what := fmt.Sprintf("state %c, wchan %q, syscall %q", state, wchan, nr)
	in := strings.HasPrefix(string(wchan), "do_sigtimedwait") || nr == strconv.Itoa(syscall.SYS_RT_SIGTIMEDWAIT)
	return state == 'S' && in, what, nil
}

// parseCounts parses the observer's single "counts K=N ..." line.
func parseCounts(output string) (map[string]int, error) {
	var lines []string
	for _, l := range strings.Split(output, "\n") {
		if strings.HasPrefix(l, "counts ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		return nil, fmt.Errorf("%d counts lines in the step output, want 1", len(lines))
	}
	m := map[string]int{}
	for _, f := range strings.Fields(strings.TrimPrefix(lines[0], "counts ")) {
		k, v, ok := strings.Cut(f, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			return nil, fmt.Errorf("bad field %q in %q", f, lines[0])
		}
		m[k] = n
	}
	return m, nil
}
