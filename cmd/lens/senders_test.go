//go:build linux

package main

// The senders of issue 25 that sit above a training process, each run bare
// and under lens exec: a launcher that keeps its children in its own
// process group (a script, Python's Popen, torch 1.13's agent), a terminal
// with several lens exec in its foreground group, a PID namespace's PID 1
// with and without a Slurm job's environment, and the process state a
// launcher hands down (blocked and ignored signals). docs/exec.md#signals
// has the rules; the Slurm batch signal runs against the real Slurm in
// e2e/batchsignal_slurm_test.go.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sender is one sender of a signal: where it aims and how the command is
// placed below it.
type sender struct {
	name string
	// leader: the scenario's process (lens, or the bare command) leads its
	// process group (a shell's job, the batch script); else it is the
	// child of a launcher (observer spawn 1) that leads the group.
	leader bool
	// group: the signal goes to the scenario's process group; else to the
	// pid of lens (the bare command's pid).
	group bool
	// inner: the command is itself a launcher of that many observers
	// (torchrun around its workers); 0: the command is the observer.
	inner int
	// state is what a launcher sets before lens starts (observer with …).
	state []string
	sig   syscall.Signal
	count string
	env   map[string]string
	flags []string
	// note is the start of the one line lens must say on stderr (wrapped);
	// without it lens says nothing.
	note string
}

// argv is the scenario's command line.
func (s sender) argv(obs string, wrapped bool) []string {
	var argv []string
	if !s.leader {
		argv = []string{obs, "spawn", "1"}
	}
	if s.state != nil {
		argv = append(append(append(argv, obs, "with"), s.state...), "--")
	}
	if wrapped {
		argv = append(append(append(argv, lensBin, "exec"), s.flags...), "--")
	}
	if s.inner > 0 {
		argv = append(argv, obs, "spawn", strconv.Itoa(s.inner))
	}
	return append(argv, obs, "signals")
}

// observers is how many observers the scenario runs.
func (s sender) observers() int { return max(1, s.inner) }

