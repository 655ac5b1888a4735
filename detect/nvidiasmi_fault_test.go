//go:build unix

package detect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"
)

// Fault injection: fake nvidia-smi programs that misbehave, run through the
// real runner. Every test is parallel; none changes the process environment.

var countArgs = []string{"--query-gpu=count", "--format=csv,noheader"}

// noTimeout is the Timeout of the runs whose subject is not the timeout: far
// longer than any run takes, so that no result depends on how fast a loaded
// machine starts and runs the fake tool. A run that hangs is ended by go
// test's own -timeout.
const noTimeout = time.Hour

// untimed returns an NvidiaSMI that runs path with noTimeout.
func untimed(path string) NvidiaSMI { return NvidiaSMI{Path: path, Timeout: noTimeout} }

// fakeSMI writes an executable /bin/sh script named nvidia-smi into a new
// temporary directory and returns its path.
//
// It writes while holding syscall.ForkLock for reading. os/exec forks while
// holding it for writing, so no process forked by a parallel test inherits
// the script's descriptor while it is open for writing; such a child would
// keep it open until its exec, and executing the script meanwhile would fail
// with ETXTBSY ("text file busy", golang/go#22315).
func fakeSMI(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nvidia-smi")
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755)
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// shQuote quotes s for /bin/sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// readPID returns the process id written to path, or 0 while there is none.
func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// procStat returns the state and process group of pid from /proc (Linux).
func procStat(pid int) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(f[2])
	return f[0][0], pgrp, err == nil
}

// processAlive reports whether pid is a process that still runs. A killed
// process whose parent is gone stays a zombie until init reaps it (which a
// container's init may never do); a zombie runs nothing and counts as gone.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	if state, _, ok := procStat(pid); ok && (state == 'Z' || state == 'X') {
		return false
	}
	return true
}

