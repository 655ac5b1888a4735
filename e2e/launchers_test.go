package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/nemolens/lens-go/e2e/internal/launch"
)

// Helpers of the real-launcher tests (mpirun_test.go, torchrun_test.go).

// needMPIRun returns Open MPI's mpirun, or skips (fails in CI) when there is
// none: scripts/launchers-up.sh installs Debian's openmpi-bin.
func needMPIRun(t *testing.T) string {
	t.Helper()
	return needLauncher(t, launch.MPIRun)
}

// needHydra skips (fails in CI) without MPICH's mpiexec.hydra:
// scripts/launchers-up.sh installs Debian's mpich.
func needHydra(t *testing.T) string {
	t.Helper()
	return needLauncher(t, launch.Hydra)
}

// needLauncher returns the launcher find finds, or skips (fails in CI)
// saying why there is none.
func needLauncher(t *testing.T, find func() (string, error)) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		cannotRun(t, "the real launchers need Linux, have %s", runtime.GOOS)
	}
	p, err := find()
	if err != nil {
		cannotRun(t, "%v", err)
	}
	return p
}

// needTorch skips (fails in CI) when /usr/bin/python3 has no torch:
// scripts/launchers-up.sh installs Debian's python3-torch.
func needTorch(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		cannotRun(t, "the real launchers need Linux, have %s", runtime.GOOS)
	}
	v, err := launch.Torch()
	if err != nil {
		cannotRun(t, "%v", err)
	}
	t.Logf("torch %s", v)
}

// pyWorker writes the Python worker into a temporary directory.
func pyWorker(t *testing.T) string {
	t.Helper()
	p, err := launch.WritePyWorker(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// started is a launcher process the test signals.
type started struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

// start starts name args with env, its output kept, in its own process
// group when group is true (as a shell's job is).
func start(t *testing.T, env []string, group bool, name string, args ...string) *started {
	t.Helper()
	s := &started{cmd: exec.Command(name, args...), out: new(syncBuffer), done: make(chan struct{})}
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: group}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			if group {
				_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			}
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

// wait waits for the process to end (at most until ctx ends, then it is
// killed) and returns its exit status, 128+N when killed by signal N.
func (s *started) wait(ctx context.Context, t *testing.T) int {
	t.Helper()
	select {
	case <-s.done:
	case <-ctx.Done():
		_ = s.cmd.Process.Kill()
		<-s.done
		t.Fatalf("%s did not end: %v\n%s", s.cmd.Path, ctx.Err(), s.out.String())
	}
	var ee *exec.ExitError
	switch {
	case s.err == nil:
		return 0
	case errors.As(s.err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	default:
		t.Fatalf("%s: %v", s.cmd.Path, s.err)
		return -1
	}
}

// runStatus runs name args with env and returns its exit status and output.
func runStatus(ctx context.Context, t *testing.T, env []string, name string, args ...string) (int, string) {
	t.Helper()
	s := start(t, env, false, name, args...)
	return s.wait(ctx, t), s.out.String()
}

// pyRecords reads the Python workers' records and requires want of them.
func pyRecords(t *testing.T, dir, label string, want int) []launch.PyRecord {
	t.Helper()
	recs, err := launch.ReadPy(dir, label)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != want {
		t.Fatalf("%s: %d record(s) %q, want %d:\n%s", dir, len(recs), label, want, launch.Join(recs))
	}
	return recs
}

// signalCounts returns each record's count of sig, ordered by the rank in
// variable rankVar.
func signalCounts(recs []launch.PyRecord, rankVar, sig string) map[string]int {
	m := map[string]int{}
	for _, r := range recs {
		m[r.Env[rankVar]] = r.Signals[sig]
	}
	return m
}

// exits returns each record's exit status by the rank in variable rankVar.
// exits returns each record's exit status by the rank in variable rankVar,
// -1 for a worker that did not exit by itself.
func exits(recs []launch.PyRecord, rankVar string) map[string]int {
	m := map[string]int{}
	for _, r := range recs {
		m[r.Env[rankVar]] = exitOf(r)
	}
	return m
}

// exitOf is the record's exit status, -1 when it did not exit by itself.
func exitOf(r launch.PyRecord) int {
	if r.Exit == nil {
		return -1
	}
	return *r.Exit
}

// distinct reports whether no value repeats.
func distinct(vals []string) bool {
	s := slices.Clone(vals)
	slices.Sort(s)
	return len(slices.Compact(s)) == len(vals)
}

func itoa(i int) string { return strconv.Itoa(i) }

// syncBuffer is a bytes.Buffer safe for the writes of a process's stdout
// and stderr copiers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
