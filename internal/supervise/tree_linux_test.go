//go:build linux

package supervise

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// The relayed signals, written from docs/exec.md#signal-fates: the
// catchable signals a sender may mean for the command, the synchronous
// ones sent with kill(2) among them, and the real-time ones, 35
// (SIGRTMIN+1) to 64 (SIGRTMAX); SIGRTMIN itself cannot be caught by a Go
// program (TestSIGRTMINEndsLens). SIGTERM comes last in the tests: it
// ends the child.
var wantRelayed = func() []syscall.Signal {
	out := []syscall.Signal{
		syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGILL, syscall.SIGTRAP,
		syscall.SIGABRT, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGUSR1, syscall.SIGSEGV,
		syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGSTKFLT, syscall.SIGTSTP, syscall.SIGTTIN,
		syscall.SIGXCPU, syscall.SIGXFSZ, syscall.SIGVTALRM, syscall.SIGWINCH, syscall.SIGIO,
		syscall.SIGPWR, syscall.SIGSYS,
	}
	for s := syscall.Signal(35); s <= 64; s++ {
		out = append(out, s)
	}
	return out
}()

// ready is what the child says once its handlers are installed.
type ready struct {
	pid, pgid int
	ignored   uint64 // its SigIgn mask at start
	fg        int    // the terminal's foreground group, or -1
}

func (tr *tree) ready() ready {
	tr.t.Helper()
	f := tr.awaitInts("ready ")
	return ready{pid: f[0], pgid: f[1], ignored: uint64(f[2]), fg: f[3]}
}

