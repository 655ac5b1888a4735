//go:build linux

package main

// The transparency suite: each scenario runs the same command (the C
// observer, testdata/observer.c) bare and under lens exec, and compares what
// the command observes — the signals it receives and how many times, its
// state at start, its exit status as its parent sees it, whether it
// outlives its parent, whether its orphans are reaped. The expected values
// come from the bare run and from the kernel's and the shell's rules, never
// from lens. The Slurm cases run against the real Slurm in
// e2e/transparency_slurm_test.go.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// Signals of the observer: rtCounted is counted exactly (real-time signals
// are queued, never merged), rtEnd makes it print its counts and exit.
const (
	rtCounted = syscall.Signal(35)
	rtEnd     = syscall.Signal(36)
	rtMax     = syscall.Signal(64) // SIGRTMAX, counted exactly too
)

// rounds is how many times a signal scenario sends its signal.
const rounds = 5

// guard bounds a scenario that would otherwise hang on a regression (a
// lost signal, an unreaped orphan, an ignored interrupt). It is a deadline
// for failing, never a margin a passing run depends on.
const guard = 2 * time.Minute

var buildObserver = sync.OnceValues(func() (string, error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return "", fmt.Errorf("no C compiler (cc) for testdata/observer.c: %w", err)
	}
	bin := filepath.Join(testDir, "observer")
	out, err := exec.Command(cc, "-O2", "-o", bin, "testdata/observer.c").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("cc testdata/observer.c: %v\n%s", err, out)
	}
	return bin, nil
})

// observer returns the observer's path; without a C compiler the suite is
// skipped, or fails under CI.
func observer(t *testing.T) string {
	t.Helper()
	bin, err := buildObserver()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("skipping: %v", err)
	}
	return bin
}

// scenario is one run of the observer, bare or under lens exec.
type scenario struct {
	wrapped  bool
	lensArgs []string // flags of lens exec before "--"
	args     []string // the observer's arguments
	argv     []string // the whole command line instead (startArgv)
	env      map[string]string
	sys      *syscall.SysProcAttr
	stdin    *os.File
	stderr   *os.File // lens's standard error instead of a pipe the test reads
}

func (s scenario) name() string {
	if s.wrapped {
		return "lens exec"
	}
	return "bare"
}

// running is a started scenario.
type running struct {
	t        *testing.T
	cmd      *exec.Cmd
	lines    chan string
	stderr   *watchedBuffer
	observer int // the observer's pid, from its "ready" line
}

func (s scenario) start(t *testing.T) *running {
	t.Helper()
	argv := append([]string{observer(t)}, s.args...)
	if s.wrapped {
		argv = append(append(append([]string{lensBin, "exec"}, s.lensArgs...), "--"), argv...)
	}
	if s.argv != nil {
		argv = s.argv
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = cliEnv(s.env)
	cmd.SysProcAttr = s.sys
	if s.sys != nil && (s.sys.Setpgid || s.sys.Setsid) {
		// At the guard, the scenario's whole process group goes, the
		// command too.
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	}
	t.Cleanup(func() {
		if r := cmd.ProcessState; r == nil && cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	})
	if s.stdin != nil {
		cmd.Stdin = s.stdin
	}
	r := &running{t: t, cmd: cmd, lines: make(chan string, 64), stderr: newWatchedBuffer()}
	cmd.Stderr = r.stderr
	if s.stderr != nil {
		cmd.Stderr = s.stderr
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	return r
}

// watchedBuffer is lens's stderr in a scenario: written by exec's copying
// goroutine, read by the test while lens runs.
type watchedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed at the next write
}

func newWatchedBuffer() *watchedBuffer { return &watchedBuffer{changed: make(chan struct{})} }

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.changed)
	w.changed = make(chan struct{})
	return w.b.Write(p)
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitStderr waits until lens's stderr holds s: lens writes its notes from
// its own goroutine, after the command may already have seen the signal.
func (r *running) waitStderr(s string) {
	r.t.Helper()
	timeout := time.After(guard)
	for {
		r.stderr.mu.Lock()
		has, changed := strings.Contains(r.stderr.b.String(), s), r.stderr.changed
		r.stderr.mu.Unlock()
		if has {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			r.t.Fatalf("no %q on lens's stderr within %v; stderr %q", s, guard, r.stderr)
		}
	}
}

