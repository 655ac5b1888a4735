package supervise

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/process"
)

// Mode says how the signals lens receives reach the command.
type Mode int

const (
	// ModeAuto is ModeDirect inside a Slurm job (SLURM_JOB_ID is set) and
	// ModeRelay everywhere else. See [ResolveMode].
	ModeAuto Mode = iota
	// ModeRelay runs the command as the leader of its own process group,
	// in the foreground of lens's terminal when lens is, and passes every
	// signal lens receives on to the command's process, once (tini's way).
	// A signal to lens's process group reaches lens alone and is passed on;
	// a terminal's signals reach the command's group directly.
	ModeRelay
	// ModeDirect leaves the command in lens's process group and passes on
	// only the signals that arrived before the command started: the
	// senders reach the command themselves (Slurm signals every process of
	// a step, or the task's process group; a process group signal and a
	// terminal's reach both lens and the command).
	ModeDirect
)

// String returns the mode's flag value: auto, relay or direct.
func (m Mode) String() string {
	switch m {
	case ModeAuto:
		return "auto"
	case ModeRelay:
		return "relay"
	case ModeDirect:
		return "direct"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode parses a mode's flag value.
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{ModeAuto, ModeRelay, ModeDirect} {
		if s == m.String() {
			return m, nil
		}
	}
	return ModeAuto, fmt.Errorf("unknown signal mode %q (auto, relay or direct)", s)
}

// ResolveMode returns m, or for [ModeAuto] the mode env calls for:
// [ModeDirect] when SLURM_JOB_ID is set and not empty (Slurm signals the
// processes of a step itself: srun's forwarding, --signal, scancel, the
// time limit), else [ModeRelay].
func ResolveMode(m Mode, env environ.Lookuper) Mode {
	if m != ModeAuto {
		return m
	}
	if v, _ := environ.Or(env).LookupEnv(process.SlurmJobIDEnv); v != "" {
		return ModeDirect
	}
	return ModeRelay
}

// Command is what [Start] runs.
type Command struct {
	// Args is the argument vector; Args[0] is looked up as execvp(3) does.
	Args []string
	// Env is the command's environment; PATH is read from it.
	Env []string
	// Stdin, Stdout and Stderr are the command's standard files; nil
	// leaves that descriptor closed in the command.
	Stdin, Stdout, Stderr *os.File
	// Mode is how signals reach the command (ModeAuto: ModeRelay; resolve
	// it first with ResolveMode).
	Mode Mode
	// Signals are lens's subscribed signals ([Notify]); nil relays none,
	// which is what in-process tests need.
	Signals *Signals
}

// Exit is how the command ended.
type Exit struct {
	// Code is the exit code when the command exited, else -1.
	Code int
	// Signal is the signal that killed the command, else 0.
	Signal syscall.Signal
	// Usage is the command's resource usage from the wait that reaped it
	// (wait4(2): the command and the descendants it waited for), or nil
	// when the platform or the wait gave none.
	Usage *syscall.Rusage
}

// Status is the exit status lens reports: the code, or 128+N when signal
// N killed the command (the shell's convention).
func (e Exit) Status() int {
	if e.Signal != 0 {
		return 128 + int(e.Signal)
	}
	return e.Code
}

// String describes the exit for a span status: "exit status 3",
// "killed by signal terminated".
func (e Exit) String() string {
	if e.Signal != 0 {
		return "killed by signal " + e.Signal.String()
	}
	return "exit status " + strconv.Itoa(e.Code)
}

// StartError is a command that could not be started.
type StartError struct {
	// Name is the command as given (Args[0]).
	Name string
	// Searched is true when Name was looked up in PATH.
	Searched bool
	// Err is the execve(2) error (wrapped in *os.PathError or not).
	Err error
}

func (e *StartError) Error() string {
	if e.Searched && errors.Is(e.Err, syscall.ENOENT) {
		return e.Name + ": command not found"
	}
	return e.Name + ": " + errnoText(e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// Status is the shell's status for the failure: 127 when nothing was
// found, 126 when something was found and could not be run.
func (e *StartError) Status() int {
	if errors.Is(e.Err, syscall.ENOENT) {
		return 127
	}
	return 126
}