// lens is lens's pid and process group after Start, and the mode in force.
func (tr *tree) lens() (pid, pgrp int, mode string) {
	tr.t.Helper()
	f := tr.await("lens ")
	if len(f) != 3 {
		tr.t.Fatalf("lens line %q", f)
	}
	pid, pgrp = atoi(tr.t, f[0]), atoi(tr.t, f[1])
	return pid, pgrp, f[2]
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	for _, r := range s {
		if r < '0' || r > '9' {
			t.Fatalf("%q is not a number", s)
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// TestRelayPassesEachSignalOn: in ModeRelay the command leads a process
// group of its own, and every signal of the set sent to lens's pid reaches
// it once, in order; SIGTERM, passed on inside a Slurm job, is noted as
// possibly received twice, the others are not.
func TestRelayPassesEachSignalOn(t *testing.T) {
	t.Parallel()
	tr := startTree(t, ModeRelay, "record", helperSlurm+"=1")
	c := tr.ready()
	lens, pgrp, mode := tr.lens()
	if mode != "relay" {
		t.Fatalf("mode %s, want relay", mode)
	}
	if c.pgid != c.pid {
		t.Fatalf("the command is in process group %d, want its own (%d)", c.pgid, c.pid)
	}
	if pgrp != tr.leader {
		t.Fatalf("lens is in process group %d, want the one it was started in (%d)", pgrp, tr.leader)
	}
	if c.ignored != 0 {
		t.Fatalf("the command started with signals %#x ignored, want none", c.ignored)
	}
	// Locate: the leader leads its group, lens does not; neither is PID 1.
	if f := tr.await("leader place "); strings.Join(f, " ") != "false true" {
		t.Errorf("the leader's place: PID1, Leader %q, want false true", f)
	}
	if f := tr.await("place "); strings.Join(f, " ") != "false false" {
		t.Errorf("lens's place: PID1, Leader %q, want false false", f)
	}
	for _, s := range wantRelayed {
		tr.send(lens, s)
	}
	if n := tr.notes(); len(n) != 0 {
		t.Errorf("notes before SIGTERM: %q", n)
	}
	tr.send(lens, syscall.SIGTERM)
	if status, _, _ := tr.exit(); status != 7 {
		t.Errorf("exit status %d, want the command's 7", status)
	}
	if n := tr.notes(); len(n) != 1 || !strings.HasPrefix(n[0], "passed SIGTERM on") {
		t.Errorf("notes %q, want one that SIGTERM was passed on", n)
	}
}

// TestAsideLeavesTheGroupToTheCommand: in ModeAside lens leaves the
// process group it was started in for one of its own and starts the
// command there: a signal to that group reaches the command once, not
// lens; one to lens's pid is passed on. Outside Slurm nothing is noted.
func TestAsideLeavesTheGroupToTheCommand(t *testing.T) {
	t.Parallel()
	tr := startTree(t, ModeAside, "record")
	c := tr.ready()
	lens, pgrp, mode := tr.lens()
	if mode != "aside" {
		t.Fatalf("mode %s, want aside", mode)
	}
	if c.pgid != tr.leader {
		t.Fatalf("the command is in process group %d, want the one lens was started in (%d)", c.pgid, tr.leader)
	}
	if pgrp != lens {
		t.Fatalf("lens is in process group %d, want its own (%d)", pgrp, lens)
	}
	// The group's signal reaches the command directly; had lens got it
	// too, the command would get it a second time before the next one.
	tr.send(-tr.leader, syscall.SIGUSR1)
	for _, s := range []syscall.Signal{syscall.SIGUSR2, 64, syscall.SIGCONT} {
		tr.send(lens, s)
	}
	tr.send(-tr.leader, syscall.SIGTERM)
	status, _, pgrp := tr.exit()
	if status != 7 {
		t.Errorf("exit status %d, want the command's 7", status)
	}
	if pgrp != lens {
		t.Errorf("after the exit lens is in process group %d, want its own (%d)", pgrp, lens)
	}
	if n := tr.notes(); len(n) != 0 {
		t.Errorf("notes outside Slurm: %q", n)
	}
}

// TestDirectPassesNothingOn: in ModeDirect the command stays in lens's
// group; a signal to lens's pid is not passed on, and noted once.
func TestDirectPassesNothingOn(t *testing.T) {
	t.Parallel()
	tr := startTree(t, ModeDirect, "record", helperSlurm+"=1")
	c := tr.ready()
	lens, pgrp, mode := tr.lens()
	if mode != "direct" {
		t.Fatalf("mode %s, want direct", mode)
	}
	if c.pgid != tr.leader || pgrp != tr.leader {
		t.Fatalf("the command is in process group %d and lens in %d, want both in %d", c.pgid, pgrp, tr.leader)
	}
	tr.signal(lens, syscall.SIGUSR1)
	// Either lens's note or, passed on, the command's line comes first.
	switch p, f := tr.awaitFirst("sig ", "note "); {
	case p == "sig ":
		t.Fatalf("SIGUSR1 sent to lens reached the command (sig %v)", f)
	case !strings.HasPrefix(strings.Join(f, " "), "SIGUSR1 was not passed on"):
		t.Errorf("note %q", strings.Join(f, " "))
	}
	tr.send(-tr.leader, syscall.SIGUSR2)
	tr.send(-tr.leader, syscall.SIGTERM)
	if status, _, _ := tr.exit(); status != 7 {
		t.Errorf("exit status %d, want the command's 7", status)
	}
	if n := tr.notes(); len(n) != 0 {
		t.Errorf("more notes: %q", n)
	}
}

// TestInheritedIgnoredReachTheCommand: lens started with SIGHUP, SIGINT
// and SIGTSTP ignored (nohup, a shell's background job) starts the command
// with them ignored, and no other; one sent to lens's pid still reaches a
// command that handles it.
func TestInheritedIgnoredReachTheCommand(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{ModeRelay, ModeAside} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			tr := startTree(t, mode, "record", helperIgnore+"=1 2 20")
			c := tr.ready()
			lens, _, _ := tr.lens()
			const want = 1<<(syscall.SIGHUP-1) | 1<<(syscall.SIGINT-1) | 1<<(syscall.SIGTSTP-1)
			if c.ignored != want {
				t.Fatalf("the command started with signals %#x ignored, want %#x (SIGHUP, SIGINT, SIGTSTP)", c.ignored, uint64(want))
			}
			for _, s := range []syscall.Signal{syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGINT, syscall.SIGTSTP, syscall.SIGTERM} {
				tr.send(lens, s)
			}
			if status, _, _ := tr.exit(); status != 7 {
				t.Errorf("exit status %d, want the command's 7", status)
			}
		})
	}
}