// next returns the next line of the observer's output with prefix, failing
// when the output ends or the guard expires first.
func (r *running) next(prefix string) string {
	r.t.Helper()
	return r.nextWhileRunning(prefix, 0)
}

// ready waits for the observer's "ready PID" line.
func (r *running) ready() {
	r.t.Helper()
	pid, err := strconv.Atoi(strings.TrimPrefix(r.next("ready "), "ready "))
	if err != nil {
		r.t.Fatal(err)
	}
	r.observer = pid
}

// delivered waits until the observer reports its first delivery of sig.
func (r *running) delivered(sig syscall.Signal) {
	r.t.Helper()
	if sig >= rtCounted {
		r.next(fmt.Sprintf("rt %d", sig))
		return
	}
	r.next(fmt.Sprintf("sig %02d", sig))
}

// pid is the process the scenario started: lens, or the observer.
func (r *running) pid() int { return r.cmd.Process.Pid }

// wait waits for the scenario's process and returns its wait status.
func (r *running) wait() syscall.WaitStatus {
	r.t.Helper()
	err := r.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		r.t.Fatal(err)
	}
	return r.cmd.ProcessState.Sys().(syscall.WaitStatus)
}

// status waits for the scenario's process and returns its status as a
// shell reports it: the exit code, or 128+N for signal N.
func (r *running) status() int {
	r.t.Helper()
	if ws := r.wait(); ws.Signaled() {
		return 128 + int(ws.Signal())
	} else {
		return ws.ExitStatus()
	}
}

// send sends sig to pid (negative: a process group).
func send(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("kill(%d, %v): %v", pid, sig, err)
	}
}

// TestTransparentSignals: a signal sent to the command's pid (lens's, when
// wrapped) or to its process group reaches the command exactly once, as it
// does without lens. The terminator goes to the command directly once the
// last signal has arrived, so a correct lens passes whatever the timing; a
// duplicate is caught when it arrives before the count is taken (the
// real-time signal is queued, never merged with the first delivery). Each scenario is its own process group, as a shell job
// or a torchrun worker is.
func TestTransparentSignals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		group  bool
		sig    syscall.Signal
		count  string // the counts field that must read 1
		flags  []string
		extras map[string]string
	}{
		{"pid/rt", false, rtCounted, "RT", nil, nil},
		{"pid/USR1", false, syscall.SIGUSR1, "USR1", nil, nil},
		{"pid/TERM", false, syscall.SIGTERM, "TERM", nil, nil},
		{"pid/rtmax", false, rtMax, "RTMAX", nil, nil},
		{"group/rtmax", true, rtMax, "RTMAX", nil, nil},
		{"group/rt", true, rtCounted, "RT", nil, nil},
		{"group/USR1", true, syscall.SIGUSR1, "USR1", nil, nil},
		{"group/INT", true, syscall.SIGINT, "INT", nil, nil},
		{"group/rt/direct", true, rtCounted, "RT", []string{"--signals", "direct"}, nil},
		{"group/rt/slurm-job", true, rtCounted, "RT", nil, map[string]string{"SLURM_JOB_ID": "42"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var counts [2]string
			for i, wrapped := range []bool{false, true} {
				s := scenario{wrapped: wrapped, lensArgs: tc.flags, args: []string{"signals"}, env: tc.extras,
					sys: &syscall.SysProcAttr{Setpgid: true}}
				r := s.start(t)
				r.ready()
				target := r.pid()
				if tc.group {
					target = -target
				}
				// Several rounds: a duplicate that arrives late in one round
				// is counted in a later one.
				for range rounds {
					send(t, target, tc.sig)
					r.delivered(tc.sig)
				}
				// The terminator goes to the command itself: lens does not
				// order distinct signals (nor does the kernel), so one sent
				// through lens could overtake the signal under test.
				send(t, r.observer, rtEnd)
				counts[i] = r.next("counts ")
				if st := r.status(); st != 0 {
					t.Errorf("%s: status %d, want 0; stderr %q", s.name(), st, r.stderr)
				}
				if want := fmt.Sprintf(" %s=%d ", tc.count, rounds); !strings.Contains(" "+counts[i]+" ", want) {
					t.Errorf("%s: %s, want%s", s.name(), counts[i], want)
				}
			}
			if counts[0] != counts[1] {
				t.Errorf("the command observed\n  bare:      %s\n  lens exec: %s", counts[0], counts[1])
			}
		})
	}
}

