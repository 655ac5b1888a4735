package supervise

import (
	"errors"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/nemolens/lens-go/internal/bounded"
	"github.com/nemolens/lens-go/internal/usage"
)

// Process is a started command.
type Process struct {
	proc *os.Process
	pid  int
	path string
	mode Mode
	pid1 bool
	// pgid is the command's process group (its pid in ModeRelay, the group
	// lens was started in for ModeAside).
	pgid int
	// slurm: inside a Slurm job (which notes are said).
	slurm bool
	// note says a line once for each kind (notes).
	note  func(string)
	notes sync.Map
	// tty is the descriptor of the terminal whose foreground lens handed to
	// the command, or -1.
	tty int

	sigs *Signals
	// preStart is how many signals were queued right before the fork of
	// the command: they arrived before it existed, so they are passed on
	// in every mode.
	preStart int

	chld     chan struct{} // SIGCHLD seen: reap
	reapAll  chan struct{} // closed by ReapOrphans
	reapOnce sync.Once

	stopped atomic.Bool // lens stopped itself after the command stopped
	// inGroup: in ModeAside, lens is back in the command's group while the
	// command is stopped, so that a shell's SIGCONT to the group continues
	// lens too; what lens receives meanwhile was sent to that group.
	inGroup atomic.Bool

	done        chan struct{} // closed when the command has been reaped
	exit        Exit
	interrupted chan struct{} // closed by a stop request after the exit
	intOnce     sync.Once
	intBy       syscall.Signal // the signal that closed interrupted
	closed      chan struct{}
	closeOnce   sync.Once
	relayDone   chan struct{}
}

// Start starts the command. It returns a *StartError when the command
// cannot be started; the error wraps the execve(2) errno (E2BIG among
// them).
//
// The command is started by a thread that stays alive, locked, until the
// command has exited: the parent-death signal (SIGKILL) fires when lens
// dies, never before.
func Start(c *Command) (*Process, error) {
	p := &Process{
		mode:        c.Mode,
		pid1:        os.Getpid() == 1,
		tty:         -1,
		sigs:        c.Signals,
		slurm:       c.Slurm,
		note:        c.Note,
		chld:        make(chan struct{}, 1),
		reapAll:     make(chan struct{}),
		done:        make(chan struct{}),
		interrupted: make(chan struct{}),
		closed:      make(chan struct{}),
		relayDone:   make(chan struct{}),
	}
	if p.mode == ModeAuto {
		p.mode = ModeRelay
	}
	switch {
	case p.mode == ModeAside && p.pid1:
		// The runtime signals PID 1 alone: nobody aims at its group.
		p.mode = ModeRelay
	case p.mode == ModeAside && p.sigs == nil:
		// Nothing to pass on (in-process tests): lens stays where it is.
		p.mode = ModeDirect
	}
	sys := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	switch p.mode {
	case ModeRelay:
		sys.Setpgid = true
		if fd, ok := foregroundTerminal(c.Stdin, c.Stdout, c.Stderr); ok {
			sys.Foreground, sys.Ctty = true, fd
			p.tty = fd
		}
	case ModeAside:
		// The command joins the group lens was started in; lens leaves it
		// right before the fork (below).
		sys.Setpgid, sys.Pgid = true, syscall.Getpgrp()
		p.pgid = sys.Pgid
	}
	attr := &os.ProcAttr{Env: c.Env, Files: []*os.File{c.Stdin, c.Stdout, c.Stderr}, Sys: sys}

	res := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine, after the
		// command has been reaped.
		runtime.LockOSThread()
		if p.mode == ModeAside && syscall.Setpgid(0, 0) != nil {
			// lens leads a session (it would lead its group too): stay.
			p.mode, sys.Setpgid = ModeDirect, false
		}
		// The signals lens was started with ignored are ignored again while
		// the command is forked, so that it inherits them ignored.
		p.sigs.hold()
		proc, path, err := lookupStart(c.Args, c.Env, func(file string, argv []string) (*os.Process, error) {
			// Counted right before the fork: a signal sent to lens's
			// process group after it reaches the command itself, and
			// os.StartProcess returns only after the command's exec.
			if p.sigs != nil {
				p.preStart = len(p.sigs.c)
			}
			proc, err := os.StartProcess(file, argv, attr)
			if p.mode == ModeAside && sys.Setpgid && errors.Is(err, syscall.EPERM) {
				// The group lens left is gone (lens was its last process):
				// the command stays in lens's new group.
				sys.Setpgid = false
				p.pgid = syscall.Getpgrp()
				proc, err = os.StartProcess(file, argv, attr)
			}
			return proc, err
		})
		p.sigs.release()
		if err == nil && p.mode == ModeDirect && p.sigs != nil && p.sigs.notified {
			// What reaches lens reached the command too: the signals
			// lens cannot catch must not end it (docs/exec.md#signal-fates).
			ignoreUncatchable()
		}
		if err != nil && p.mode == ModeAside && sys.Setpgid {
			_ = syscall.Setpgid(0, p.pgid) // back where lens started
		}
		if err == nil {
			// Set before the wait loop and the relay read them.
			p.proc, p.path, p.pid = proc, path, proc.Pid
			switch p.mode {
			case ModeRelay:
				p.pgid = p.pid
			case ModeDirect:
				p.pgid = syscall.Getpgrp()
			}
		}
		res <- err
		if err == nil {
			p.wait(proc.Pid)
		}
	}()
	if err := <-res; err != nil {
		close(p.relayDone)
		return nil, err
	}
	if p.sigs != nil {
		go p.relay()
	} else {
		close(p.relayDone)
	}
	return p, nil
}