// TestStopAndContinue: a command that stops itself (SIGTSTP) stops lens
// too, so that a shell sees the job stopped. In ModeRelay a SIGCONT to
// lens continues the command's group; in ModeAside lens waits, stopped, in
// the command's group, so that the shell's SIGCONT to the job continues
// both, and then leaves the group again. A SIGCONT to lens's pid alone
// continues the command too.
func TestStopAndContinue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode  Mode
		group bool // continue the group, not lens's pid
	}{
		{ModeRelay, false},
		{ModeAside, true},
		{ModeAside, false},
	} {
		name := tc.mode.String() + "/pid"
		if tc.group {
			name = tc.mode.String() + "/group"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr := startTree(t, tc.mode, "stop")
			c := tr.ready()
			// Lens's pid from the leader: lens says its own line only
			// once it runs, and the command may stop it before.
			lens := tr.awaitInts("leader started lens ")[0]
			if got := tr.awaitInts("leader sees lens stopped ")[0]; got != int(syscall.SIGSTOP) {
				t.Fatalf("lens stopped by %d", got)
			}
			if tc.group {
				// A signal sent to the group while both are stopped is
				// not tested: lens may read it after the SIGCONT, out of
				// the group again, and pass it on.
				tr.signal(-c.pgid, syscall.SIGCONT)
				tr.await("resumed ")
				// lens leaves the group again when it reads the SIGCONT,
				// which may be after the command runs again, and after
				// a signal that arrives next (the runtime does not keep
				// their order): wait until it has.
				tr.awaitGroup(lens, lens)
			} else {
				tr.signal(lens, syscall.SIGCONT)
				tr.await("resumed ")
				if tc.mode == ModeAside {
					tr.awaitGroup(lens, lens)
				}
			}
			if pid, _, _ := tr.lens(); pid != lens {
				t.Fatalf("lens says it is %d, the leader started %d", pid, lens)
			}
			// lens is out of the command's group again (ModeAside): a
			// signal to the group reaches the command once.
			tr.send(-c.pgid, syscall.SIGUSR2)
			tr.send(lens, syscall.SIGUSR1)
			tr.send(lens, syscall.SIGTERM)
			status, _, pgrp := tr.exit()
			if status != 7 {
				t.Errorf("exit status %d, want the command's 7", status)
			}
			if n := tr.notes(); len(n) != 0 {
				t.Errorf("notes %q", n)
			}
			if tc.mode == ModeAside && pgrp != lens {
				t.Errorf("lens ended in process group %d, want its own (%d)", pgrp, lens)
			}
		})
	}
}

// TestSIGRTMINEndsLens pins a limit (docs/exec.md#signals): the Go runtime
// keeps signal 34 (SIGRTMIN, musl's SIGSYNCCALL: golang/go#39343) for
// itself and installs no handler for it, so os/signal cannot subscribe to
// it; sent to lens, it ends lens (its default action), and the command
// gets the parent-death signal. When this fails, the runtime lets it be
// caught: relay it and drop this test.
func TestSIGRTMINEndsLens(t *testing.T) {
	t.Parallel()
	tr := startTree(t, ModeRelay, "record")
	tr.ready()
	lens, _, _ := tr.lens()
	tr.signal(lens, sigRTMin)
	if got := tr.awaitInts("leader sees lens killed ")[0]; got != sigRTMin {
		t.Errorf("lens was killed by %d, want %d", got, sigRTMin)
	}
}