// openPTY opens a pseudo-terminal pair.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("skipping: no pseudo-terminal: %v", err)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	go func() { _, _ = io.Copy(io.Discard, m) }() // the echo
	return m, s
}

// TestTransparentTerminal: Ctrl-C typed on the command's terminal reaches
// it once, and the status is the command's.
func TestTransparentTerminal(t *testing.T) {
	t.Parallel()
	var counts [2]string
	for i, wrapped := range []bool{false, true} {
		master, slave := openPTY(t)
		// The scenario leads a new session whose controlling terminal is
		// the pty: the foreground job of a terminal.
		s := scenario{wrapped: wrapped, args: []string{"signals"}, stdin: slave,
			sys: &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}}
		r := s.start(t)
		r.ready()
		for range rounds {
			if _, err := master.Write([]byte{3}); err != nil { // ^C
				t.Fatal(err)
			}
			r.delivered(syscall.SIGINT)
		}
		send(t, r.observer, rtEnd)
		counts[i] = r.next("counts ")
		if st := r.status(); st != 0 {
			t.Errorf("%s: status %d, want 0; stderr %q", s.name(), st, r.stderr)
		}
		if want := fmt.Sprintf(" INT=%d ", rounds); !strings.Contains(counts[i], want) {
			t.Errorf("%s: %s, want%s", s.name(), counts[i], want)
		}
	}
	if counts[0] != counts[1] {
		t.Errorf("the command observed\n  bare:      %s\n  lens exec: %s", counts[0], counts[1])
	}
}

// procState is the state letter of /proc/PID/stat ("" when pid is gone).
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	state, _, _ := strings.Cut(rest, " ")
	return state
}

// waitState polls until pid is in state, failing at the guard.
func waitState(t *testing.T, pid int, state string) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for procState(pid) != state {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d stayed in state %q, want %q", pid, procState(pid), state)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestTransparentStop: SIGTSTP sent to the command's pid (lens's, wrapped)
// stops the command, and SIGCONT continues it; wrapped, lens stops and
// continues with it, so that its parent sees the job stopped.
func TestTransparentStop(t *testing.T) {
	t.Parallel()
	for _, wrapped := range []bool{false, true} {
		s := scenario{wrapped: wrapped, args: []string{"signals"}, sys: &syscall.SysProcAttr{Setpgid: true}}
		r := s.start(t)
		r.ready()
		send(t, r.pid(), syscall.SIGTSTP)
		waitState(t, r.observer, "T")
		waitState(t, r.pid(), "T")
		send(t, r.pid(), syscall.SIGCONT)
		waitState(t, r.observer, "S")
		send(t, r.pid(), rtEnd)
		r.next("counts ")
		if st := r.status(); st != 0 {
			t.Errorf("%s: status %d, want 0; stderr %q", s.name(), st, r.stderr)
		}
	}
}

// TestTransparentExitStatus: lens's parent sees the wait status it sees
// for the bare command: the exit code, or killed by the same signal (a
// shell's 128+N, Slurm's ExitCode=0:N, Popen's returncode -N).
func TestTransparentExitStatus(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"exit", "0"}, {"exit", "3"}, {"exit", "255"},
		{"raise", "15"}, {"raise", "9"}, {"raise", "11"}, {"raise", "6"}, {"raise", "10"},
		{"raise", "64"}, // SIGRTMAX: lens dies by signal 64, not exit 192
	} {
		t.Run(strings.Join(args, "="), func(t *testing.T) {
			t.Parallel()
			want := -1
			if args[0] == "exit" {
				want, _ = strconv.Atoi(args[1])
			} else {
				n, _ := strconv.Atoi(args[1])
				want = 128 + n
			}
			var got [2]syscall.WaitStatus
			for i, wrapped := range []bool{false, true} {
				s := scenario{wrapped: wrapped, args: args}
				r := s.start(t)
				got[i] = r.wait()
				st := got[i].ExitStatus()
				if got[i].Signaled() {
					st = 128 + int(got[i].Signal())
				}
				if st != want {
					t.Errorf("%s %q: status %d, want %d; stderr %q", s.name(), args, st, want, r.stderr)
				}
			}
			// A core file is the bare command's own; lens leaves none.
			core := syscall.WaitStatus(0x80)
			if got[0]&^core != got[1]&^core {
				t.Errorf("wait status bare %#x, lens exec %#x", got[0], got[1])
			}
		})
	}
}

