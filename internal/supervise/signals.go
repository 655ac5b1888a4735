package supervise

import (
	"os"
	"os/signal"
)

// Signals are the signals lens subscribed to for the command. Subscribe
// with [Notify] as lens's first instruction: what arrives before the
// command starts is queued and passed on once it runs, so nothing is lost
// in the start-up window and nothing kills lens early.
type Signals struct {
	c chan os.Signal
}

// signalQueue is how many signals can wait for the command to start (or
// for the relay to read them) before the runtime drops more.
const signalQueue = 256

// Notify subscribes to every signal lens passes on or acts on: the
// catchable ones a sender may mean for the command (SIGHUP, SIGINT,
// SIGQUIT, SIGABRT, SIGUSR1, SIGUSR2, SIGALRM, SIGTERM, SIGWINCH, SIGIO,
// SIGPWR, SIGTSTP, SIGCONT and the real-time signals, where the system has
// them), SIGCHLD (to reap) and SIGPIPE (so that lens's own writes to a
// closed pipe fail with EPIPE instead of killing lens). Handlers are reset
// in the command when it starts, so it gets the default dispositions.
//
// A signal that lens was started with ignored and that the Go runtime left
// ignored (SIGHUP and SIGINT: nohup, a shell's background job) stays
// ignored, in lens and in the command, and is not subscribed. The runtime
// replaces the other inherited SIG_IGN dispositions with its own handler
// before lens's first instruction, so the command gets those at their
// defaults (docs/exec.md).
func Notify() *Signals {
	s := &Signals{c: make(chan os.Signal, signalQueue)}
	var subs []os.Signal
	for _, sig := range subscribed() {
		if !signal.Ignored(sig) {
			subs = append(subs, sig)
		}
	}
	signal.Notify(s.c, subs...)
	return s
}

// Stop ends the subscription.
func (s *Signals) Stop() {
	if s != nil {
		signal.Stop(s.c)
	}
}
