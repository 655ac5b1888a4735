package e2e_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envScript dumps the batch step's and each srun task's environment and
// runs nothing written in Go (a job's GOMEMLIMIT=8G would stop a Go
// program). Usage: sbatch SCRIPT OUT.
const envScript = `#!/bin/bash
#SBATCH --ntasks=2
set -eu
env -0 >"$1/env.batch"
srun bash -c 'env -0 >"$1/env.task.$SLURM_PROCID"' bash "$1"
`

// TestTaskPrologHostile configures the documented TaskProlog (the wrapper
// examples/lens-taskprolog.sh around lens, docs/taskprolog.md#slurm-conf)
// in the real Slurm and runs a job with two srun tasks in each hostile
// setting of docs/taskprolog.md#bounds; every time the job must complete
// and its batch step and both tasks must carry the TaskProlog's exports:
//
//   - the policy file is a FIFO (nobody writes it): refused, the carrier and
//     the run id only (on 85caa10 the task hung until killed);
//   - syslog is a datagram socket whose daemon reads nothing, its queue
//     full, and every task has a report to send (on 85caa10, with /dev/log,
//     every task past the queue blocked forever): each report still
//     reaches the log file;
//   - the job's GOMEMLIMIT=8G (on 85caa10: TaskProlog failed status=2,
//     no task ran): the tasks run with GOMEMLIMIT=8G and the policy's
//     exports.
func TestTaskPrologHostile(t *testing.T) {
	elapsed(t)
	gate(t)
	lensBin := lensBinary(t)
	c := needCluster(t, 1)
	dir := outDir(t)
	policy := filepath.Join(dir, "taskprolog.conf")
	logFile := filepath.Join(dir, "taskprolog.log")
	wrapper := installTaskPrologWrapper(t, dir, lensBin, policy)
	script := filepath.Join(dir, "env.sbatch")
	writeFile(t, script, envScript, 0o644)
	sock := stuckSyslogSocket(t)
	service := uniqueName("hostile")
	goodPolicy := "ranks = slurm\nservice_name = " + service + "\nsyslog = off\nlog = " + logFile + "\n"

	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	setTaskProlog(ctx, t, c, wrapper)

	// run submits envScript and returns the job id and the three
	// environments (batch step, task 0, task 1), requiring every task to
	// have run with the TaskProlog's carrier and run id.
	run := func(t *testing.T, extra ...string) (string, []map[string]string) {
		t.Helper()
		out := subDir(t, dir, strings.ReplaceAll(t.Name(), "/", "_"))
		jobID, err := c.Sbatch(ctx, lensEnv(c.Env(), extra...), "--job-name="+uniqueName("tp-hostile"), "-o", filepath.Join(out, "job-%j.out"), script, out)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.WaitGone(ctx, jobID); err != nil {
			t.Fatal(err)
		}
		jobs, err := c.ShowJob(ctx, jobID)
		if err != nil || len(jobs) != 1 || jobs[0]["JobState"] != "COMPLETED" || jobs[0]["ExitCode"] != "0:0" {
			data, _ := os.ReadFile(filepath.Join(out, "job-"+jobID+".out"))
			t.Fatalf("job %s: %v %v; want COMPLETED 0:0\n%s", jobID, err, jobs, data)
		}
		var envs []map[string]string
		for _, name := range []string{"env.batch", "env.task.0", "env.task.1"} {
			env := readEnv0(t, filepath.Join(out, name))
			if env["NEMO_LENS_RUN_ID"] != jobID || !strings.Contains(env["OTEL_RESOURCE_ATTRIBUTES"], "slurm.job.id="+jobID) {
				t.Errorf("%s: NEMO_LENS_RUN_ID=%q carrier %q; want the TaskProlog's (job %s)", name, env["NEMO_LENS_RUN_ID"], env["OTEL_RESOURCE_ATTRIBUTES"], jobID)
			}
			envs = append(envs, env)
		}
		return jobID, envs
	}

	t.Run("FIFO policy", func(t *testing.T) {
		if err := syscall.Mkfifo(policy, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(policy)
		_, envs := run(t)
		for _, env := range envs {
			if _, ok := env["OTEL_SERVICE_NAME"]; ok {
				t.Errorf("OTEL_SERVICE_NAME=%q, want none (the FIFO is no policy)", env["OTEL_SERVICE_NAME"])
			}
		}
	})
	t.Run("stuck syslog", func(t *testing.T) {
		writeFile(t, policy, strings.Replace(goodPolicy, "syslog = off", "syslog = "+sock, 1), 0o644)
		jobID, envs := run(t, "LENS_TASKPROLOG=bogus")
		for _, env := range envs {
			if env["OTEL_SERVICE_NAME"] != service {
				t.Errorf("OTEL_SERVICE_NAME=%q, want the policy's %q", env["OTEL_SERVICE_NAME"], service)
			}
		}
		data, _ := os.ReadFile(logFile)
		if n := strings.Count(string(data), "job "+jobID+" "); n != 3 {
			t.Errorf("log file: %d reports of job %s, want 3 (batch step, 2 tasks):\n%s", n, jobID, data)
		}
		if !stillStuck(sock) {
			t.Errorf("the syslog socket's queue is no longer full: the test did not test a stuck daemon")
		}
	})
	t.Run("GOMEMLIMIT", func(t *testing.T) {
		writeFile(t, policy, goodPolicy, 0o644)
		for _, value := range []string{"8G", "8gib", "-1"} {
			_, envs := run(t, "GOMEMLIMIT="+value)
			for i, env := range envs {
				ranks := strings.Contains(env["OTEL_RESOURCE_ATTRIBUTES"], "nv.dl.rank=")
				if env["GOMEMLIMIT"] != value || env["OTEL_SERVICE_NAME"] != service || ranks != (i > 0) {
					t.Errorf("GOMEMLIMIT=%s, env %d: GOMEMLIMIT=%q OTEL_SERVICE_NAME=%q ranks %v; want the job's value, the policy's exports, ranks in tasks only",
						value, i, env["GOMEMLIMIT"], env["OTEL_SERVICE_NAME"], ranks)
				}
			}
		}
	})
}

// stuckSyslogSocket returns a datagram socket like /dev/log whose daemon
// reads nothing, its queue filled, so that a blocking write to it waits
// forever.
func stuckSyslogSocket(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lens-syslog") // sun_path holds 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "log")
	srv, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if n := fillSocket(t, path); n == 0 {
		t.Fatal("the socket's queue took no datagram")
	}
	return path
}

// fillSocket sends datagrams to path until its queue is full and returns
// how many it took.
func fillSocket(t *testing.T, path string) int {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		err := syscall.Sendmsg(fd, []byte("<12>filler: "+strconv.Itoa(n)), nil, nil, syscall.MSG_DONTWAIT)
		if errors.Is(err, syscall.EAGAIN) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// stillStuck reports whether path's queue is still full.
func stillStuck(path string) bool {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		return false
	}
	return errors.Is(syscall.Sendmsg(fd, []byte("x"), nil, nil, syscall.MSG_DONTWAIT), syscall.EAGAIN)
}
