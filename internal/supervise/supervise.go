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

// Mode says how the signals lens receives reach the command. The rules,
// and which sender each mode serves, are in docs/exec.md#signals.
type Mode int

const (
	// ModeAuto picks the mode from where lens runs: see [ResolveMode].
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
	// a step, or the task's process group).
	ModeDirect
	// ModeAside steps lens aside: lens moves itself into a process group
	// of its own and starts the command in the group lens was started in,
	// never touching the terminal. A terminal's or a group's signals reach
	// the command (and its children) as they would without lens, and never
	// lens; every signal lens receives was sent to lens's pid, and is
	// passed on to the command's process, once.
	ModeAside
)

// String returns the mode's flag value: auto, relay, direct or aside.
func (m Mode) String() string {
	switch m {
	case ModeAuto:
		return "auto"
	case ModeRelay:
		return "relay"
	case ModeDirect:
		return "direct"
	case ModeAside:
		return "aside"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode parses a mode's flag value.
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{ModeAuto, ModeRelay, ModeDirect, ModeAside} {
		if s == m.String() {
			return m, nil
		}
	}
	return ModeAuto, fmt.Errorf("unknown signal mode %q (auto, relay, direct or aside)", s)
}

// Place is where lens runs, as far as the senders of signals go.
type Place struct {
	// PID1 is true when lens is PID 1 of its PID namespace (a container's
	// entrypoint).
	PID1 bool
	// Leader is true when lens leads its process group (a shell's job,
	// the batch script's process, an srun task's first process).
	Leader bool
	// SlurmJob is true inside a Slurm job (SLURM_JOB_ID is set).
	SlurmJob bool
	// SlurmStep is true inside a Slurm job step other than the batch step
	// (SLURM_STEP_ID is set: an srun task or one of its descendants).
	SlurmStep bool
}

// SlurmStepIDEnv is the step id Slurm sets for the tasks of a step (srun);
// the batch script has none.
const SlurmStepIDEnv = "SLURM_STEP_ID"

// Locate returns lens's place: the Slurm job and step from env, PID 1 and
// the process group from the running process.
func Locate(env environ.Lookuper) Place {
	pl := here()
	e := environ.Or(env)
	if v, _ := e.LookupEnv(process.SlurmJobIDEnv); v != "" {
		pl.SlurmJob = true
		if v, _ := e.LookupEnv(SlurmStepIDEnv); v != "" {
			pl.SlurmStep = true
		}
	}
	return pl
}

// ResolveMode returns m, or for [ModeAuto] the mode the place calls for:
//
//   - [ModeDirect] in a Slurm step: slurmstepd signals every process of the
//     step (proctrack/cgroup, linuxproc) or the task's process group
//     (proctrack/pgid), the command included;
//   - [ModeRelay] as PID 1 (the runtime signals PID 1 alone) or as the
//     leader of lens's process group (lens cannot leave it);
//   - [ModeAside] everywhere else.
func ResolveMode(m Mode, at Place) Mode {
	switch {
	case m != ModeAuto:
		return m
	case at.SlurmStep:
		return ModeDirect
	case at.PID1, at.Leader:
		return ModeRelay
	}
	return ModeAside
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
	// which is what in-process tests need; ModeAside then changes no
	// process group (it is ModeDirect).
	Signals *Signals
	// Slurm is true inside a Slurm job; it only decides which notes are
	// said (Place.SlurmJob).
	Slurm bool
	// Note is called, at most once for each kind, with a line that says a
	// signal may not have reached the command exactly once (nil: none).
	Note func(line string)
}

// Exit is how the command ended.
type Exit struct {
	// Code is the exit code when the command exited, else -1.
	Code int
	// Signal is the signal that killed the command, else 0.
	Signal syscall.Signal
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
