//go:build linux

package supervise

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests of the relay start real processes: the test binary itself,
// re-executed in a role named by helperEnv. A test starts a "leader" (a
// shell's stand-in: the leader of a process group of its own, or of a
// session with a terminal), which starts "lens" (Notify and Start, as lens
// exec does), which starts the command, a "child" that says on its standard
// error what it observes: its process group, its ignored signals, the
// terminal's foreground group, each signal it receives. Every process of
// the tree writes whole lines to the same pipe, which the test reads; the
// test synchronises on those lines, never on time.
//
// Each process dies with its parent (the parent-death signal, from a
// thread that stays locked while the child lives), so that a test binary
// that is killed (a timeout) leaves no process behind. No test signals the
// process group it runs in: the leader's group or session is its own.
const (
	helperEnv     = "LENS_SUPERVISE_TEST_HELPER" // leader, lens, child or die
	helperMode    = "LENS_SUPERVISE_TEST_MODE"   // lens: relay, direct or aside
	helperSlurm   = "LENS_SUPERVISE_TEST_SLURM"  // lens: 1 inside a Slurm job
	helperIgnore  = "LENS_SUPERVISE_TEST_IGNORE" // leader: signal numbers it ignores
	helperChild   = "LENS_SUPERVISE_TEST_CHILD"  // child: record or stop
	helperDie     = "LENS_SUPERVISE_TEST_DIE"    // die: the signal number for Die
	helperFg      = "LENS_SUPERVISE_TEST_FG"     // leader: 1 to continue lens as fg does
	helperArgs    = "LENS_SUPERVISE_TEST_ARGS"   // lens: the command, instead of the child
	helperBg      = "LENS_SUPERVISE_TEST_BG"     // leader: 1 to start lens in a group of its own
	helperMessage = "helper: "
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "leader":
		os.Exit(leaderMain())
	case "lens":
		os.Exit(lensMain())
	case "child":
		os.Exit(childMain())
	case "die":
		// A core file size limit that Die's zero would change, where
		// the hard limit allows one.
		var core syscall.Rlimit
		_ = syscall.Getrlimit(syscall.RLIMIT_CORE, &core)
		core.Cur = min(core.Max, 1<<20)
		_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &core)
		_ = syscall.Getrlimit(syscall.RLIMIT_CORE, &core)
		before := core.Cur
		n, _ := strconv.Atoi(os.Getenv(helperDie))
		Die(syscall.Signal(n))
		_ = syscall.Getrlimit(syscall.RLIMIT_CORE, &core)
		say("returned %d %d", before, core.Cur)
		os.Exit(3)
	}
	fmt.Fprintln(os.Stderr, helperMessage+"unknown role "+os.Getenv(helperEnv))
	os.Exit(2)
}

// say writes one line to standard error in one write, so that the lines
// of the processes that share the pipe do not mix. Standard error, so that
// standard input and output can be a terminal.
func say(format string, a ...any) {
	_, _ = os.Stderr.WriteString(fmt.Sprintf(format, a...) + "\n")
}

// helperEnviron is the environment of a helper in role, the others' roles
// removed; more are added.
func helperEnviron(role string, more ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LENS_SUPERVISE_TEST_") {
			env = append(env, kv)
		}
	}
	return append(append(env, helperEnv+"="+role), more...)
}

// jobSignals are the signals a shell's job may get from its terminal or
// its group: the leader catches them, so that a signal a test sends to the
// leader's group does not end or stop the leader.
var jobSignals = func() []os.Signal {
	out := []os.Signal{syscall.SIGTTIN, syscall.SIGTTOU}
	for s := range relayed {
		out = append(out, s)
	}
	return out
}()

// leaderMain starts lens in its own process group (or session) and waits
// for it, saying when it stops; its exit status is lens's.
func leaderMain() int {
	runtime.LockOSThread() // the thread that forks lens lives as long as lens
	at := Locate(nil)
	say("leader place %t %t", at.PID1, at.Leader)
	signal.Notify(make(chan os.Signal, 1), jobSignals...)
	for _, f := range strings.Fields(os.Getenv(helperIgnore)) {
		n, _ := strconv.Atoi(f)
		signal.Ignore(syscall.Signal(n))
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, helperMessage, err)
		return 2
	}
	proc, err := os.StartProcess(exe, []string{exe}, &os.ProcAttr{
		Env: helperEnviron("lens", helperMode+"="+os.Getenv(helperMode), helperSlurm+"="+os.Getenv(helperSlurm),
			helperChild+"="+os.Getenv(helperChild), helperArgs+"="+os.Getenv(helperArgs)),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: os.Getenv(helperBg) == "1"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, helperMessage, err)
		return 2
	}
	// Lens's own line may come late: lens stops with a command that stops
	// at once, before it has said it.
	say("leader started lens %d", proc.Pid)
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(proc.Pid, &ws, syscall.WUNTRACED, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil:
			fmt.Fprintln(os.Stderr, helperMessage, err)
			return 2
		case ws.Stopped():
			say("leader sees lens stopped %d", ws.StopSignal())
			if os.Getenv(helperFg) == "1" {
				// A shell's fg: the job's group gets the terminal (from
				// the background: SIGTTOU ignored), then SIGCONT.
				signal.Ignore(syscall.SIGTTOU)
				_ = tcsetpgrp(0, syscall.Getpgrp())
				_ = syscall.Kill(proc.Pid, syscall.SIGCONT)
			}
		case ws.Exited():
			return ws.ExitStatus()
		case ws.Signaled():
			say("leader sees lens killed %d", ws.Signal())
			return 128 + int(ws.Signal())
		}
	}
}