// TestTransparentState: the command starts with the same arguments,
// directory, standard files, umask, blocked and ignored signals — SIGHUP
// and SIGINT ignored by nohup or a shell's background job stay ignored.
func TestTransparentState(t *testing.T) {
	t.Parallel()
	obs := observer(t)
	for _, tc := range []struct{ name, shell string }{
		{"plain", `exec "$@"`},
		{"nohup-and-background", `trap '' HUP INT; exec "$@"`},
		{"stdin-null-stderr-file", `exec "$@" </dev/null 2>"$TMPFILE"`},
		{"umask", `umask 077; exec "$@"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got [2]string
			for i, wrapped := range []bool{false, true} {
				argv := []string{obs, "state", "0", "a b", "", "$HOME"}
				if wrapped {
					argv = append([]string{lensBin, "exec", "--"}, argv...)
				}
				cmd := exec.Command("/bin/sh", append([]string{"-c", tc.shell, "sh"}, argv...)...)
				cmd.Env = cliEnv(map[string]string{"TMPFILE": filepath.Join(t.TempDir(), "err")})
				cmd.Dir = t.TempDir()
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("wrapped=%v: %v", wrapped, err)
				}
				// The directory differs by construction; it is compared as a name.
				got[i] = strings.ReplaceAll(string(out), cmd.Dir, "<dir>")
			}
			if got[0] != got[1] {
				t.Errorf("the command observed\n--- bare:\n%s--- lens exec:\n%s", got[0], got[1])
			}
		})
	}
}

// TestTransparentLookup: the command is found and run as execvp(3) finds
// and runs it — compared with env(1), which calls execvp: PATH with ".",
// relative and empty entries, PATH unset, a file without "#!", a directory
// or an unexecutable file before the command in PATH; 126 and 127 as env
// gives them.
func TestTransparentLookup(t *testing.T) {
	t.Parallel()
	obs := observer(t)
	root := t.TempDir()
	mk := func(path string, mode os.FileMode, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, mode); err != nil {
			t.Fatal(err)
		}
	}
	obsBytes, err := os.ReadFile(obs)
	if err != nil {
		t.Fatal(err)
	}
	mk(filepath.Join(root, "bin", "obs"), 0o755, obsBytes)
	mk(filepath.Join(root, "bin", "noshebang"), 0o755, []byte("echo \"noshebang:$0:$*\"\n"))
	mk(filepath.Join(root, "noexec", "obs"), 0o644, obsBytes)
	if err := os.MkdirAll(filepath.Join(root, "dir", "obs"), 0o755); err != nil {
		t.Fatal(err)
	}
	unset := "\x00unset"
	for _, tc := range []struct {
		name, dir, path, command string
	}{
		{"dot", "bin", ".:/usr/bin", "obs"},
		{"relative", "", "bin:/usr/bin", "obs"},
		{"empty-trailing", "bin", "/usr/bin:", "obs"},
		{"empty-leading", "bin", ":/usr/bin", "obs"},
		{"empty-middle", "bin", "/nonexistent::/usr/bin", "obs"},
		{"unset", "", unset, "printenv"},
		{"no-shebang", "", "bin", "noshebang"},
		{"no-shebang-path", "", "/usr/bin", "bin/noshebang"},
		{"directory-first", "", "dir:bin", "obs"},
		{"unexecutable-first", "", "noexec:bin", "obs"},
		{"unexecutable-only", "", "noexec", "obs"},
		{"directory-only", "", "dir", "obs"},
		{"not-found", "", "bin:/usr/bin", "lens-test-no-such-command"},
		{"slash-missing", "", "bin", "./missing/obs"},
		{"empty-path-entries-only", "bin", "", "obs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			type outcome struct {
				stdout string
				status int
			}
			var got [2]outcome
			for i, wrapped := range []bool{false, true} {
				args := []string{"/usr/bin/env", tc.command, "state", "0"}
				if wrapped {
					args = []string{lensBin, "exec", "--", tc.command, "state", "0"}
				}
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Dir = filepath.Join(root, tc.dir)
				if tc.path != unset {
					cmd.Env = []string{"PATH=" + tc.path}
				} else {
					cmd.Env = []string{"LENS_TEST=1"}
				}
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				st := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					st = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				got[i] = outcome{stdout.String(), st}
			}
			if got[0] != got[1] {
				t.Errorf("PATH=%q %s:\n  env:       %+v\n  lens exec: %+v", tc.path, tc.command, got[0], got[1])
			}
		})
	}
}

// TestTransparentWrapperKilled: when lens is killed (kill -9, a
// supervisor's Popen.kill), the command does not outlive it.
func TestTransparentWrapperKilled(t *testing.T) {
	t.Parallel()
	s := scenario{wrapped: true, args: []string{"hold"}, sys: &syscall.SysProcAttr{Setpgid: true}}
	r := s.start(t)
	r.ready()
	send(t, r.pid(), syscall.SIGKILL)
	// The observer holds the output pipe until it dies: the end of the
	// output is its death. (Half the guard: the scenario's own guard kills
	// its process group, which would end a survivor in an old lens's group.)
	timeout := time.After(guard / 2)
drain:
	for {
		select {
		case _, ok := <-r.lines:
			if !ok {
				break drain
			}
		case <-timeout:
			_ = syscall.Kill(r.observer, syscall.SIGKILL)
			t.Fatalf("the command (pid %d) outlived lens", r.observer)
		}
	}
	if st := r.status(); st != 128+int(syscall.SIGKILL) {
		t.Errorf("lens: status %d, want %d", st, 128+int(syscall.SIGKILL))
	}
	// Its output closes while it exits; it is a zombie, or gone, soon after.
	for deadline := time.Now().Add(guard / 2); ; time.Sleep(time.Millisecond) {
		if st := procState(r.observer); st == "" || st == "Z" || st == "X" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the command (pid %d) is still alive, state %q", r.observer, st)
		}
	}
}

// TestTransparentPID1: as PID 1 of a PID namespace, lens reaps the orphans
// that the command's double-forking helpers leave, as a shell in that place
// does, without taking the command's status.
func TestTransparentPID1(t *testing.T) {
	t.Parallel()
	obs := observer(t)
	unshare := needPIDNamespace(t)
	const orphans = "200"
	for _, tc := range []struct {
		name string
		argv []string
		// pidsMax runs the namespace in a pids cgroup of that limit (a
		// pod's pids.max): the orphans fit only if they are reaped.
		pidsMax int
	}{
		{"bash", []string{"bash", "-c", `"$0" orphans ` + orphans + `; exit $?`, obs}, 0},
		{"lens exec", []string{lensBin, "exec", "--", obs, "orphans", orphans}, 0},
		{"lens exec status", []string{lensBin, "exec", "--", "bash", "-c", `"$0" orphans ` + orphans + `; exit 7`, obs}, 0},
		{"bash pids.max", []string{"bash", "-c", `"$0" orphans ` + orphans + `; exit $?`, obs}, 64},
		{"lens exec pids.max", []string{lensBin, "exec", "--", obs, "orphans", orphans}, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			argv := append([]string{unshare, "--pid", "--fork", "--mount-proc"}, tc.argv...)
			if tc.pidsMax > 0 {
				dir := pidsCgroup(t, tc.pidsMax)
				argv = append([]string{"/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir}, argv...)
			}
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Env = cliEnv(nil)
			// At the guard, the whole namespace goes: its PID 1 is in
			// unshare's process group.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			out, err := cmd.CombinedOutput()
			want := 0
			if strings.HasSuffix(tc.name, "status") {
				want = 7
			}
			var ee *exec.ExitError
			st := 0
			if errors.As(err, &ee) {
				st = ee.ExitCode()
			}
			if !strings.Contains(string(out), "orphans "+orphans+" reaped") || st != want {
				t.Errorf("%s as PID 1: status %d (want %d), output %q", tc.name, st, want, out)
			}
		})
	}
}

// pidsCgroup makes a cgroup v1 pids cgroup limited to max processes, and
// removes it at the end; the test is skipped where there is none.
func pidsCgroup(t *testing.T, max int) string {
	t.Helper()
	root := "/sys/fs/cgroup/pids"
	if _, err := os.Stat(filepath.Join(root, "cgroup.procs")); err != nil {
		t.Skipf("skipping: no cgroup v1 pids hierarchy at %s: %v", root, err)
	}
	dir, err := os.MkdirTemp(root, "lens-test-")
	if err != nil {
		t.Skipf("skipping: cannot make a pids cgroup: %v", err)
	}
	t.Cleanup(func() { _ = os.Remove(dir) })
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestExecOwnStderrClosed: lens's stderr is a pipe nobody reads any more and
// lens has something to say (the collector refuses): the status is still
// the command's.
func TestExecOwnStderrClosed(t *testing.T) {
	t.Parallel()
	endpoint := refusedEndpoint(t)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pr.Close()
	defer pw.Close()
	cmd := exec.Command(lensBin, "exec", "--", observer(t), "exit", "0")
	cmd.Env = cliEnv(map[string]string{
		"NEMO_LENS_ENABLED":           "true",
		"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
		"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
		"CUDA_VISIBLE_DEVICES":        "",
	})
	cmd.Stderr = pw
	if err := cmd.Run(); err != nil {
		t.Errorf("lens exec with its stderr closed: %v, want status 0", err)
	}
}

// TestExecFlushInterrupted: SIGTERM while lens flushes after the command
// exited (to a collector that never answers) ends the flush at once, with
// the command's status. The flush timeout is an hour: a lens that ignores
// the signal fails at the guard.
func TestExecFlushInterrupted(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // accepts and never answers
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	s := scenario{wrapped: true, lensArgs: []string{"--flush-timeout", "1h"}, args: []string{"signals"},
		sys: &syscall.SysProcAttr{Setpgid: true},
		env: map[string]string{
			"NEMO_LENS_ENABLED":           "true",
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + l.Addr().String(),
			"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
			"OTEL_EXPORTER_OTLP_TIMEOUT":  "3600000", // an hour too: only the signal ends the flush
			"OTEL_BSP_EXPORT_TIMEOUT":     "3600000",
			"CUDA_VISIBLE_DEVICES":        "",
		}}
	r := s.start(t)
	r.ready()
	send(t, r.observer, rtEnd) // the command alone: it exits 0
	r.next("counts ")
	waitState(t, r.observer, "") // reaped by lens: lens is flushing
	send(t, r.pid(), syscall.SIGTERM)
	if st := r.status(); st != 0 {
		t.Errorf("lens: status %d, want the command's 0; stderr %q", st, r.stderr)
	}
}

// TestExecProbeDoesNotDelayStart: a GPU probe (nvidia-smi) that answers only
// once the command runs does not hold the command back, and its count
// still reaches lens's span.
func TestExecProbeDoesNotDelayStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// nvidia-smi waits for the command to say it started, then lists 3 GPUs.
	smi := "#!/bin/sh\nread line < '" + fifo + "'\nprintf '3\\n3\\n3\\n'\n"
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(smi), 0o755); err != nil {
		t.Fatal(err)
	}
	// A command left blocked on the FIFO (by a lens that waited for the
	// probe) is released at the end.
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	cmd := exec.CommandContext(ctx, lensBin, "exec", "--", "/bin/sh", "-c", "echo started > '"+fifo+"'")
	cmd.WaitDelay = time.Second // after the guard, do not wait for the blocked command's stderr
	cmd.Env = []string{
		"PATH=" + dir + ":" + os.Getenv("PATH"),
		"NEMO_LENS_ENABLED=true",
		"OTEL_TRACES_EXPORTER=console",
		"LENS_NVIDIA_PROCFS=" + t.TempDir(), // a driver tree without GPUs: the identity runs no nvidia-smi
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("lens exec: %v; stderr %q", err, stderr.String())
	}
	spans := consoleSpans(t, stderr.String())
	if len(spans) != 1 {
		t.Fatalf("%d spans on stderr, want 1: %q", len(spans), stderr.String())
	}
	if got := spans[0].resource("host.gpu.count"); got != float64(3) {
		t.Errorf("host.gpu.count = %v, want 3 from the probe", got)
	}
}

// TestExecSignalBeforeStart: a signal that reaches lens before the command
// starts is passed on once it runs, instead of acting on lens. lens is held
// before the start by its own standard error: a pipe the test has filled,
// on which lens's line about the CA file (a FIFO, refused) blocks until
// the test reads it. SIGTSTP sent then must stop the command, and lens
// with it, once the command runs.
func TestExecSignalBeforeStart(t *testing.T) {
	t.Parallel()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := syscall.Mkfifo(ca, 0o600); err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close() })
	// Fill the pipe: lens's first write to it blocks until the test reads.
	filler := make([]byte, 1<<20)
	if err := pw.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	n, _ := pw.Write(filler) // stops, at the deadline, once the pipe is full
	if n == 0 || n == len(filler) {
		t.Fatalf("filled the pipe with %d bytes", n)
	}
	if err := pw.SetWriteDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	s := scenario{wrapped: true, args: []string{"signals"}, sys: &syscall.SysProcAttr{Setpgid: true}, stderr: pw,
		env: map[string]string{
			"NEMO_LENS_ENABLED":              "true",
			"OTEL_EXPORTER_OTLP_ENDPOINT":    "http://127.0.0.1:1",
			"OTEL_EXPORTER_OTLP_CERTIFICATE": ca,
			"CUDA_VISIBLE_DEVICES":           "",
		}}
	r := s.start(t)
	pw.Close() // lens holds its own copy
	// lens is past its first instruction, before the start, once one of
	// its threads waits to write to the full pipe.
	for deadline := time.Now().Add(guard); !writingToPipe(r.pid()); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("lens never wrote to its standard error")
		}
	}
	send(t, r.pid(), syscall.SIGTSTP)
	go func() { // lens writes on; the test keeps what follows the filler
		rest := filler[:n]
		_, _ = io.ReadFull(pr, rest)
		_, _ = io.Copy(r.stderr, pr)
	}()
	waitState(t, r.pid(), "T")
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", r.pid(), r.pid()))
	child, _ := strconv.Atoi(strings.TrimSpace(string(children)))
	if err != nil || child == 0 {
		// The child may have been started by another thread of lens.
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", r.pid()))
		for _, task := range tasks {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", r.pid(), task.Name()))
			if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); n != 0 {
				child = n
			}
		}
	}
	if child == 0 {
		t.Fatalf("lens stopped without a command (the SIGTSTP acted on lens before the start); stderr %q", r.stderr)
	}
	waitState(t, child, "T")
	send(t, r.pid(), syscall.SIGCONT)
	r.ready()
	send(t, r.observer, rtEnd)
	r.next("counts ")
	if st := r.status(); st != 0 {
		t.Errorf("status %d, want 0; stderr %q", st, r.stderr)
	}
	if !strings.Contains(r.stderr.String(), "OTEL_EXPORTER_OTLP_CERTIFICATE") {
		t.Errorf("stderr %q does not name the bad CA file's variable", r.stderr)
	}
}

// writingToPipe reports whether a thread of pid waits to write to a pipe.
func writingToPipe(pid int) bool {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/wchan", pid, task.Name()))
		if strings.HasSuffix(string(b), "pipe_write") { // anon_pipe_write on newer kernels
			return true
		}
	}
	return false
}

// TestExecProbeNotOrphaned: SIGTERM while the GPU probe (an nvidia-smi that
// hangs) is running reaches the command, and lens ends the probe before it
// exits, instead of dying at once and leaving the probe behind.
func TestExecProbeNotOrphaned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "smi.pid")
	smi := "#!/bin/sh\necho $$ > '" + pidFile + ".tmp'\nmv '" + pidFile + ".tmp' '" + pidFile + "'\nexec sleep 3600\n"
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(smi), 0o755); err != nil {
		t.Fatal(err)
	}
	s := scenario{wrapped: true, lensArgs: []string{"--flush-timeout", "1s"}, args: []string{"hold"},
		sys: &syscall.SysProcAttr{Setpgid: true},
		env: map[string]string{
			"PATH":                 dir + ":" + os.Getenv("PATH"),
			"NEMO_LENS_ENABLED":    "true",
			"OTEL_TRACES_EXPORTER": "console",
		}}
	r := s.start(t)
	var smiPID int
	for deadline := time.Now().Add(guard / 2); smiPID == 0; time.Sleep(time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			smiPID, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		} else if time.Now().After(deadline) {
			t.Fatalf("the probe never ran; stderr %q", r.stderr)
		}
	}
	t.Cleanup(func() { _ = syscall.Kill(smiPID, syscall.SIGKILL) })
	send(t, r.pid(), syscall.SIGTERM)
	for range r.lines {
	}
	if st := r.status(); st != 128+int(syscall.SIGTERM) {
		t.Errorf("lens: status %d, want %d (the command killed by SIGTERM); stderr %q", st, 128+int(syscall.SIGTERM), r.stderr)
	}
	for deadline := time.Now().Add(guard / 2); ; time.Sleep(time.Millisecond) {
		if st := procState(smiPID); st == "" || st == "Z" || st == "X" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the probe (pid %d) outlived lens, state %q", smiPID, st)
		}
	}
}