// openPTY opens a pseudo-terminal: its master and its slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	var n uint32
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("TIOCGPTN: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("TIOCSPTLCK: %v", e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return m, s
}

// TestTerminalForeground: lens in the foreground of a terminal (a shell's
// job: the leader has it as controlling terminal) hands the foreground to
// the command in ModeRelay and takes it back once the command has
// exited; ModeAside and ModeDirect never touch it. The terminal is lens's
// standard input and output.
func TestTerminalForeground(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{ModeRelay, ModeAside, ModeDirect} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			_, pts := openPTY(t)
			tr := startHelper(t, &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}, pts, "leader",
				helperMode+"="+mode.String(), helperChild+"=record")
			c := tr.ready()
			lens, _, _ := tr.lens()
			want := tr.leader
			if mode == ModeRelay {
				want = c.pid
			}
			if c.fg != want {
				t.Fatalf("the command runs with the terminal's foreground at group %d, want %d", c.fg, want)
			}
			if mode == ModeDirect {
				tr.signal(-tr.leader, syscall.SIGTERM) // the sender reaches the command itself
			} else {
				tr.signal(lens, syscall.SIGTERM)
			}
			status, fg, pgrp := tr.exit()
			if status != 7 {
				t.Errorf("exit status %d, want 7", status)
			}
			if fg != tr.leader || pgrp != tr.leader && mode != ModeAside {
				t.Errorf("after the exit the foreground is %d, lens's group %d, want %d", fg, pgrp, tr.leader)
			}
		})
	}
}

// TestTerminalForegroundAfterStop: a command stopped in the foreground
// stops lens; a shell's fg gives the terminal to lens's group and
// continues it, and lens hands the terminal on to the command's group
// before continuing it.
func TestTerminalForegroundAfterStop(t *testing.T) {
	t.Parallel()
	_, pts := openPTY(t)
	tr := startHelper(t, &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}, pts, "leader",
		helperMode+"=relay", helperChild+"=stop", helperFg+"=1")
	c := tr.ready()
	lens, _, _ := tr.lens()
	tr.await("leader sees lens stopped ")
	if fg := tr.awaitInts("resumed ")[0]; fg != c.pid {
		t.Fatalf("the command was continued with the foreground at group %d, want its own (%d)", fg, c.pid)
	}
	tr.signal(lens, syscall.SIGTERM)
	if status, fg, _ := tr.exit(); status != 7 || fg != tr.leader {
		t.Errorf("exit status %d, foreground %d; want 7, %d", status, fg, tr.leader)
	}
}

// TestDie: Die ends the process with the signal, without a core file;
// it returns, having changed nothing, for what cannot end it that way.
func TestDie(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sig    syscall.Signal
		killed bool
	}{
		{syscall.SIGTERM, true},
		{syscall.SIGQUIT, true}, // would dump core
		{syscall.SIGKILL, true},
		{64, true},
		{65, false},
		{0, false},
		{syscall.SIGSTOP, false},
	} {
		t.Run(strconv.Itoa(int(tc.sig)), func(t *testing.T) {
			t.Parallel()
			tr := startHelper(t, &syscall.SysProcAttr{Setpgid: true}, nil, "die", helperDie+"="+strconv.Itoa(int(tc.sig)))
			var returned []string
			for l := range tr.lines {
				if f, ok := strings.CutPrefix(l, "returned "); ok {
					returned = strings.Fields(f)
				}
			}
			<-tr.done
			// Die returns before it changes anything: the core file
			// size limit is the one it was called with.
			if len(returned) == 2 && returned[0] != returned[1] {
				t.Errorf("Die(%d) returned with the core file size limit %s, was %s", tc.sig, returned[1], returned[0])
			}
			ws := tr.status
			switch {
			case tc.killed && (!ws.Signaled() || ws.Signal() != tc.sig || ws.CoreDump()):
				t.Errorf("Die(%d): wait status %#x, want killed by %d without a core file", tc.sig, uint32(ws), tc.sig)
			case !tc.killed && (!ws.Exited() || ws.ExitStatus() != 3):
				t.Errorf("Die(%d): wait status %#x, want a return (exit 3)", tc.sig, uint32(ws))
			}
		})
	}
}

