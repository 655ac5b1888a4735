package e2e_test

// Issue 25, Slurm's batch signal, against the real Slurm: `scancel --batch
// --signal=USR1` (what `sbatch --signal=B:USR1@T` sends at its time) signals
// the batch script's process alone (slurmstepd req.c, KILL_JOB_BATCH:
// kill(pid), not killpg). Each of the two usual script shapes runs bare and
// with lens exec, and the command must count each signal once both ways:
//
//   - `exec lens exec -- CMD` as the script's last line: lens is the
//     script's process and leads its group (relay, docs/exec.md#signals);
//   - `trap 'kill -USR1 $PID' USR1; lens exec -- CMD & PID=$!; wait`: lens is
//     in the script's group without leading it (aside).
//
//	cd e2e && CI=true go test -count=1 -run TestSlurmBatchSignal -v ./...

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/slurm"
)

// batchSignalRounds is how many batch signals each run sends.
const batchSignalRounds = 3

// The two shapes of a batch script that passes Slurm's batch signal on;
// WRAP is empty or "LENS exec --", OBS the observer.
var batchScripts = map[string]string{
	"exec": `#!/bin/sh
exec $WRAP "$OBS" signals
`,
	"trap": `#!/bin/bash
trap 'kill -USR1 "$PID"' USR1
$WRAP "$OBS" signals &
PID=$!
# wait returns early whenever the trap runs; wait again until the command
# has ended.
while :; do
	wait "$PID"
	st=$?
	kill -0 "$PID" 2>/dev/null || break
done
exit "$st"
`,
}

func TestSlurmBatchSignal(t *testing.T) {
	elapsed(t)
	gate(t)
	obs := observerBinary(t)
	lens := lensBinary(t)
	c := needCluster(t, 1)
	dir := outDir(t)
	env := lensEnv(c.Env())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	want := map[string]int{"HUP": 0, "INT": 0, "QUIT": 0, "USR1": batchSignalRounds, "USR2": 0, "TERM": 0,
		"WINCH": 0, "ALRM": 0, "RT": 0, "RTMAX": 0}
	for _, shape := range []string{"exec", "trap"} {
		t.Run(shape, func(t *testing.T) {
			t.Parallel()
			var got [2]observation
			var errs [2]error
			var wg sync.WaitGroup
			for i, wrap := range []string{"", lens + " exec --"} {
				wg.Go(func() {
					got[i], errs[i] = runBatchSignal(ctx, c, env, dir, shape, obs, wrap)
				})
			}
			wg.Wait()
			if err := errors.Join(errs[:]...); err != nil {
				t.Fatal(err)
			}
			for i, label := range []string{"bare", "lens exec"} {
				o := got[i]
				if !maps.Equal(o.counts, want) {
					t.Errorf("%s (job %s): counts %v, want %v\noutput:\n%s", label, o.jobID, o.counts, want, o.output)
				}
				if o.slurmExit != "0:0" || o.state != "COMPLETED" {
					t.Errorf("%s (job %s): ExitCode=%s JobState=%s, want 0:0 COMPLETED\noutput:\n%s", label, o.jobID, o.slurmExit, o.state, o.output)
				}
			}
		})
	}
}

// runBatchSignal submits the shape's script (wrapped in WRAP), sends the
// batch signal batchSignalRounds times, each after the observer took the
// one before, then ends the observer, and returns what the job showed.
func runBatchSignal(ctx context.Context, c *slurm.Cluster, env []string, dir, shape, obs, wrap string) (observation, error) {
	var o observation
	name := uniqueName("lens-batchsig-" + shape)
	script := filepath.Join(dir, name+".sh")
	out := filepath.Join(dir, name+".out")
	if err := os.WriteFile(script, []byte(batchScripts[shape]), 0o755); err != nil {
		return o, err
	}
	jobEnv := append(env[:len(env):len(env)], "OBS="+obs, "WRAP="+wrap)
	id, err := c.Sbatch(ctx, jobEnv, "--job-name="+name, "--output="+out, "--export=ALL", script)
	if err != nil {
		return o, err
	}
	o.jobID = id
	label := fmt.Sprintf("%s/%q (job %s)", shape, wrap, id)
	fail := func(format string, a ...any) (observation, error) {
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		_, _ = c.Run(cctx, nil, "scancel", id)
		o.output, _ = readString(out)
		return o, fmt.Errorf("%s: %s\noutput:\n%s%s", label, fmt.Sprintf(format, a...), o.output, c.LogTail(10))
	}
	done := make(chan struct{}) // the job never ends early here; awaitReady polls the file
	pid, err := awaitReady(ctx, out, done)
	if err != nil {
		return fail("%v", err)
	}
	for range batchSignalRounds {
		base, err := awaitSigwait(ctx, pid, -1, done)
		if err != nil {
			return fail("before the batch signal: %v", err)
		}
		if _, err := c.Run(ctx, nil, "scancel", "--batch", "--signal=USR1", id); err != nil {
			return fail("%v", err)
		}
		if _, err := awaitSigwait(ctx, pid, base, done); err != nil {
			return fail("after the batch signal: %v", err)
		}
	}
	// The terminator goes to the observer itself (the cluster is local).
	end, _ := strconv.Atoi(sigRTEnd)
	if err := syscall.Kill(pid, syscall.Signal(end)); err != nil {
		return fail("kill %d: %v", pid, err)
	}
	if err := c.WaitGone(ctx, id); err != nil {
		return fail("%v", err)
	}
	jobs, err := c.ShowJob(ctx, id)
	if err != nil || len(jobs) != 1 {
		return fail("scontrol show job: %d records (%v)", len(jobs), err)
	}
	o.slurmExit, o.state = jobs[0]["ExitCode"], jobs[0]["JobState"]
	if o.output, err = readString(out); err != nil {
		return fail("%v", err)
	}
	if o.counts, err = parseCounts(o.output); err != nil {
		return fail("%v", err)
	}
	return o, nil
}
