//go:build linux

package main

// The fate of every signal 1-64 sent to lens exec (docs/exec.md#signal-fates),
// each run bare and under lens exec in each signal mode, with a command that
// handles every signal it can and reports each delivery
// (testdata/observer.c catchall).

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fate is what docs/exec.md#signal-fates says becomes of a signal sent to
// lens exec.
type fate int

const (
	// fatePassed: the command gets the signal as it would bare (passed on
	// once, or in direct mode sent to it by the sender itself), and lens
	// runs on.
	fatePassed fate = iota
	// fateDropped: the command does not get it, and lens runs on.
	fateDropped
	// fateEndsLens: lens ends with that signal, the command with SIGKILL.
	fateEndsLens
)

// docFate is the fate docs/exec.md#signal-fates gives sig in mode, sent
// to lens's pid (relay, aside) or to the process group lens and the
// command share (direct: slurmstepd's signal of every process of a step).
func docFate(sig syscall.Signal, mode string) fate {
	if mode == "direct" {
		return fatePassed // the sender reaches the command; lens runs on
	}
	switch sig {
	case syscall.SIGPIPE, syscall.SIGCHLD, syscall.SIGTTOU, syscall.SIGURG, syscall.SIGPROF, 33:
		return fateDropped
	case 32, 34:
		return fateEndsLens
	}
	return fatePassed
}

// observerCatches reports whether the observer installs a handler for
// sig: glibc refuses 32 and 33 (its own), the kernel SIGKILL and SIGSTOP.
// The others it reports at once and counts.
func observerCatches(sig syscall.Signal) bool {
	return sig != syscall.SIGKILL && sig != syscall.SIGSTOP && sig != 32 && sig != 33
}

// fateOutcome is what one run shows: the command's "seen" line ("" when
// it printed none: it died first), the status as a shell reports it, and
// the scenario's standard error.
type fateOutcome struct {
	seen   string
	status int
	stderr string
}

// runFate sends sig once to the observer (bare) or to lens exec --signals
// mode wrapping it, as docFate's sender aims, waits until the signal has
// had its effect, then ends the observer through its standard input. A
// wrapped run in aside mode is started by sh, so that lens does not lead
// its process group; sh says lens's status.
func runFate(t *testing.T, sig syscall.Signal, mode string, wrapped bool) fateOutcome {
	t.Helper()
	argv := []string{observer(t), "catchall"}
	if wrapped {
		argv = append([]string{lensBin, "exec", "--signals", mode, "--"}, argv...)
		if mode == "aside" {
			argv = append([]string{"sh", "-c", `"$@"; echo "status $?"`, "sh"}, argv...)
		}
	}
	in, end, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer end.Close()
	r := scenario{sys: &syscall.SysProcAttr{Setpgid: true}, stdin: in}.startArgv(t, argv)
	in.Close()
	r.ready()
	lens := 0
	if wrapped {
		lens = r.pid()
		if mode == "aside" {
			lens = childOf(t, r.pid())
		}
	}
	if wrapped && mode == "direct" && (sig == 32 || sig == 34) {
		// lens ignores 32 and 34 right after the command's fork, which
		// the command's ready line does not follow: wait for it.
		ignores(t, lens, 32, 34)
	}
	target := r.pid()
	switch {
	case mode == "direct":
		target = -r.pid() // lens leads the group, or the bare command does
	case wrapped:
		target = lens
	}
	send(t, target, sig)
	f := fatePassed
	if wrapped {
		f = docFate(sig, mode)
	}
	switch {
	case f == fatePassed && observerCatches(sig):
		r.nextWhileRunning(fmt.Sprintf("sig %02d", sig), lens)
	case f == fateDropped:
		// Nothing to wait for in the command: wait until lens has taken
		// the signal, and see that it runs on.
		consumed(t, lens, sig)
		if st := procState(lens); st == "T" {
			t.Errorf("%v stopped lens", sig)
			_ = syscall.Kill(lens, syscall.SIGCONT)
		}
	}
	// The signal ends the command (it cannot handle 32 and 33) or lens
	// (and the command with it): the run ends by itself. Else the observer
	// ends when it reads a line.
	if ends := f == fateEndsLens || f == fatePassed && !observerCatches(sig); !ends {
		_, _ = end.Write([]byte("\n"))
	}
	var o fateOutcome
	for l := range r.lines {
		if strings.HasPrefix(l, "seen") {
			o.seen = l
		}
		if v, ok := strings.CutPrefix(l, "status "); ok {
			o.status, _ = strconv.Atoi(v)
		}
	}
	if st := r.status(); !wrapped || mode != "aside" {
		o.status = st
	}
	o.stderr = r.stderr.String()
	return o
}