// Pid is the command's process id.
func (p *Process) Pid() int { return p.pid }

// Path is the file that was run (the PATH entry found, or /bin/sh for a
// file without "#!").
func (p *Process) Path() string { return p.path }

// Mode is the signal mode in force.
func (p *Process) Mode() Mode { return p.mode }

// ReapOrphans lets lens, as PID 1, reap every child and not only the
// command. Call it once lens's own helper processes (the GPU probe) have
// been waited for: before, only the command is reaped.
func (p *Process) ReapOrphans() { p.reapOnce.Do(func() { close(p.reapAll) }) }

// Close ends the relay of signals; call it when lens is about to exit.
func (p *Process) Close() {
	p.closeOnce.Do(func() { close(p.closed) })
	<-p.relayDone
	<-p.done
	_ = p.proc.Release()
}

// wait reaps the command (and, as PID 1 once ReapOrphans was called, every
// orphan) and follows its job-control stops. It runs on the thread that
// started the command.
func (p *Process) wait(pid int) {
	defer close(p.done)
	const opts = syscall.WUNTRACED | syscall.WCONTINUED
	if !p.pid1 || p.sigs == nil {
		for {
			var ws syscall.WaitStatus
			var ru syscall.Rusage
			_, err := syscall.Wait4(pid, &ws, opts, &ru)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil {
				p.exit = Exit{Code: -1, Signal: syscall.SIGKILL}
				return
			}
			if p.status(ws, &ru) {
				return
			}
		}
	}
	// PID 1: driven by SIGCHLD, so that the target can widen to every
	// child once lens's own helpers are done.
	reapAll := p.reapAll
	target := pid
	for {
		for {
			var ws syscall.WaitStatus
			var ru syscall.Rusage
			got, err := syscall.Wait4(target, &ws, opts|syscall.WNOHANG, &ru)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil || got <= 0 {
				break
			}
			if got == pid && p.status(ws, &ru) {
				return
			}
			// else: an orphan, reaped.
		}
		select {
		case <-p.chld:
		case <-reapAll:
			reapAll, target = nil, -1
		}
	}
}