// lensMain is lens exec: it subscribes, starts the child in the mode of
// helperMode and says its own pid and process group, the notes, and the
// exit with the terminal's foreground group then.
func lensMain() int {
	sigs := Notify()
	at := Locate(nil)
	mode, err := ParseMode(os.Getenv(helperMode))
	exe, err2 := os.Executable()
	if err != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, helperMessage, err, err2)
		return 2
	}
	args := []string{exe}
	if a := strings.Fields(os.Getenv(helperArgs)); len(a) > 0 {
		args = a
	}
	p, err := Start(&Command{
		Args:    args,
		Env:     helperEnviron("child", "LENS_SUPERVISE_TEST_CHILD="+os.Getenv(helperChild)),
		Stdin:   os.Stdin,
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Mode:    mode,
		Slurm:   os.Getenv(helperSlurm) == "1",
		Signals: sigs,
		Note:    func(line string) { say("note %s", line) },
	})
	if err != nil {
		say("start error in %d: %v", syscall.Getpgrp(), err)
		return 2
	}
	say("lens %d %d %s", os.Getpid(), syscall.Getpgrp(), p.Mode())
	say("place %t %t", at.PID1, at.Leader)
	e := p.Wait()
	say("exit %d fg %d pgrp %d", e.Status(), foreground(), syscall.Getpgrp())
	p.Close()
	sigs.Stop()
	return e.Status()
}

// foreground is the foreground process group of the terminal on standard
// input, or -1.
func foreground() int {
	pg, err := tcgetpgrp(0)
	if err != nil {
		return -1
	}
	return pg
}

// childMain is the command: it says "ready PID PGID SIGIGN FG" once its
// handlers are installed (SIGIGN: the signals it started with ignored, as
// /proc/self/status's hexadecimal mask), then "sig N" for each signal it
// receives; SIGTERM ends it with status 7. In the stop role it stops
// itself with SIGTSTP first and says "resumed" once continued.
func childMain() int {
	c := make(chan os.Signal, signalQueue)
	ign := inheritedIgnored()
	stop := os.Getenv(helperChild) == "stop"
	if stop {
		signal.Notify(c, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2, syscall.Signal(sigRTMax))
	} else {
		signal.Notify(c, append(subscribed(), syscall.SIGTTOU)...) // SIGTTOU: lens must not pass it on
		signal.Ignore(syscall.SIGCHLD, syscall.SIGPIPE)            // not relayed, not recorded
	}
	say("ready %d %d %#x %d", os.Getpid(), syscall.Getpgrp(), ign, foreground())
	if stop {
		// The stop may come after kill returns (another thread takes
		// the signal): resumed means SIGCONT came after the stop.
		cont := make(chan os.Signal, 1)
		signal.Notify(cont, syscall.SIGCONT)
		_ = syscall.Kill(os.Getpid(), syscall.SIGTSTP)
		<-cont
		say("resumed %d", foreground())
	}
	for s := range c {
		n := int(s.(syscall.Signal))
		say("sig %d", n)
		if n == int(syscall.SIGTERM) {
			return 7
		}
	}
	return 0
}

// abort is closed when a test of a process tree fails under -failfast:
// the others stop waiting for their lines (a mutant that breaks the relay
// often leaves some tree waiting until the guard, and go test -failfast
// still waits for the tests that run in parallel).
var (
	abort     = make(chan struct{})
	abortOnce sync.Once
)

func failFast(t *testing.T) {
	if f := flag.Lookup("test.failfast"); t.Failed() && f != nil && f.Value.String() == "true" {
		abortOnce.Do(func() { close(abort) })
	}
}

// tree is a leader's process tree, seen from the test.
type tree struct {
	t      *testing.T
	leader int
	lines  chan string
	done   chan struct{} // closed when the leader has been waited for
	status syscall.WaitStatus
	seen   []string // lines read past while awaiting others
}

// coverEnv passes the test binary's coverage directory on to the helpers,
// so that what they run counts in go test -cover's profile (the helpers
// write their counters there when they exit).
func coverEnv() []string {
	if f := flag.Lookup("test.gocoverdir"); f != nil && f.Value.String() != "" {
		return []string{"GOCOVERDIR=" + f.Value.String()}
	}
	return nil
}