// groupAlive reports whether any process of group pgid still runs.
func groupAlive(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil { // no /proc: ask the kernel, zombies included
		return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, pgrp, ok := procStat(pid); ok && pgrp == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// eventually polls cond until it holds, and reports whether it did; a
// SIGKILL is delivered at once, but the killed process leaves the process
// table asynchronously, and a started process reaches a given line of its
// script when the scheduler lets it. It waits as long as the test may run
// (go test's -timeout), less a margin to report the failure, so no result
// depends on how loaded the machine is.
func eventually(t *testing.T, what string, cond func() bool) bool {
	t.Helper()
	deadline, bounded := t.Deadline()
	deadline = deadline.Add(-10 * time.Second)
	for !cond() {
		if bounded && time.Now().After(deadline) {
			t.Errorf("%s: still not true when the test is about to time out", what)
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// assertNoneLeft checks that the fake tool (the leader of its process group)
// and the grandchild, when given, no longer run.
func assertNoneLeft(t *testing.T, pgid, grandchild int) {
	t.Helper()
	if grandchild > 0 {
		eventually(t, "grandchild "+strconv.Itoa(grandchild)+" is gone", func() bool { return !processAlive(grandchild) })
	}
	if pgid > 0 {
		eventually(t, "process group "+strconv.Itoa(pgid)+" is gone", func() bool { return !groupAlive(pgid) })
	}
}

// outputTool is a fake nvidia-smi that prints out exactly, then exits with
// status code.
func outputTool(t *testing.T, out string, code int) string {
	t.Helper()
	data := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(data, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return fakeSMI(t, "cat "+shQuote(data)+"\nexit "+strconv.Itoa(code))
}

func TestNvidiaSMIFaultOutputs(t *testing.T) {
	t.Parallel()
	for _, c := range gpuCountOutputs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n, ok := untimed(outputTool(t, c.out, 0)).GPUCount(t.Context())
			if c.want < 0 && ok {
				t.Errorf("GPUCount of %q = %d, true; want no count", c.out, n)
			}
			if c.want >= 0 && (!ok || n != c.want) {
				t.Errorf("GPUCount of %q = %d, %v; want %d, true", c.out, n, ok, c.want)
			}
			// The same output with a non-zero exit status never counts.
			if n, ok := untimed(outputTool(t, c.out, 1)).GPUCount(t.Context()); ok {
				t.Errorf("exit status 1 with %q: GPUCount = %d, true", c.out, n)
			}
		})
	}
}

func TestNvidiaSMIFaultExitStatus(t *testing.T) {
	t.Parallel()
	for _, code := range []int{1, 2, 6, 9, 15, 255} {
		path := outputTool(t, "4\n4\n4\n4\n", code)
		if n, ok := untimed(path).GPUCount(t.Context()); ok {
			t.Errorf("exit status %d: GPUCount = %d, true", code, n)
		}
		_, _, err := untimed(path).runCounted(t.Context(), countArgs...)
		if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != code {
			t.Errorf("exit status %d: run error %v", code, err)
		}
	}
	// Killed by a signal of its own.
	if n, ok := untimed(fakeSMI(t, "echo 1; kill -9 $$")).GPUCount(t.Context()); ok {
		t.Errorf("killed tool: GPUCount = %d, true", n)
	}
}

func TestNvidiaSMIFaultFlood(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// 400 MB of "1\n" lines, written as fast as the pipe takes them: the
	// old runner read all of it and counted 200000000 GPUs.
	path := fakeSMI(t, "echo $$ > "+shQuote(pidFile)+"\nyes 1 | head -c 400000000")
	smi := untimed(path)
	start := time.Now()
	out, read, err := smi.runCounted(t.Context(), countArgs...)
	elapsed := time.Since(start)
	if !errors.Is(err, errOutputTooLarge) {
		t.Fatalf("run error %v; want the output cap (not the timeout) to end the run", err)
	}
	// Read through a limited reader: one byte past the cap and no more.
	if read != maxProbeOutput+1 {
		t.Errorf("read %d bytes from the flood; want %d (the cap plus one)", read, maxProbeOutput+1)
	}
	if out != nil {
		t.Errorf("an oversized run returned %d bytes", len(out))
	}
	t.Logf("400 MB flood: cut after reading %d bytes in %v", read, elapsed)
	assertNoneLeft(t, readPID(pidFile), 0)

	if n, ok := smi.GPUCount(t.Context()); ok {
		t.Errorf("flood: GPUCount = %d, true", n)
	}
	// Query uses the same runner (and does not retry an oversized run).
	if _, err := smi.Query(t.Context()); !errors.Is(err, errOutputTooLarge) {
		t.Errorf("flood: Query error %v", err)
	}
}

func TestNvidiaSMIFaultFloodIgnoringSIGPIPE(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// A flood that survives the closing of its output: only the kill at
	// the cap ends it (the probe's own timeout is an hour away; a run that
	// is not ended hangs until go test's -timeout). It also ends when this
	// test process is gone, so that a broken kill (a mutant, a test binary
	// killed at its timeout) leaves no orphan flooding a core.
	flood := fmt.Sprintf("while kill -0 %d 2>/dev/null; do echo 1111111111111111111111111111111 2>/dev/null; done", os.Getpid())
	path := fakeSMI(t, "echo $$ > "+shQuote(pidFile)+"\ntrap '' PIPE\n"+flood)
	_, read, err := untimed(path).runCounted(t.Context(), countArgs...)
	if !errors.Is(err, errOutputTooLarge) || read != maxProbeOutput+1 {
		t.Errorf("read %d bytes, error %v; want %d bytes and the output cap", read, err, maxProbeOutput+1)
	}
	assertNoneLeft(t, readPID(pidFile), 0)
}

func TestReadCapped(t *testing.T) {
	t.Parallel()
	// At most one byte past the cap is read from an endless source, and
	// the tool is killed once.
	kills := 0
	o := readCapped(endless{}, 10, func() { kills++ })
	if !o.exceeded || o.read != 11 || o.out != nil || o.err != nil || kills != 1 {
		t.Errorf("readCapped(endless) = %+v; kills %d", o, kills)
	}
	// Exactly the cap is kept, and nothing is killed.
	kills = 0
	o = readCapped(strings.NewReader("1\n1\n"), 4, func() { kills++ })
	if o.exceeded || o.read != 4 || string(o.out) != "1\n1\n" || o.err != nil || kills != 0 {
		t.Errorf("readCapped at the cap = %+v; kills %d", o, kills)
	}
	// One byte more is too much, however the bytes arrive.
	o = readCapped(io.MultiReader(strings.NewReader("1\n1"), strings.NewReader("\n"), strings.NewReader("1")), 4, nil)
	if !o.exceeded || o.read != 5 || o.out != nil {
		t.Errorf("readCapped one byte past the cap = %+v", o)
	}
	// A read error is returned with what was read.
	boom := errors.New("boom")
	o = readCapped(io.MultiReader(strings.NewReader("1\n"), iotest.ErrReader(boom)), 4, nil)
	if !errors.Is(o.err, boom) || o.exceeded || o.read != 2 {
		t.Errorf("readCapped with a read error = %+v", o)
	}
}

// endless reads as an output that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '1'
	}
	return len(p), nil
}

func TestNvidiaSMIFaultOutputAtCap(t *testing.T) {
	t.Parallel()
	// Exactly the cap is accepted; one byte more is not. The tool writes
	// the output and exits at once, long before the run has read it: the
	// outcome depends on the bytes written, not on who runs first.
	atCap := strings.Repeat("1\n", maxProbeOutput/2)
	n, ok := untimed(outputTool(t, atCap, 0)).GPUCount(t.Context())
	if !ok || n != maxProbeOutput/2 {
		t.Errorf("output of exactly %d bytes: GPUCount = %d, %v", len(atCap), n, ok)
	}
	_, read, err := untimed(outputTool(t, atCap+" ", 0)).runCounted(t.Context(), countArgs...)
	if !errors.Is(err, errOutputTooLarge) || read != maxProbeOutput+1 {
		t.Errorf("output of %d bytes: read %d, error %v", len(atCap)+1, read, err)
	}
}

func TestNvidiaSMIFaultHang(t *testing.T) {
	t.Parallel()
	smi := NvidiaSMI{Path: fakeSMI(t, "exec sleep 86400"), Timeout: 50 * time.Millisecond}
	if _, _, err := smi.runCounted(t.Context(), countArgs...); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hanging tool: run error %v; want the timeout", err)
	}
	if n, ok := smi.GPUCount(t.Context()); ok {
		t.Errorf("hanging tool: GPUCount = %d, true", n)
	}
	// A hanging first query is not retried as an old driver would be.
	if _, err := smi.Query(t.Context()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hanging tool: Query error %v", err)
	}
}

