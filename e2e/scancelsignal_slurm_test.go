package e2e_test

// Issue 35, "a signal outside the relayed list crashes lens", against the
// real Slurm: `scancel --signal=SIG` of a step signals every process of the
// step, lens exec included. The command handles SIG and exits 0; the step's
// status must be the command's, as for the bare command, whatever lens does
// with its own copy (docs/exec.md#signal-fates): SIGSEGV and SIGBUS, which
// the Go runtime crashed lens with before lens subscribed to them, and
// SIGRTMIN (34), which lens cannot catch and ignores in a step.
//
//	cd e2e && CI=true go test -count=1 -run TestSlurmScancelSignal -v ./...

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSlurmScancelSignal runs `srun observer trap SIG` and `srun lens exec
// -- observer trap SIG` side by side for each signal, sends SIG with
// scancel --signal once the observer is ready, and compares srun's exit
// status and Slurm's ExitCode and JobState: 0, 0:0, COMPLETED both ways.
func TestSlurmScancelSignal(t *testing.T) {
	elapsed(t)
	gate(t)
	obs := observerBinary(t)
	lens := lensBinary(t)
	c := needCluster(t, 1)
	dir := outDir(t)
	env := lensEnv(c.Env()) // no telemetry: the same for both runs
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)

	for _, sig := range []string{"11", "7", "34"} {
		t.Run("signal-"+sig, func(t *testing.T) {
			t.Parallel()
			type result struct {
				srunExit         int
				slurmExit, state string
				output           string
				err              error
			}
			run := func(label string, wrap []string) (r result) {
				name := uniqueName("lens-scancel-" + sig + "-" + label)
				out := filepath.Join(dir, name+".out")
				args := append([]string{"-N1", "-n1", "--job-name=" + name, "--output=" + out}, wrap...)
				args = append(args, obs, "trap", sig)
				step, err := startSrun(ctx, c, env, name, args)
				if err != nil {
					r.err = err
					return r
				}
				done := step.done
				fail := func(err error) result {
					step.abort()
					r.output, _ = readString(out)
					r.err = fmt.Errorf("%s (srun %s): %w\nsrun output:\n%s\nstep output:\n%s%s", label,
						strings.Join(args, " "), err, step.out.String(), r.output, c.LogTail(10))
					return r
				}
				// The observer says ready once its handler is installed;
				// lens subscribed before it started the observer.
				pid, err := awaitReady(ctx, out, done)
				if err != nil {
					return fail(err)
				}
				if wrap != nil && sig == "34" {
					// lens ignores SIGRTMIN right after the command's
					// fork, which the ready line does not follow.
					if err := awaitIgnored(ctx, pid, 34, done); err != nil {
						return fail(err)
					}
				}
				jobs, err := c.JobsNamed(ctx, name)
				if err != nil || len(jobs) != 1 {
					return fail(fmt.Errorf("scontrol show job: %d jobs named %s (%v)", len(jobs), name, err))
				}
				id := jobs[0]["JobId"]
				if _, err := c.Run(ctx, nil, "scancel", "--signal="+sig, id); err != nil {
					return fail(err)
				}
				select {
				case <-done:
				case <-ctx.Done():
					return fail(fmt.Errorf("srun did not finish: %w", ctx.Err()))
				}
				var exitErr *exec.ExitError
				if step.err != nil && !errors.As(step.err, &exitErr) {
					return fail(step.err)
				}
				r.srunExit = step.cmd.ProcessState.ExitCode()
				if err := c.WaitGone(ctx, id); err != nil {
					return fail(err)
				}
				shown, err := c.ShowJob(ctx, id)
				if err != nil || len(shown) != 1 {
					return fail(fmt.Errorf("scontrol show job %s: %d records (%v)", id, len(shown), err))
				}
				r.slurmExit, r.state = shown[0]["ExitCode"], shown[0]["JobState"]
				if r.output, err = readString(out); err != nil {
					return fail(err)
				}
				return r
			}
			var bare, wrapped result
			done := make(chan struct{})
			go func() { defer close(done); bare = run("bare", nil) }()
			wrapped = run("wrapped", lensExecArgs(lens))
			<-done
			if err := errors.Join(bare.err, wrapped.err); err != nil {
				t.Fatal(err)
			}
			for _, o := range []struct {
				label string
				r     result
			}{{"bare", bare}, {"wrapped", wrapped}} {
				if o.r.srunExit != 0 || o.r.slurmExit != "0:0" || o.r.state != "COMPLETED" {
					t.Errorf("%s: srun exit %d, Slurm ExitCode=%s JobState=%s; want 0, 0:0, COMPLETED (the command's)\noutput:\n%s",
						o.label, o.r.srunExit, o.r.slurmExit, o.r.state, o.r.output)
				}
				if !strings.Contains(o.r.output, "trapped "+sig) {
					t.Errorf("%s: the command did not report signal %s\noutput:\n%s", o.label, sig, o.r.output)
				}
			}
			if strings.Contains(wrapped.output, "goroutine ") {
				t.Errorf("lens crashed:\n%s", wrapped.output)
			}
		})
	}
}

// awaitIgnored waits until the parent of pid (lens exec, the observer's
// parent) ignores sig, by its SigIgn mask in /proc.
func awaitIgnored(ctx context.Context, pid, sig int, done <-chan struct{}) error {
	field := func(p int, name string) string {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	parent, err := strconv.Atoi(field(pid, "PPid"))
	if err != nil {
		return fmt.Errorf("the parent of %d: %v", pid, err)
	}
	for {
		if m, err := strconv.ParseUint(field(parent, "SigIgn"), 16, 64); err == nil && m&(1<<(sig-1)) != 0 {
			return nil
		}
		select {
		case <-done:
			return errors.New("srun ended before lens ignored the signal")
		case <-ctx.Done():
			return fmt.Errorf("lens (pid %d) does not ignore signal %d: %w", parent, sig, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
