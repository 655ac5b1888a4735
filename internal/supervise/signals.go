package supervise

import (
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

// Signals are the signals lens subscribed to for the command. Subscribe
// with [Notify] as lens's first instruction: what arrives before the
// command starts is queued and passed on once it runs, so nothing is lost
// in the start-up window and nothing kills lens early.
type Signals struct {
	c chan os.Signal
	// ignored are the signals lens was started with ignored that the Go
	// runtime left ignored (SIGHUP, SIGINT, and SIGTSTP, SIGTTIN and
	// SIGCONT, for which it installs no handler of its own).
	ignored []os.Signal
	// quiet are the signals lens ignores while it runs and catches while
	// it forks the command (ignoreWhileRunning: SIGTTOU), less those it
	// was started with ignored.
	quiet []os.Signal
	// notified: made by Notify, the subscription of lens's process (not a
	// queue of an in-process test), whose dispositions lens may change.
	notified bool
}

// signalQueue is how many signals can wait for the command to start (or
// for the relay to read them) before the runtime drops more.
const signalQueue = 256

// Notify subscribes to every signal lens passes on or acts on: the
// catchable ones a sender may mean for the command (on Linux every signal
// 1 to 64 that os/signal can receive but SIGCHLD, SIGPIPE, SIGTTOU and
// SIGURG: docs/exec.md#signal-fates), SIGCHLD (to reap) and SIGPIPE (so
// that lens's own writes to a closed pipe fail with EPIPE instead of
// killing lens). Handlers are reset in the command when it starts, so it
// gets the default dispositions. SIGTTOU is ignored from here on but while
// the command is forked (ignoreWhileRunning).
//
// A signal that lens was started with ignored and that the Go runtime left
// ignored (SIGHUP and SIGINT: nohup, a shell's background job; SIGTSTP and
// SIGCONT) is subscribed too, so that one sent to lens's pid reaches a command that
// installed its own handler; the command starts with it ignored, as it
// would without lens. The runtime replaces the other inherited SIG_IGN
// dispositions with its own handler before lens's first instruction, so
// the command gets those at their defaults (docs/exec.md).
func Notify() *Signals {
	s := &Signals{c: make(chan os.Signal, signalQueue), notified: true}
	subs := subscribed()
	ign := inheritedIgnored()
	wasIgnored := func(sig os.Signal) bool {
		n, ok := sig.(syscall.Signal)
		return ok && ign&(1<<(n-1)) != 0 || signal.Ignored(sig)
	}
	for _, sig := range subs {
		if wasIgnored(sig) {
			s.ignored = append(s.ignored, sig)
		}
	}
	for _, sig := range ignoreWhileRunning {
		if !wasIgnored(sig) {
			s.quiet = append(s.quiet, sig)
		}
	}
	signal.Notify(s.c, subs...)
	if len(s.quiet) > 0 {
		signal.Ignore(s.quiet...)
	}
	return s
}

// Stop ends the subscription.
func (s *Signals) Stop() {
	if s != nil {
		signal.Stop(s.c)
	}
}

// hold ignores again the signals lens was started with ignored, so that a
// command started now inherits them ignored, and catches those lens
// ignores while it runs (SIGTTOU), so that the command starts with them
// at their defaults; release undoes both. What lens was started with
// ignored and arrives in between is discarded, as the command, ignoring
// it until it installs its own handler, would discard it without lens; a
// SIGTTOU is read and not passed on.
func (s *Signals) hold() {
	if s == nil {
		return
	}
	if len(s.ignored) > 0 {
		signal.Ignore(s.ignored...)
	}
	if len(s.quiet) > 0 {
		signal.Notify(s.c, s.quiet...)
	}
}

func (s *Signals) release() {
	if s == nil {
		return
	}
	if len(s.ignored) > 0 {
		signal.Notify(s.c, s.ignored...)
	}
	if len(s.quiet) > 0 {
		signal.Ignore(s.quiet...)
	}
}

// wasIgnored reports whether lens was started with sig ignored.
func (s *Signals) wasIgnored(sig syscall.Signal) bool {
	if s == nil {
		return false
	}
	for _, i := range s.ignored {
		if i == sig {
			return true
		}
	}
	return false
}

// sigName is the signal's name as kill -l spells it ("SIGTERM",
// "SIGRTMIN+1"), or "signal N".
func sigName(s syscall.Signal) string {
	if n, ok := sigNames[s]; ok {
		return n
	}
	return "signal " + strconv.Itoa(int(s))
}