// grandchildTool is a fake nvidia-smi wrapper that writes its own pid and
// starts a grandchild (background, in the background) whose pid it writes
// too; then is the rest of the script. The grandchildren sleep a day, far
// longer than any test may run, so one that was not killed is seen running
// (and a run that waits for one hangs until go test's -timeout); the
// cleanup kills one that is left.
func grandchildTool(t *testing.T, background, then string) (path, pidFile, gpidFile string) {
	dir := t.TempDir()
	pidFile, gpidFile = filepath.Join(dir, "pid"), filepath.Join(dir, "gpid")
	path = fakeSMI(t, "echo $$ > "+shQuote(pidFile)+"\n"+background+" &\necho $! > "+shQuote(gpidFile)+"\n"+then)
	t.Cleanup(func() {
		if gpid := readPID(gpidFile); gpid > 0 && processAlive(gpid) {
			_ = syscall.Kill(gpid, syscall.SIGKILL)
		}
	})
	return path, pidFile, gpidFile
}

func TestNvidiaSMIFaultGrandchild(t *testing.T) {
	t.Parallel()
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		path, pidFile, gpidFile := grandchildTool(t, "sleep 86400", "echo 1\nsleep 86400")
		// The timeout must fire after the grandchild started; double it
		// until the wrapper got that far (at once, but for a loaded
		// machine).
		for timeout := 100 * time.Millisecond; ; timeout *= 2 {
			_ = os.Remove(gpidFile)
			n, ok := NvidiaSMI{Path: path, Timeout: timeout}.GPUCount(t.Context())
			if ok {
				t.Fatalf("GPUCount = %d, true after the timeout", n)
			}
			if gpid := readPID(gpidFile); gpid > 0 {
				assertNoneLeft(t, readPID(pidFile), gpid)
				return
			}
			if deadline, ok := t.Deadline(); ok && time.Now().Add(2*timeout+10*time.Second).After(deadline) {
				t.Fatal("the wrapper never started its grandchild")
			}
		}
	})
	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		path, pidFile, gpidFile := grandchildTool(t, "sleep 86400", "echo 1\nsleep 86400")
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() {
			// Cancel once the grandchild runs; the probe's own timeout
			// is an hour away.
			defer cancel()
			eventually(t, "the grandchild started", func() bool { return readPID(gpidFile) != 0 })
		}()
		_, _, err := untimed(path).runCounted(ctx, countArgs...)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("run error %v; want the cancellation", err)
		}
		gpid := readPID(gpidFile)
		if gpid == 0 {
			t.Fatal("no grandchild started")
		}
		assertNoneLeft(t, readPID(pidFile), gpid)
	})
	t.Run("exit 0 leaving a grandchild", func(t *testing.T) {
		t.Parallel()
		// The grandchild does not hold the output: the count stands, and
		// the grandchild is killed when the wrapper has exited.
		path, pidFile, gpidFile := grandchildTool(t, "sleep 86400 >/dev/null 2>&1", "echo 2\necho 2")
		n, ok := untimed(path).GPUCount(t.Context())
		if !ok || n != 2 {
			t.Errorf("GPUCount = %d, %v; want 2, true", n, ok)
		}
		assertNoneLeft(t, readPID(pidFile), readPID(gpidFile))
		if readPID(gpidFile) == 0 {
			t.Error("no grandchild started")
		}
	})
	t.Run("exit 0 with the output held open", func(t *testing.T) {
		t.Parallel()
		// The grandchild inherits the output pipe and keeps it open: the
		// reference would wait for the end of the output until its timeout
		// and give no count; the port kills the group when the wrapper has
		// exited, which ends the output, and counts what was printed. The
		// probe's timeout is an hour away: a run that waited for the
		// grandchild would hang.
		path, pidFile, gpidFile := grandchildTool(t, "sleep 86400", "echo 1")
		out, _, err := untimed(path).runCounted(t.Context(), countArgs...)
		if err != nil || string(out) != "1\n" {
			t.Errorf("run = %q, %v; want \"1\\n\", nil", out, err)
		}
		assertNoneLeft(t, readPID(pidFile), readPID(gpidFile))
		if readPID(gpidFile) == 0 {
			t.Error("no grandchild started")
		}
	})
	t.Run("exit 0 with the output held open outside the group", func(t *testing.T) {
		t.Parallel()
		// A grandchild that left the group with setsid keeps the output
		// open after the wrapper exited: the run waits for the end of the
		// output until its context is done, and then fails with it.
		setsid, err := exec.LookPath("setsid")
		if err != nil {
			t.Skip("no setsid command")
		}
		// The grandchild writes its pid once it has left the group; the
		// wrapper waits for that before it prints and exits.
		dir := t.TempDir()
		pidFile, gpidFile := filepath.Join(dir, "pid"), filepath.Join(dir, "gpid")
		path := fakeSMI(t, "echo $$ > "+shQuote(pidFile)+"\n"+
			shQuote(setsid)+" sh -c "+shQuote("echo $$ > "+shQuote(gpidFile)+"; exec sleep 86400")+" &\n"+
			"until [ -s "+shQuote(gpidFile)+" ]; do sleep 0.01; done\necho 1")
		t.Cleanup(func() {
			if gpid := readPID(gpidFile); gpid > 0 && processAlive(gpid) {
				_ = syscall.Kill(gpid, syscall.SIGKILL) // outside the group: not the run's to kill
			}
		})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() {
			// Cancel once the wrapper has exited (a zombie counts as
			// gone) and its grandchild runs.
			defer cancel()
			eventually(t, "the wrapper exited", func() bool {
				pid, gpid := readPID(pidFile), readPID(gpidFile)
				return pid > 0 && gpid > 0 && !processAlive(pid)
			})
		}()
		_, _, err = untimed(path).runCounted(ctx, countArgs...)
		gpid := readPID(gpidFile)
		if gpid > 0 {
			if _, pgrp, ok := procStat(gpid); ok && pgrp == readPID(pidFile) {
				t.Errorf("the setsid grandchild %d is still in the wrapper's group", gpid)
			}
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("run error %v; want the cancellation", err)
		}
	})
}