// readyPIDs waits for n "ready PID" lines and returns the PIDs.
func (r *running) readyPIDs(n int) []int {
	r.t.Helper()
	var pids []int
	for len(pids) < n {
		pid, err := strconv.Atoi(strings.TrimPrefix(r.next("ready "), "ready "))
		if err != nil {
			r.t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// childOf returns the only child of pid (of any of its threads), failing
// when it has none or several.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	var kids []int
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		for f := range strings.FieldsSeq(string(b)) {
			n, _ := strconv.Atoi(f)
			kids = append(kids, n)
		}
	}
	if len(kids) != 1 {
		t.Fatalf("pid %d has children %v, want one", pid, kids)
	}
	return kids[0]
}

// countsOf waits for n "counts" lines and returns them sorted.
func (r *running) countsOf(n int) []string {
	r.t.Helper()
	var out []string
	for range n {
		out = append(out, r.next("counts "))
	}
	slices.Sort(out)
	return out
}

// TestTransparentSenders: each sender's signal reaches the command (every
// observer) exactly once, as it does without lens: a process-group signal
// and a signal to lens's pid, with lens leading its group or under a
// launcher that leads it, inside and outside a Slurm job's environment,
// with SIGINT ignored by the launcher and the command handling it, and
// with the command's own children in its group.
func TestTransparentSenders(t *testing.T) {
	t.Parallel()
	job := map[string]string{"SLURM_JOB_ID": "42"}
	step := map[string]string{"SLURM_JOB_ID": "42", "SLURM_STEP_ID": "0"}
	ignoreINT := []string{"ignore=2"}
	for _, tc := range []sender{
		// A launcher's child (Popen, a script's child, torch 1.13's worker).
		{name: "launched/group/rt", group: true, sig: rtCounted, count: "RT"},
		{name: "launched/group/USR1", group: true, sig: syscall.SIGUSR1, count: "USR1"},
		{name: "launched/pid/rt", sig: rtCounted, count: "RT"},
		{name: "launched/pid/TERM", sig: syscall.SIGTERM, count: "TERM"},
		{name: "launched/pid/rtmax", sig: rtMax, count: "RTMAX"},
		// lens wraps a launcher: the group signal reaches its children.
		{name: "launched/group/children", group: true, inner: 2, sig: rtCounted, count: "RT"},
		{name: "leader/group/children", leader: true, group: true, inner: 2, sig: rtCounted, count: "RT",
			flags: []string{"--signals", "direct"}, note: "lens exec: SIGRTMIN+1 was not passed on: with --signals direct"},
		// A batch script's `lens exec … &` (trap 'kill -USR1 $PID' USR1) and
		// a supervisor's kill inside a job.
		{name: "slurm-job/launched/pid/USR1", sig: syscall.SIGUSR1, count: "USR1", env: job},
		{name: "slurm-job/launched/group/USR1", group: true, sig: syscall.SIGUSR1, count: "USR1", env: job},
		// `exec lens exec` as the batch script: scancel --batch's kill of
		// the script's pid, and --full's killpg of its group.
		{name: "slurm-job/leader/pid/USR1", leader: true, sig: syscall.SIGUSR1, count: "USR1", env: job},
		{name: "slurm-job/leader/group/USR1", leader: true, group: true, sig: syscall.SIGUSR1, count: "USR1", env: job},
		// An srun task's process group (proctrack/pgid signals it).
		// Slurm's end of the job signals every process of the batch step:
		// lens cannot tell it from this one, and says so.
		{name: "slurm-job/leader/pid/TERM", leader: true, sig: syscall.SIGTERM, count: "TERM", env: job,
			note: "lens exec: passed SIGTERM on to the command; if Slurm sent it to every process"},
		// An srun task's process group (proctrack/pgid signals it); lens
		// passes nothing on, and says so.
		{name: "slurm-step/leader/group/rt", leader: true, group: true, sig: rtCounted, count: "RT", env: step,
			note: "lens exec: SIGRTMIN+1 was not passed on: with --signals direct"},
		{name: "slurm-step/launched/group/rt", group: true, sig: rtCounted, count: "RT", env: step,
			note: "lens exec: SIGRTMIN+1 was not passed on: with --signals direct"},
		// Started with SIGINT ignored (a script's `cmd &`); the command
		// installs its own handler and gets what is sent to it.
		{name: "ignored-int/leader/pid/INT", leader: true, state: ignoreINT, sig: syscall.SIGINT, count: "INT"},
		{name: "ignored-int/launched/pid/INT", state: ignoreINT, sig: syscall.SIGINT, count: "INT"},
		{name: "ignored-int/launched/group/INT", group: true, state: ignoreINT, sig: syscall.SIGINT, count: "INT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obs := observer(t)
			var counts [2][]string
			for i, wrapped := range []bool{false, true} {
				r := scenario{env: tc.env, sys: &syscall.SysProcAttr{Setpgid: true}}.startArgv(t, tc.argv(obs, wrapped))
				pids := r.readyPIDs(tc.observers())
				target := r.pid()
				switch {
				case tc.group:
					target = -target
				case !tc.leader:
					target = childOf(t, r.pid()) // lens, or the bare command
				}
				if tc.state != nil {
					// lens subscribes again to what it was started with
					// ignored right after the command's exec: a signal
					// sent to it before is discarded (docs/exec.md), as it
					// would be by the command before its handler.
					notIgnored(t, childOrSelf(t, r, tc.leader), tc.sig)
				}
				for range rounds {
					send(t, target, tc.sig)
					for range pids {
						r.delivered(tc.sig)
					}
				}
				for _, pid := range pids {
					send(t, pid, rtEnd)
				}
				counts[i] = r.countsOf(len(pids))
				if st := r.status(); st != 0 {
					t.Errorf("wrapped=%v: status %d, want 0; stderr %q", wrapped, st, r.stderr)
				}
				for _, c := range counts[i] {
					if want := fmt.Sprintf(" %s=%d ", tc.count, rounds); !strings.Contains(" "+c+" ", want) {
						t.Errorf("wrapped=%v: %s, want%s; stderr %q", wrapped, c, want, r.stderr)
					}
				}
				if wrapped && (strings.Count(r.stderr.String(), "\n") != min(1, len(tc.note)) || !strings.HasPrefix(r.stderr.String(), tc.note)) {
					t.Errorf("lens's stderr %q, want one line starting %q, or nothing", r.stderr, tc.note)
				}
			}
			if !slices.Equal(counts[0], counts[1]) {
				t.Errorf("the command observed\n  bare:      %s\n  lens exec: %s", counts[0], counts[1])
			}
		})
	}
}

// startArgv starts argv as the scenario (argv[0] run as is).
func (s scenario) startArgv(t *testing.T, argv []string) *running {
	t.Helper()
	s.argv = argv
	return s.start(t)
}

