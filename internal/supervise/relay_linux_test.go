package supervise

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// guard fails a test that would otherwise hang on a regression; no
// passing run waits for it.
const guard = 2 * time.Minute

// startQueued starts args in mode with a private signal queue (no
// signal.Notify: the test plays lens's deliveries into it) holding early.
func startQueued(t *testing.T, mode Mode, args []string, early ...os.Signal) (*Process, *Signals) {
	t.Helper()
	sigs := &Signals{c: make(chan os.Signal, signalQueue)}
	for _, s := range early {
		sigs.c <- s
	}
	p, err := Start(&Command{Args: args, Env: []string{"PATH=/usr/bin:/bin"}, Mode: mode, Signals: sigs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { failFast(t); _ = syscall.Kill(p.Pid(), syscall.SIGKILL); p.Close() })
	return p, sigs
}

// waitExit waits for the command's exit, failing at the guard.
func waitExit(t *testing.T, p *Process) Exit {
	t.Helper()
	select {
	case <-p.done:
		return p.Wait()
	case <-time.After(guard):
		t.Fatalf("the command (pid %d) did not exit", p.Pid())
		return Exit{}
	case <-abort:
		t.Fatalf("the command (pid %d) has not exited, and another test failed (-failfast)", p.Pid())
		return Exit{}
	}
}

// interruptedBy waits for the end-of-flush request and returns the signal
// that made it.
func interruptedBy(t *testing.T, p *Process) syscall.Signal {
	t.Helper()
	select {
	case <-p.Interrupted():
		return p.intBy
	case <-time.After(guard):
		t.Fatal("no request to stop")
		return 0
	case <-abort:
		t.Fatal("no request to stop yet, and another test failed (-failfast)")
		return 0
	}
}

// TestKillingSignalNotAnInterrupt: in ModeDirect the signal that killed
// the command reached lens too (the sender signalled both); read after the
// exit, that one delivery does not cut lens's flush short, a second one
// does. In ModeRelay lens passed it on itself: any delivery after the exit
// is a request to stop.
func TestKillingSignalNotAnInterrupt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode Mode
		want syscall.Signal
	}{
		{ModeDirect, syscall.SIGHUP},
		{ModeRelay, syscall.SIGTERM},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			t.Parallel()
			p, sigs := startQueued(t, tc.mode, []string{"/bin/sh", "-c", "kill -TERM $$"})
			if e := waitExit(t, p); e.Signal != syscall.SIGTERM {
				t.Fatalf("exit %v, want killed by SIGTERM", e)
			}
			sigs.c <- syscall.SIGTERM
			sigs.c <- syscall.SIGHUP
			if got := interruptedBy(t, p); got != tc.want {
				t.Errorf("%v: the flush was cut short by %v, want %v", tc.mode, sigName(got), sigName(tc.want))
			}
		})
	}
}

// TestEarlySignalPassedOn: a signal that arrived before the command
// started is passed on once it runs, in every mode: the sender could not
// have reached the command.
func TestEarlySignalPassedOn(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{ModeDirect, ModeRelay} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			p, _ := startQueued(t, mode, []string{"/bin/sleep", "1000"}, syscall.SIGTERM)
			if e := waitExit(t, p); e.Signal != syscall.SIGTERM || e.Code != -1 {
				t.Errorf("exit %+v, want killed by SIGTERM, code -1", e)
			}
		})
	}
}

// TestInheritedIgnoredNotAnInterrupt: a signal lens was started with
// ignored (nohup's SIGHUP) does not cut the flush short.
func TestInheritedIgnoredNotAnInterrupt(t *testing.T) {
	t.Parallel()
	p, sigs := startQueued(t, ModeRelay, []string{"/bin/true"})
	sigs.ignored = []os.Signal{syscall.SIGHUP}
	if e := waitExit(t, p); e.Code != 0 {
		t.Fatalf("exit %v", e)
	}
	sigs.c <- syscall.SIGHUP
	sigs.c <- syscall.SIGTERM
	if got := interruptedBy(t, p); got != syscall.SIGTERM {
		t.Errorf("the flush was cut short by %v, want SIGTERM", sigName(got))
	}
}

func TestSigName(t *testing.T) {
	t.Parallel()
	for s, want := range map[syscall.Signal]string{
		syscall.SIGTERM: "SIGTERM", 34: "SIGRTMIN", 35: "SIGRTMIN+1", 64: "SIGRTMAX", syscall.SIGSEGV: "SIGSEGV", 65: "signal 65",
	} {
		if got := sigName(s); got != want {
			t.Errorf("sigName(%d) = %q, want %q", s, got, want)
		}
	}
}

// TestSignalsStop: Stop ends the subscription — a signal sent to lens
// after it no longer reaches the channel (SIGWINCH, subscribed by Notify,
// ignored by default) — and does nothing on nil Signals (no subscription:
// in-process use).
func TestSignalsStop(t *testing.T) {
	var none *Signals
	none.Stop()

	s := Notify()
	defer s.Stop()
	// probe receives SIGWINCH too: os/signal hands a signal to every
	// subscriber under one lock, which signal.Stop(probe) takes, so once
	// probe has it and Stop(probe) returns, s.c has it too if subscribed.
	winch := func() {
		probe := make(chan os.Signal, 1)
		signal.Notify(probe, syscall.SIGWINCH)
		if err := syscall.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
			t.Fatal(err)
		}
		select {
		case <-probe:
		case <-time.After(guard):
			t.Fatal("SIGWINCH sent to the test process did not arrive")
		}
		signal.Stop(probe)
	}
	winch()
	if got := drain(s.c); len(got) == 0 {
		t.Fatal("before Stop: SIGWINCH did not reach the subscription")
	}
	s.Stop()
	winch()
	if got := drain(s.c); len(got) != 0 {
		t.Errorf("after Stop the subscription still got %v", got)
	}
}

// drain returns what c holds now.
func drain(c chan os.Signal) []os.Signal {
	var out []os.Signal
	for {
		select {
		case s := <-c:
			out = append(out, s)
		default:
			return out
		}
	}
}