// status handles one wait status of the command, and the resource usage
// the same wait4 gave; it reports whether the command has ended.
func (p *Process) status(ws syscall.WaitStatus, ru *syscall.Rusage) bool {
	switch {
	case ws.Exited():
		p.exit = Exit{Code: ws.ExitStatus(), Usage: ru}
	case ws.Signaled():
		p.exit = Exit{Code: -1, Signal: ws.Signal(), Usage: ru}
	case ws.Stopped():
		// A job-control stop of the command (a terminal's Ctrl-Z, a
		// background read or write, SIGTSTP) stops lens too, so that
		// whoever watches lens (a shell) sees the job stopped. PID 1
		// cannot be stopped.
		switch ws.StopSignal() {
		case syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU:
			if !p.pid1 {
				if p.mode == ModeAside {
					// Back in the command's group, so that the shell's
					// SIGCONT to the job (fg, bg) continues lens too.
					p.inGroup.Store(true)
					_ = syscall.Setpgid(0, p.pgid)
				}
				p.stopped.Store(true)
				_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
			}
		}
		return false
	default:
		return false
	}
	p.reclaimTerminal()
	return true
}

// relay passes lens's signals on as the mode says, until Close.
func (p *Process) relay() {
	defer close(p.relayDone)
	pre := p.preStart
	// In ModeDirect the signal that killed the command reached lens too,
	// and may be read only after the exit: that one delivery is not a
	// request to stop.
	skip, skipSet := syscall.Signal(0), false
	for {
		var sig os.Signal
		select {
		case sig = <-p.sigs.c:
		case <-p.closed:
			return
		}
		s, _ := sig.(syscall.Signal)
		early := pre > 0
		if early {
			pre--
		}
		switch s {
		case syscall.SIGCHLD:
			select {
			case p.chld <- struct{}{}:
			default:
			}
			continue
		case syscall.SIGPIPE:
			continue // lens's own write to a closed pipe
		case syscall.SIGTTOU:
			continue // caught while the command was forked: lens's own, or lost
		}
		if p.reaped() {
			<-p.done // set by the wait loop right after the reap
			// The command has exited: a request to stop ends lens's
			// remaining work.
			if !skipSet {
				skipSet = true
				if p.mode == ModeDirect {
					skip = p.exit.Signal
				}
			}
			if s == skip {
				skip = 0
				continue
			}
			p.interrupt(s)
			continue
		}
		if s == syscall.SIGCONT && p.stopped.Swap(false) {
			p.continued()
			continue
		}
		switch {
		case early && p.sigs.wasIgnored(s):
			// Sent before the command ran, which would have ignored it.
			continue
		case early, p.mode == ModeRelay:
		case p.mode == ModeAside && !p.inGroup.Load():
		case p.mode == ModeAside:
			p.say("stopped", sigName(s)+" arrived while the command was stopped and lens was in its process group: it is taken as sent to that group and not passed on (docs/exec.md#signals)")
			continue
		default: // ModeDirect
			p.say("direct", sigName(s)+" was not passed on: with --signals direct (the default in a Slurm step) the sender signals the command itself, and a signal sent to lens's pid alone does not reach it (docs/exec.md#signals)")
			continue
		}
		if p.slurm && p.mode != ModeDirect && (s == syscall.SIGTERM || s == syscall.SIGCONT) {
			p.say("twice", "passed "+sigName(s)+" on to the command; if Slurm sent it to every process of the job as well (scancel, the time limit, preemption), the command got it twice (docs/exec.md#signals)")
		}
		if errors.Is(p.proc.Signal(s), os.ErrProcessDone) {
			// Reaped in the meantime: the signal came after the exit.
			<-p.done
			p.interrupt(s)
		}
	}
}