// awaitGroup waits until the process group of pid, read from
// /proc/PID/stat, is pgrp.
func (tr *tree) awaitGroup(pid, pgrp int) {
	tr.t.Helper()
	deadline := time.Now().Add(guard)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			tr.t.Fatal(err)
		}
		// pid (comm) state ppid pgrp ...
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(pgrp) {
			return
		}
		if time.Now().After(deadline) {
			tr.t.Fatalf("process %d is in process group %s, want %d", pid, f[2], pgrp)
		}
		select {
		case <-abort:
			tr.t.Fatal("another test failed (-failfast)")
		case <-time.After(time.Millisecond):
		}
	}
}

// TestAsideStartFailure: when the command cannot be started, lens in
// ModeAside is back in the process group it was started in.
func TestAsideStartFailure(t *testing.T) {
	t.Parallel()
	tr := startTree(t, ModeAside, "record", helperArgs+"=/nonexistent/lens-test-command")
	f := tr.await("start error in ")
	if len(f) == 0 || f[0] != strconv.Itoa(tr.leader)+":" {
		t.Errorf("start error %q, want lens back in process group %d", f, tr.leader)
	}
}

// send sends sig to pid (lens, or a group when negative) and fails unless
// the next signal the command says it received is sig.
func (tr *tree) send(pid int, sig syscall.Signal) {
	tr.t.Helper()
	tr.signal(pid, sig)
	if got := tr.nextSig(); got != sig {
		to := "lens"
		if pid < 0 {
			to = "the group"
		}
		tr.t.Fatalf("sent %v to %s, the command got %v next", sigName(sig), to, sigName(got))
	}
}

// TestSIGTTOUIgnored: lens ignores SIGTTOU (docs/exec.md#signal-fates):
// one sent to lens neither stops lens nor reaches the command, in every
// mode. Ignored, it is discarded when it is sent, so the next signal the
// command gets is the one sent after it.
func TestSIGTTOUIgnored(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{ModeRelay, ModeAside, ModeDirect} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			tr := startTree(t, mode, "record")
			tr.ready()
			lens, _, _ := tr.lens()
			tr.signal(lens, syscall.SIGTTOU)
			if st := procState(lens); st == 'T' {
				t.Fatalf("SIGTTOU stopped lens")
			}
			target := lens
			if mode == ModeDirect {
				target = -tr.leader
			}
			tr.send(target, syscall.SIGUSR1)
			tr.send(target, syscall.SIGTERM)
			if status, _, _ := tr.exit(); status != 7 {
				t.Errorf("exit status %d, want the command's 7", status)
			}
		})
	}
}

// TestTerminalBackground: lens in the background of a terminal (a group
// of its own, not the foreground one) leaves the foreground where it is.
func TestTerminalBackground(t *testing.T) {
	t.Parallel()
	_, pts := openPTY(t)
	tr := startHelper(t, &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}, pts, "leader",
		helperMode+"=relay", helperChild+"=record", helperBg+"=1")
	c := tr.ready()
	lens, _, _ := tr.lens()
	if c.fg != tr.leader {
		t.Fatalf("the command runs with the terminal's foreground at group %d, want the leader's (%d)", c.fg, tr.leader)
	}
	tr.send(lens, syscall.SIGTERM)
	if status, fg, _ := tr.exit(); status != 7 || fg != tr.leader {
		t.Errorf("exit status %d, foreground %d; want 7, %d", status, fg, tr.leader)
	}
}