func TestNvidiaSMIFaultCancelKillsGroup(t *testing.T) {
	t.Parallel()
	// The cancellation alone (without the kill after the exit) kills the
	// wrapper's whole process group, grandchild included.
	path, pidFile, gpidFile := grandchildTool(t, "sleep 86400", "sleep 86400")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cmd := exec.CommandContext(ctx, path)
	setProcessGroup(cmd)
	if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid || cmd.Cancel == nil {
		t.Fatalf("setProcessGroup: SysProcAttr %+v, Cancel set %v", cmd.SysProcAttr, cmd.Cancel != nil)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the grandchild started", func() bool { return readPID(gpidFile) != 0 })
	gpid := readPID(gpidFile)
	if gpid == 0 {
		cancel()
		_ = cmd.Wait()
		t.Fatal("no grandchild started")
	}
	if _, pgrp, ok := procStat(gpid); ok && pgrp != cmd.Process.Pid {
		t.Errorf("the grandchild is in process group %d, not the tool's %d", pgrp, cmd.Process.Pid)
	}
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Error("the cancelled wrapper exited with status 0")
	}
	assertNoneLeft(t, readPID(pidFile), gpid)
}

func TestNvidiaSMIFaultQueryLines(t *testing.T) {
	t.Parallel()
	// Query splits lines as GPUCount does: a lone CR ends a row.
	row := "%d, NVIDIA H200, GPU-%d, 1, 00000000:0%d:00.0, 9.0, 143771, 570.1"
	var out string
	for i := range 2 {
		out += strings.ReplaceAll(row, "%d", strconv.Itoa(i)) + "\r"
	}
	nvml, err := untimed(outputTool(t, out, 0)).Query(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		d, err := nvml.DeviceByIndex(i)
		if err != nil {
			t.Fatalf("device %d: %v", i, err)
		}
		if u, _ := d.UUID(); u != "GPU-"+strconv.Itoa(i) {
			t.Errorf("device %d: uuid %q", i, u)
		}
	}
	if _, err := untimed(outputTool(t, strings.ReplaceAll(out, "H200", "H\xff"), 0)).Query(t.Context()); err == nil {
		t.Error("Query accepted output that is not UTF-8")
	}
}