// TestTransparentTerminalGroup: two lens exec in one foreground process
// group (torch 1.13's workers, two commands started by one script on a
// terminal): Ctrl-C reaches each command once, as without lens; none of
// them takes the terminal's foreground from the others.
func TestTransparentTerminalGroup(t *testing.T) {
	t.Parallel()
	obs := observer(t)
	var counts [2][]string
	for i, wrapped := range []bool{false, true} {
		master, slave := openPTY(t)
		argv := []string{obs, "spawn", "2", obs, "signals"}
		if wrapped {
			argv = []string{obs, "spawn", "2", lensBin, "exec", "--", obs, "signals"}
		}
		s := scenario{stdin: slave, sys: &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}}
		r := s.startArgv(t, argv)
		pids := r.readyPIDs(2)
		for range rounds {
			if _, err := master.Write([]byte{3}); err != nil { // ^C
				t.Fatal(err)
			}
			r.delivered(syscall.SIGINT)
			r.delivered(syscall.SIGINT)
		}
		for _, pid := range pids {
			send(t, pid, rtEnd)
		}
		counts[i] = r.countsOf(2)
		if st := r.status(); st != 0 {
			t.Errorf("wrapped=%v: status %d, want 0; stderr %q", wrapped, st, r.stderr)
		}
		for _, c := range counts[i] {
			if want := fmt.Sprintf(" INT=%d ", rounds); !strings.Contains(c, want) {
				t.Errorf("wrapped=%v: %s, want%s", wrapped, c, want)
			}
		}
	}
	if !slices.Equal(counts[0], counts[1]) {
		t.Errorf("the commands observed\n  bare:      %s\n  lens exec: %s", counts[0], counts[1])
	}
}

// needPIDNamespace skips (fails under CI) where unshare cannot make a PID
// namespace.
func needPIDNamespace(t *testing.T) string {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err == nil && os.Geteuid() != 0 {
		err = errors.New("not root")
	}
	if err == nil {
		err = exec.Command(unshare, "--pid", "--fork", "--mount-proc", "true").Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a PID namespace is needed (unshare --pid --fork --mount-proc as root): %v", err)
		}
		t.Skipf("skipping: no PID namespace: %v", err)
	}
	return unshare
}

// TestTransparentPID1Signals: a signal sent to a PID namespace's PID 1 (a
// container runtime's docker stop, a pod's deletion) reaches the command
// once, as it reaches the bare command as PID 1 — with a Slurm job's
// environment too (a container started from a batch script).
func TestTransparentPID1Signals(t *testing.T) {
	t.Parallel()
	unshare := needPIDNamespace(t)
	obs := observer(t)
	for _, tc := range []struct {
		name  string
		sig   syscall.Signal
		count string
		env   map[string]string
	}{
		{"TERM", syscall.SIGTERM, "TERM", nil},
		{"rt", rtCounted, "RT", nil},
		{"slurm-job/TERM", syscall.SIGTERM, "TERM", map[string]string{"SLURM_JOB_ID": "42"}},
		{"slurm-job/rt", rtCounted, "RT", map[string]string{"SLURM_JOB_ID": "42"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var counts [2]string
			for i, wrapped := range []bool{false, true} {
				argv := []string{unshare, "--pid", "--fork", "--mount-proc", obs, "signals"}
				if wrapped {
					argv = []string{unshare, "--pid", "--fork", "--mount-proc", lensBin, "exec", "--", obs, "signals"}
				}
				r := scenario{env: tc.env, sys: &syscall.SysProcAttr{Setpgid: true}}.startArgv(t, argv)
				r.ready()
				pid1 := childOf(t, r.pid()) // the namespace's PID 1, as this namespace numbers it
				command := pid1
				if wrapped {
					command = childOf(t, pid1)
				}
				for range rounds {
					send(t, pid1, tc.sig)
					r.delivered(tc.sig)
				}
				send(t, command, rtEnd)
				counts[i] = r.next("counts ")
				if st := r.status(); st != 0 {
					t.Errorf("wrapped=%v: status %d, want 0; stderr %q", wrapped, st, r.stderr)
				}
				if want := fmt.Sprintf(" %s=%d ", tc.count, rounds); !strings.Contains(" "+counts[i]+" ", want) {
					t.Errorf("wrapped=%v: %s, want%s; stderr %q", wrapped, counts[i], want, r.stderr)
				}
			}
			if counts[0] != counts[1] {
				t.Errorf("the command observed\n  bare:      %s\n  lens exec: %s", counts[0], counts[1])
			}
		})
	}
}

// The inherited process state lens cannot hand down, measured (Go 1.26,
// docs/exec.md#inherited-signal-state): the Go runtime unblocks these in
// every thread before lens's first instruction, so the command starts with
// them unblocked whatever lens inherited; and it replaces every inherited
// SIG_IGN but SIGHUP's, SIGINT's and the job-control signals' (SIGCONT,
// SIGTSTP, SIGTTIN, SIGTTOU) with its own handler, so the command starts
// with those at their defaults.
var (
	lostBlocked = sigset(1, 2, 3, 4, 5, 6, 7, 8, 11, 15, 16, 17, 23, 27, 31, 34)
	keptIgnored = sigset(1, 2, 18, 20, 21, 22)
)

func sigset(sigs ...int) uint64 {
	var m uint64
	for _, s := range sigs {
		m |= 1 << (s - 1)
	}
	return m
}

