//go:build unix

package detect

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Fault injection: fake nvidia-smi programs that misbehave, run through the
// real runner. Every test is parallel; none changes the process environment.

var countArgs = []string{"--query-gpu=count", "--format=csv,noheader"}

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

// eventually polls cond until it holds; a SIGKILL is delivered at once, but
// the killed process leaves the process table asynchronously. The deadline
// only keeps a broken kill from hanging the test.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Errorf("%s: still not true after 20 s", what)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
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
			n, ok := NvidiaSMI{Path: outputTool(t, c.out, 0)}.GPUCount(t.Context())
			if c.want < 0 && ok {
				t.Errorf("GPUCount of %q = %d, true; want no count", c.out, n)
			}
			if c.want >= 0 && (!ok || n != c.want) {
				t.Errorf("GPUCount of %q = %d, %v; want %d, true", c.out, n, ok, c.want)
			}
			// The same output with a non-zero exit status never counts.
			if n, ok := (NvidiaSMI{Path: outputTool(t, c.out, 1)}).GPUCount(t.Context()); ok {
				t.Errorf("exit status 1 with %q: GPUCount = %d, true", c.out, n)
			}
		})
	}
}

func TestNvidiaSMIFaultExitStatus(t *testing.T) {
	t.Parallel()
	for _, code := range []int{1, 2, 6, 9, 15, 255} {
		path := outputTool(t, "4\n4\n4\n4\n", code)
		if n, ok := (NvidiaSMI{Path: path}).GPUCount(t.Context()); ok {
			t.Errorf("exit status %d: GPUCount = %d, true", code, n)
		}
		_, _, err := NvidiaSMI{Path: path}.runCounted(t.Context(), countArgs...)
		if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != code {
			t.Errorf("exit status %d: run error %v", code, err)
		}
	}
	// Killed by a signal of its own.
	if n, ok := (NvidiaSMI{Path: fakeSMI(t, "echo 1; kill -9 $$")}).GPUCount(t.Context()); ok {
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
	smi := NvidiaSMI{Path: path, Timeout: 2 * time.Minute}
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
	// the cap ends it (the probe's own timeout is an hour away).
	path := fakeSMI(t, "echo $$ > "+shQuote(pidFile)+"\ntrap '' PIPE\nwhile :; do echo 1111111111111111111111111111111 2>/dev/null; done")
	type result struct {
		read int64
		err  error
	}
	done := make(chan result, 1)
	go func() {
		_, read, err := NvidiaSMI{Path: path, Timeout: time.Hour}.runCounted(t.Context(), countArgs...)
		done <- result{read, err}
	}()
	select {
	case r := <-done:
		if !errors.Is(r.err, errOutputTooLarge) || r.read != maxProbeOutput+1 {
			t.Errorf("read %d bytes, error %v; want %d bytes and the output cap", r.read, r.err, maxProbeOutput+1)
		}
	case <-time.After(time.Minute):
		t.Fatal("the flood was not killed at the output cap")
	}
	assertNoneLeft(t, readPID(pidFile), 0)
}

func TestBoundedOutput(t *testing.T) {
	t.Parallel()
	// The Write path (a copy that does not call ReadFrom) has the same cap.
	kills := 0
	b := &boundedOutput{limit: 10, onExceed: func() { kills++ }}
	if n, err := b.Write([]byte("1\n1\n1\n")); n != 6 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if n, err := b.Write([]byte("1\n1\n1\n")); n != 4 || !errors.Is(err, errOutputTooLarge) {
		t.Errorf("Write past the cap = %d, %v", n, err)
	}
	if n, err := b.Write([]byte("1")); n != 0 || !errors.Is(err, errOutputTooLarge) {
		t.Errorf("Write after the cap = %d, %v", n, err)
	}
	if n, err := b.ReadFrom(strings.NewReader("1")); n != 0 || !errors.Is(err, errOutputTooLarge) {
		t.Errorf("ReadFrom after the cap = %d, %v", n, err)
	}
	if !b.exceeded || kills != 1 || b.read != 12 || b.buf.Len() != 0 {
		t.Errorf("exceeded %v, kills %d, read %d, kept %d", b.exceeded, kills, b.read, b.buf.Len())
	}
	// ReadFrom reads at most one byte past the cap from an endless source.
	kills = 0
	b = &boundedOutput{limit: 10, onExceed: func() { kills++ }}
	if n, err := b.ReadFrom(endless{}); n != 11 || !errors.Is(err, errOutputTooLarge) || kills != 1 || b.read != 11 {
		t.Errorf("ReadFrom(endless) = %d, %v; kills %d, read %d", n, err, kills, b.read)
	}
	// Exactly the cap is kept.
	b = &boundedOutput{limit: 4}
	if n, err := b.ReadFrom(strings.NewReader("1\n1\n")); n != 4 || err != nil || b.exceeded || b.buf.String() != "1\n1\n" {
		t.Errorf("ReadFrom at the cap = %d, %v; exceeded %v, kept %q", n, err, b.exceeded, b.buf.String())
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
	// Exactly the cap is accepted; one byte more is not.
	atCap := strings.Repeat("1\n", maxProbeOutput/2)
	n, ok := NvidiaSMI{Path: outputTool(t, atCap, 0)}.GPUCount(t.Context())
	if !ok || n != maxProbeOutput/2 {
		t.Errorf("output of exactly %d bytes: GPUCount = %d, %v", len(atCap), n, ok)
	}
	_, read, err := NvidiaSMI{Path: outputTool(t, atCap+" ", 0)}.runCounted(t.Context(), countArgs...)
	if !errors.Is(err, errOutputTooLarge) || read != maxProbeOutput+1 {
		t.Errorf("output of %d bytes: read %d, error %v", len(atCap)+1, read, err)
	}
}

func TestNvidiaSMIFaultHang(t *testing.T) {
	t.Parallel()
	smi := NvidiaSMI{Path: fakeSMI(t, "exec sleep 300"), Timeout: 50 * time.Millisecond}
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
// too; then is the rest of the script. The grandchildren sleep far longer
// than assertNoneLeft waits, so one that was not killed is seen running.
func grandchildTool(t *testing.T, background, then string) (path, pidFile, gpidFile string) {
	dir := t.TempDir()
	pidFile, gpidFile = filepath.Join(dir, "pid"), filepath.Join(dir, "gpid")
	path = fakeSMI(t, "echo $$ > "+shQuote(pidFile)+"\n"+background+" &\necho $! > "+shQuote(gpidFile)+"\n"+then)
	return path, pidFile, gpidFile
}

func TestNvidiaSMIFaultGrandchild(t *testing.T) {
	t.Parallel()
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		path, pidFile, gpidFile := grandchildTool(t, "sleep 300", "echo 1\nsleep 300")
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
			if timeout > 30*time.Second {
				t.Fatal("the wrapper never started its grandchild")
			}
		}
	})
	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		path, pidFile, gpidFile := grandchildTool(t, "sleep 300", "echo 1\nsleep 300")
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() {
			// Cancel once the grandchild runs; the probe's own timeout
			// (one minute) is far off.
			defer cancel()
			for end := time.Now().Add(time.Minute); readPID(gpidFile) == 0 && time.Now().Before(end); {
				time.Sleep(5 * time.Millisecond)
			}
		}()
		_, _, err := NvidiaSMI{Path: path, Timeout: time.Minute}.runCounted(ctx, countArgs...)
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
		path, pidFile, gpidFile := grandchildTool(t, "sleep 300 >/dev/null 2>&1", "echo 2\necho 2")
		n, ok := NvidiaSMI{Path: path, Timeout: time.Minute}.GPUCount(t.Context())
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
		// and give no count; the port waits 250 ms after the exit.
		path, pidFile, gpidFile := grandchildTool(t, "sleep 300", "echo 1")
		_, _, err := NvidiaSMI{Path: path, Timeout: time.Minute}.runCounted(t.Context(), countArgs...)
		if !errors.Is(err, exec.ErrWaitDelay) {
			t.Errorf("run error %v; want exec.ErrWaitDelay", err)
		}
		assertNoneLeft(t, readPID(pidFile), readPID(gpidFile))
		if readPID(gpidFile) == 0 {
			t.Error("no grandchild started")
		}
	})
}

func TestNvidiaSMIFaultCancelKillsGroup(t *testing.T) {
	t.Parallel()
	// The cancellation alone (without the kill after the exit) kills the
	// wrapper's whole process group, grandchild included.
	path, pidFile, gpidFile := grandchildTool(t, "sleep 300", "sleep 300")
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
	for end := time.Now().Add(time.Minute); readPID(gpidFile) == 0 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
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
	nvml, err := NvidiaSMI{Path: outputTool(t, out, 0)}.Query(t.Context())
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
	if _, err := (NvidiaSMI{Path: outputTool(t, strings.ReplaceAll(out, "H200", "H\xff"), 0)}).Query(t.Context()); err == nil {
		t.Error("Query accepted output that is not UTF-8")
	}
}