// startHelper starts the test binary in role with env added, its standard
// error read as lines, its standard input and output stdin (nil: none), from a locked thread so that the helper's
// parent-death signal fires when the test binary ends, not before.
func startHelper(t *testing.T, sys *syscall.SysProcAttr, stdin *os.File, role string, env ...string) *tree {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tr := &tree{t: t, lines: make(chan string, 256), done: make(chan struct{})}
	cmd := exec.Command(exe)
	cmd.Env = append(helperEnviron(role, env...), coverEnv()...)
	sys.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr = sys
	if stdin != nil {
		cmd.Stdin, cmd.Stdout = stdin, stdin
	}
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the helper
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			tr.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, out)
		close(tr.lines)
		_ = cmd.Wait()
		tr.status, _ = cmd.ProcessState.Sys().(syscall.WaitStatus)
		close(tr.done)
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	tr.leader = cmd.Process.Pid
	if tr.leader <= 1 {
		t.Fatalf("leader pid %d", tr.leader)
	}
	t.Cleanup(func() {
		failFast(t)
		select {
		case <-tr.done: // reaped: its pid may be another process's now
		default:
			_ = syscall.Kill(tr.leader, syscall.SIGKILL)
		}
		for range tr.lines {
		}
		<-tr.done
		if t.Failed() {
			t.Logf("lines read past: %q", tr.seen)
		}
	})
	return tr
}

// startTree starts a leader in a process group of its own, and lens in
// mode under it; child is the command's role (record or stop).
func startTree(t *testing.T, mode Mode, child string, env ...string) *tree {
	t.Helper()
	env = append(env, helperMode+"="+mode.String(), helperChild+"="+child)
	return startHelper(t, &syscall.SysProcAttr{Setpgid: true}, nil, "leader", env...)
}

// await returns the fields after the prefix of the first line that starts
// with prefix, among those read past before (seen) and then the next ones;
// the lines read past are kept in seen, in their order.
func (tr *tree) await(prefix string) []string {
	tr.t.Helper()
	_, f := tr.awaitFirst(prefix)
	return f
}

// awaitFirst is await for the first line that starts with any of prefixes:
// it returns that prefix and the fields after it.
func (tr *tree) awaitFirst(prefixes ...string) (string, []string) {
	tr.t.Helper()
	match := func(l string) (string, []string, bool) {
		for _, p := range prefixes {
			if rest, found := strings.CutPrefix(l, p); found {
				return p, strings.Fields(rest), true
			}
		}
		return "", nil, false
	}
	for i, l := range tr.seen {
		if p, f, ok := match(l); ok {
			tr.seen = append(tr.seen[:i:i], tr.seen[i+1:]...)
			return p, f
		}
	}
	for {
		select {
		case l, ok := <-tr.lines:
			if !ok {
				tr.t.Fatalf("the helpers ended before a line %q", prefixes)
			}
			if p, f, ok := match(l); ok {
				return p, f
			}
			tr.seen = append(tr.seen, l)
		case <-time.After(guard):
			tr.t.Fatalf("no line %q", prefixes)
		case <-abort:
			tr.t.Fatalf("no line %q yet, and another test failed (-failfast)", prefixes)
		}
	}
}

// awaitInt is await for a line of numbers.
func (tr *tree) awaitInts(prefix string) []int {
	tr.t.Helper()
	f := tr.await(prefix)
	out := make([]int, len(f))
	for i, s := range f {
		n, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			tr.t.Fatalf("line %q%s: %v", prefix, strings.Join(f, " "), err)
		}
		out[i] = int(n)
	}
	return out
}

// signal sends sig to pid (a process group when negative), never to the
// test's own group.
func (tr *tree) signal(pid int, sig syscall.Signal) {
	tr.t.Helper()
	if pid == 0 || pid == -1 || pid == 1 || pid == -os.Getpid() || pid == -syscall.Getpgrp() {
		tr.t.Fatalf("refusing to signal %d", pid)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		tr.t.Fatalf("kill(%d, %v): %v", pid, sig, err)
	}
}

// nextSig is the next signal the child says it received.
func (tr *tree) nextSig() syscall.Signal {
	tr.t.Helper()
	return syscall.Signal(tr.awaitInts("sig ")[0])
}

// exit waits for lens's exit line: the command's status, the terminal's
// foreground group then and lens's process group; and for the leader.
func (tr *tree) exit() (status, fg, pgrp int) {
	tr.t.Helper()
	f := tr.await("exit ")
	if len(f) != 5 {
		tr.t.Fatalf("exit line %q", f)
	}
	status, _ = strconv.Atoi(f[0])
	fg, _ = strconv.Atoi(f[2])
	pgrp, _ = strconv.Atoi(f[4])
	for l := range tr.lines {
		tr.seen = append(tr.seen, l)
	}
	select {
	case <-tr.done:
	case <-time.After(guard):
		tr.t.Fatal("the leader did not exit")
	case <-abort:
		tr.t.Fatal("the leader has not exited, and another test failed (-failfast)")
	}
	return status, fg, pgrp
}

// notes are the notes lens said among the lines read past.
func (tr *tree) notes() []string {
	var out []string
	for _, l := range tr.seen {
		if n, ok := strings.CutPrefix(l, "note "); ok {
			out = append(out, n)
		}
	}
	return out
}