// sigLine reads the hexadecimal mask of a "NAME:" line of the observer's
// state report.
func sigLine(t *testing.T, report, name string) uint64 {
	t.Helper()
	for l := range strings.SplitSeq(report, "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatalf("no %s line in %q", name, report)
	return 0
}

// TestTransparentInherited: the command starts with the blocked and ignored
// signals of the bare command, except exactly the documented ones the Go
// runtime takes from lens before its first instruction.
func TestTransparentInherited(t *testing.T) {
	t.Parallel()
	obs := observer(t)
	for _, tc := range []struct {
		name  string
		state []string
	}{
		{"block-all", []string{"block=all"}},
		{"block-all-ignore-hup-int", []string{"block=all", "ignore=1,2"}},
		{"ignore-quit-term-usr1-tstp", []string{"ignore=3,15,10,20"}},
		{"ignore-hup-int", []string{"ignore=1,2"}},
		{"ignore-job-control", []string{"ignore=18,20,21,22"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var blk, ign [2]uint64
			for i, wrapped := range []bool{false, true} {
				argv := append(append([]string{obs, "with"}, tc.state...), "--")
				if wrapped {
					argv = append(argv, lensBin, "exec", "--")
				}
				argv = append(argv, obs, "state", "0")
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Env = cliEnv(nil)
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("wrapped=%v: %v", wrapped, err)
				}
				blk[i], ign[i] = sigLine(t, string(out), "SigBlk"), sigLine(t, string(out), "SigIgn")
			}
			if want := blk[0] &^ lostBlocked; blk[1] != want {
				t.Errorf("SigBlk: bare %016x, lens exec %016x, want %016x (bare less the documented %016x)", blk[0], blk[1], want, lostBlocked)
			}
			if want := ign[0] & keptIgnored; ign[1] != want {
				t.Errorf("SigIgn: bare %016x, lens exec %016x, want %016x (the documented ones kept)", ign[0], ign[1], want)
			}
		})
	}
}

// TestTransparentStopAside: under a launcher that leads the process group
// (a pipeline's later stage in an interactive shell, torch 1.13's
// workers), a terminal's Ctrl-Z (SIGTSTP to the group) stops the command,
// and lens with it, so that the job shows stopped; the shell's SIGCONT to
// the group (fg) continues both, and the command's signals still arrive
// once.
func TestTransparentStopAside(t *testing.T) {
	t.Parallel()
	obs := observer(t)
	for _, wrapped := range []bool{false, true} {
		tc := sender{group: true}
		r := scenario{sys: &syscall.SysProcAttr{Setpgid: true}}.startArgv(t, tc.argv(obs, wrapped))
		pid := r.readyPIDs(1)[0]
		child := childOf(t, r.pid())
		send(t, -r.pid(), syscall.SIGTSTP)
		waitState(t, pid, "T")
		waitState(t, child, "T")
		send(t, -r.pid(), syscall.SIGCONT)
		waitState(t, pid, "S")
		// lens is running again, and out of the command's group: a group
		// signal reaches the command once.
		deadline := time.Now().Add(guard)
		for st := procState(child); st != "S" || wrapped && procGroup(child) != child; st = procState(child) {
			if time.Now().After(deadline) {
				t.Fatalf("wrapped=%v: pid %d in state %q, group %d after SIGCONT", wrapped, child, st, procGroup(child))
			}
			time.Sleep(time.Millisecond)
		}
		for range rounds {
			send(t, -r.pid(), rtCounted)
			r.delivered(rtCounted)
		}
		send(t, pid, rtEnd)
		if c := r.next("counts "); !strings.Contains(c, fmt.Sprintf(" RT=%d ", rounds)) {
			t.Errorf("wrapped=%v: %s, want RT=%d", wrapped, c, rounds)
		}
		if st := r.status(); st != 0 {
			t.Errorf("wrapped=%v: status %d, want 0; stderr %q", wrapped, st, r.stderr)
		}
	}
}

// procGroup is the process group of /proc/PID/stat (0 when pid is gone).
func procGroup(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 3 {
		return 0
	}
	n, _ := strconv.Atoi(f[2])
	return n
}

// childOrSelf is the scenario's process when it leads its group, else the
// launcher's child.
func childOrSelf(t *testing.T, r *running, leader bool) int {
	if leader {
		return r.pid()
	}
	return childOf(t, r.pid())
}

// notIgnored waits until pid no longer ignores sig (SigIgn of
// /proc/PID/status), failing at the guard.
func notIgnored(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	for deadline := time.Now().Add(guard); ; time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			t.Fatal(err)
		}
		if sigLine(t, string(b), "SigIgn")&sigset(int(sig)) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still ignores %v", pid, sig)
		}
	}
}