// continued handles lens's SIGCONT after lens stopped with the command:
// the command's group continues too (ModeRelay), or lens leaves the
// command's group again and continues the command when lens alone was
// continued (ModeAside).
func (p *Process) continued() {
	switch p.mode {
	case ModeRelay:
		// In the foreground again, the command's group gets the terminal
		// back.
		p.handTerminal()
		_ = syscall.Kill(-p.pgid, syscall.SIGCONT)
	case ModeAside:
		_ = syscall.Setpgid(0, 0)
		p.inGroup.Store(false)
		if procState(p.pid) == 'T' {
			// A SIGCONT to the group would have continued the command
			// before lens ran: this one was sent to lens's pid alone.
			_ = syscall.Kill(p.pid, syscall.SIGCONT)
		}
	}
}

// say calls the note for kind once.
func (p *Process) say(kind, line string) {
	if p.note == nil {
		return
	}
	if _, seen := p.notes.LoadOrStore(kind, true); !seen {
		p.note(line)
	}
}

// procState is the state letter of /proc/PID/stat, or 0.
func procState(pid int) byte {
	b, err := bounded.ReadFile("/proc/"+strconv.Itoa(pid)+"/stat", 4096)
	if err != nil {
		return 0
	}
	f := usage.StatFields(b)
	if len(f) == 0 {
		return 0
	}
	return f[0][0]
}

// reaped reports whether the command has been reaped: the wait loop has
// finished, or the command's pid no longer exists (the loop is about to
// finish: its reap came first).
func (p *Process) reaped() bool {
	select {
	case <-p.done:
		return true
	default:
	}
	return errors.Is(p.proc.Signal(syscall.Signal(0)), os.ErrProcessDone)
}

// interrupt handles a signal that arrived after the command exited: a
// request to stop ends lens's remaining work.
func (p *Process) interrupt(s syscall.Signal) {
	if p.sigs.wasIgnored(s) {
		return // lens was started with it ignored (nohup)
	}
	switch s {
	case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT:
		p.intOnce.Do(func() { p.intBy = s; close(p.interrupted) })
	}
}

// foregroundTerminal returns the first of the files that is a terminal
// whose foreground process group is lens's.
func foregroundTerminal(files ...*os.File) (int, bool) {
	own := syscall.Getpgrp()
	for _, f := range files {
		if f == nil {
			continue
		}
		fd := int(f.Fd())
		if pg, err := tcgetpgrp(fd); err == nil && pg == own {
			return fd, true
		}
	}
	return -1, false
}

func tcgetpgrp(fd int) (int, error) {
	var pg int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pg))); e != 0 {
		return 0, e
	}
	return int(pg), nil
}

func tcsetpgrp(fd, pg int) error {
	p := int32(pg)
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCSPGRP, uintptr(unsafe.Pointer(&p))); e != 0 {
		return e
	}
	return nil
}

// handTerminal gives the terminal's foreground to the command's group when
// lens's group has it (lens was continued in the foreground).
func (p *Process) handTerminal() {
	if p.tty < 0 {
		return
	}
	if pg, err := tcgetpgrp(p.tty); err == nil && pg == syscall.Getpgrp() {
		_ = tcsetpgrp(p.tty, p.pgid)
	}
}

// reclaimTerminal takes the terminal's foreground back for lens's group
// when the command's group still holds it after the command exited, so
// that lens's last messages are written from the foreground. SIGTTOU is
// ignored meanwhile: lens asks from the background. lens exec (Signals
// set) ignores it anyway; without Signals it is reset after.
func (p *Process) reclaimTerminal() {
	if p.tty < 0 {
		return
	}
	if pg, err := tcgetpgrp(p.tty); err != nil || pg != p.pgid {
		return
	}
	signal.Ignore(syscall.SIGTTOU)
	_ = tcsetpgrp(p.tty, syscall.Getpgrp())
	if p.sigs == nil {
		signal.Reset(syscall.SIGTTOU)
	}
}

// here is lens's process: PID 1, the leader of its process group.
func here() Place {
	pid := os.Getpid()
	return Place{PID1: pid == 1, Leader: syscall.Getpgrp() == pid}
}