// nextWhileRunning returns the next line with prefix (see next), failing at once when lens (pid; 0: none)
// stops: the observer handles every stop signal, so lens has no stop of
// the command to follow, and a stopped lens would pass nothing on.
func (r *running) nextWhileRunning(prefix string, lens int) string {
	r.t.Helper()
	timeout := time.After(guard)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case l, ok := <-r.lines:
			if !ok {
				r.t.Fatalf("output ended before a %q line; stderr %q", prefix, r.stderr)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-tick.C:
			if lens != 0 && procState(lens) == "T" {
				_ = syscall.Kill(lens, syscall.SIGCONT)
				r.t.Fatalf("lens stopped before a %q line; stderr %q", prefix, r.stderr)
			}
		case <-timeout:
			r.t.Fatalf("no %q line within %v; stderr %q", prefix, guard, r.stderr)
		}
	}
}

// ignores waits until pid ignores sigs (SigIgn of /proc/PID/status),
// failing at the guard.
func ignores(t *testing.T, pid int, sigs ...int) {
	t.Helper()
	want := sigset(sigs...)
	for deadline := time.Now().Add(guard); ; time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			t.Fatal(err)
		}
		if sigLine(t, string(b), "SigIgn")&want == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d does not ignore %v", pid, sigs)
		}
	}
}

// consumed waits until sig is no longer pending for pid (the process's
// shared pending set and each thread's): the Go runtime has taken it.
func consumed(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	bit := uint64(1) << (sig - 1)
	for deadline := time.Now().Add(guard); ; time.Sleep(time.Millisecond) {
		pending := uint64(0)
		files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
		for _, f := range append(files, fmt.Sprintf("/proc/%d/status", pid)) {
			b, err := os.ReadFile(f)
			if err != nil {
				continue // a thread that ended
			}
			for l := range strings.SplitSeq(string(b), "\n") {
				for _, name := range []string{"SigPnd:", "ShdPnd:"} {
					if v, ok := strings.CutPrefix(l, name); ok {
						m, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
						pending |= m
					}
				}
			}
		}
		if pending&bit == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v still pending for lens (pid %d)", sig, pid)
		}
	}
}

// TestSignalFates: each signal 1-64 but SIGKILL and SIGSTOP, sent once to
// the bare observer's pid (or group) and to lens exec's in each mode, has
// the fate docs/exec.md#signal-fates gives it: the command sees what the
// bare command sees and exits with the same status when the signal is
// passed on (in direct mode: when the group's signal reaches it), sees
// nothing while lens runs on when it is dropped, and lens ends with the
// signal (the command with it) for 32 and 34 in relay and aside mode.
// Never a crash of lens (a Go runtime dump on its stderr), never lens
// stopped.
func TestSignalFates(t *testing.T) {
	t.Parallel()
	for sig := syscall.Signal(1); sig <= 64; sig++ {
		if sig == syscall.SIGKILL || sig == syscall.SIGSTOP {
			continue
		}
		for _, mode := range []string{"relay", "aside", "direct"} {
			t.Run(fmt.Sprintf("%02d/%s", sig, mode), func(t *testing.T) {
				t.Parallel()
				bare := runFate(t, sig, mode, false)
				// The bare command's outcome, from the kernel's and glibc's
				// rules: it reports what it handles, and dies of the rest.
				want := fateOutcome{seen: fmt.Sprintf("seen %d=1", sig)}
				if !observerCatches(sig) {
					want = fateOutcome{status: 128 + int(sig)}
				}
				if bare.seen != want.seen || bare.status != want.status {
					t.Fatalf("bare: %q, status %d; want %q, status %d", bare.seen, bare.status, want.seen, want.status)
				}
				got := runFate(t, sig, mode, true)
				if strings.Contains(got.stderr, "goroutine ") || strings.Contains(got.stderr, "runtime.") {
					t.Fatalf("lens crashed: stderr %q", got.stderr)
				}
				switch f := docFate(sig, mode); f {
				case fatePassed:
					want = bare
				case fateDropped:
					want = fateOutcome{seen: "seen"}
				case fateEndsLens:
					want = fateOutcome{status: 128 + int(sig)}
				}
				if got.seen != want.seen || got.status != want.status {
					t.Errorf("lens exec --signals %s: the command %q, status %d; want %q, status %d (bare: %q, status %d); stderr %q",
						mode, got.seen, got.status, want.seen, want.status, bare.seen, bare.status, got.stderr)
				}
			})
		}
	}
}
