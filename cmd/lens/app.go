package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/reckon"
	"github.com/nemolens/lens-go/internal/supervise"
	"github.com/nemolens/lens-go/internal/telemetry"
)

// app is one invocation of the lens command. Everything it touches outside
// the process's memory is injected, so tests run commands in-process and in
// parallel.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// env is the environment the command reads. For "lens exec" the child's
	// environment is env's Environ() []string when it has that method (as
	// environ.Map does) and os.Environ() otherwise.
	env environ.Lookuper
	// hostname is the host name probe; nil means os.Hostname.
	hostname func() (string, error)
	// signals are lens's subscribed signals for "lens exec" (main subscribes
	// first thing); nil relays none, which is what in-process tests need.
	signals *supervise.Signals
	// gpuCount is lens exec's GPU-count probe; nil means
	// detect.NvidiaSMIGPUCount.
	gpuCount func(ctx context.Context) (int, bool)
	// logger receives the records of the library packages lens calls where
	// they accept a logger; nil builds one on stderr (see newLogger).
	logger *slog.Logger
	// diag reports the OpenTelemetry SDK's problems through logger, once
	// each and without configuration values; main installs it as the
	// global error handler and internal logger.
	diag *telemetry.Diagnostics
	// dieBy is the signal that killed lens exec's command: main ends lens
	// with it after everything else (supervise.Die).
	dieBy syscall.Signal
	// sacct runs sacct for "lens reckon"; nil runs the sacct in PATH.
	sacct reckon.Runner
	// reckonPoll is lens reckon --wait's polling interval; 0 means 1 s.
	reckonPoll time.Duration
	// reckonSignals, when not nil, receives the signals that end lens
	// reckon once it has killed sacct (main relays them for reckon only).
	reckonSignals chan os.Signal
	// getpid returns lens's pid (for lens exec's instance id); nil means
	// os.Getpid.
	getpid func() int
	// policyPath replaces lens taskprolog's default policy path when not
	// empty; clock is its clock for the log file (nil: time.Now); syslog
	// opens its syslog writer (nil: the local syslog daemon; a nil writer:
	// none).
	policyPath string
	clock      func() time.Time
	syslog     func() io.WriteCloser
}

func (a *app) pid() int {
	if a.getpid != nil {
		return a.getpid()
	}
	return os.Getpid()
}

// run executes the lens command line args (without the program name) and
// returns the exit status. It is the whole command except signal
// subscription, which main adds.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env environ.Lookuper) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, env: env}
	return a.main(ctx, args)
}

func (a *app) main(ctx context.Context, args []string) int {
	if a.env == nil {
		a.env = environ.OS{}
	}
	if a.stdin == nil {
		a.stdin = strings.NewReader("")
	}
	a.stdout, a.stderr = sharedWriter(a.stdout), sharedWriter(a.stderr)
	if a.logger == nil {
		a.logger = newLogger(a.stderr, a.env)
	}
	if a.diag == nil {
		a.diag = telemetry.NewDiagnostics(a.logger)
	}
	return a.dispatch(ctx, root, args)
}

// sharedWriter returns w, when it is not a file, behind a mutex and
// without its ReadFrom: in-process, lens exec copies the command's output
// (from pipes) into the writers that lens's own messages go to, while they
// are written (an E2BIG fallback notice, a failed export); bytes.Buffer's
// ReadFrom, which io.Copy would use, loses what another goroutine writes
// while its read of the pipe waits.
func sharedWriter(w io.Writer) io.Writer {
	if _, ok := w.(*os.File); ok || w == nil {
		return w
	}
	return telemetry.SyncWriter(w)
}

// LogLevelEnv names the variable that sets the level of the library log
// records lens writes to stderr.
const LogLevelEnv = "LENS_LOG_LEVEL"

// logLevel reads LENS_LOG_LEVEL: debug, info, warn or error (any case);
// anything else, or nothing, is error.
func logLevel(env environ.Lookuper) slog.Level {
	v, _ := env.LookupEnv(LogLevelEnv)
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.TrimSpace(v))); err != nil {
		return slog.LevelError
	}
	return l
}

func newLogger(w io.Writer, env environ.Lookuper) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: logLevel(env)}))
}

// command is one node of the command tree: a group (subs) or a leaf (setup).
type command struct {
	name    string // full name without "lens ", e.g. "carrier parse"
	summary string // one line for the parent's command list
	usage   string // the synopsis after "lens NAME "
	help    string // paragraphs printed after the synopsis
	// setup defines the flags of a leaf on fs and returns the function that
	// runs it with the positional arguments.
	setup func(fs *flag.FlagSet) runFunc
	subs  []*command
	// lenient commands never fail on their command line: a flag error is
	// said on stderr and the command runs with its defaults (lens
	// taskprolog, which must never cancel a task).
	lenient bool
}

type runFunc func(ctx context.Context, a *app, args []string) error

// usageError is a command line the command cannot run: exit status 2, the
// reason and the usage on stderr.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitStatus ends a command with a status and no further message (the
// command has already written what it had to say).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help":
		return true
	}
	return false
}

func (a *app) dispatch(ctx context.Context, c *command, args []string) int {
	if c.subs != nil {
		if len(args) == 0 {
			return a.usageFail(c, "missing command")
		}
		switch arg := args[0]; {
		case isHelp(arg):
			a.printUsage(a.stdout, c, true)
			return 0
		case c == root && (arg == "--version" || arg == "-version"):
			printVersion(a.stdout, telemetry.BuildOf())
			return 0
		case c == root && arg == "help":
			return a.helpCommand(args[1:])
		case strings.HasPrefix(arg, "-"):
			return a.usageFail(c, fmt.Sprintf("unknown flag %s", arg))
		}
		for _, s := range c.subs {
			if s.leaf() == args[0] {
				return a.dispatch(ctx, s, args[1:])
			}
		}
		return a.usageFail(c, fmt.Sprintf("unknown command %q", args[0]))
	}
	fs := newFlagSet(c)
	runner := c.setup(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			a.printUsage(a.stdout, c, true)
			return 0
		}
		if !c.lenient {
			return a.usageFail(c, flagMessage(err))
		}
		fmt.Fprintf(a.stderr, "lens %s: %s; running with the defaults\n", c.name, oneLineText(flagMessage(err)))
		fs = newFlagSet(c)
		runner = c.setup(fs)
	}
	err := runner(ctx, a, fs.Args())
	var ue *usageError
	var es exitStatus
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return a.usageFail(c, ue.msg)
	case errors.As(err, &es):
		return int(es)
	}
	fmt.Fprintf(a.stderr, "lens %s: %v\n", c.name, err)
	return 1
}

// flagErrorName matches the flag name in the standard flag package's
// messages ("flag provided but not defined: -x", "invalid value … for flag
// -x: …", "flag needs an argument: -x"), which lens's documentation spells
// --x.
var flagErrorName = regexp.MustCompile(`((?:^|defined: |for flag |for |argument: ))-([A-Za-z][A-Za-z0-9-]*)`)

// flagMessage is the flag package's error with flags spelled as the
// documentation spells them.
func flagMessage(err error) string {
	msg := flagErrorName.ReplaceAllString(err.Error(), "${1}--${2}")
	if rest, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return "unknown flag " + rest
	}
	if strings.HasPrefix(msg, "invalid boolean value ") {
		msg = strings.TrimSuffix(msg, ": parse error") + ": want true or false"
	}
	return msg
}

func newFlagSet(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet("lens "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// helpCommand implements "lens help [COMMAND...]".
func (a *app) helpCommand(args []string) int {
	c := root
	for _, arg := range args {
		var next *command
		for _, s := range c.subs {
			if s.leaf() == arg {
				next = s
			}
		}
		if next == nil {
			return a.usageFail(c, fmt.Sprintf("unknown command %q", arg))
		}
		c = next
	}
	a.printUsage(a.stdout, c, true)
	return 0
}

func (c *command) leaf() string {
	return c.name[strings.LastIndexByte(c.name, ' ')+1:]
}

func (a *app) usageFail(c *command, reason string) int {
	name := "lens"
	if c != root {
		name += " " + c.name
	}
	fmt.Fprintf(a.stderr, "%s: %s\n", name, reason)
	a.printUsage(a.stderr, c, false)
	return 2
}

// printUsage writes the synopsis, the subcommands or flags and, when full,
// the help text of c.
func (a *app) printUsage(w io.Writer, c *command, full bool) {
	name := "lens"
	if c != root {
		name += " " + c.name
	}
	fmt.Fprintf(w, "usage: %s %s\n", name, c.usage)
	if !full {
		defer fmt.Fprintf(w, "\nRun '%s --help' for details.\n", name)
	}
	if full && c.help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.help, "\n"))
	}
	if c.subs != nil {
		fmt.Fprintf(w, "\ncommands:\n")
		width := 0
		for _, s := range c.subs {
			width = max(width, len(s.leaf()))
		}
		for _, s := range c.subs {
			fmt.Fprintf(w, "  %-*s  %s\n", width, s.leaf(), s.summary)
		}
		if full {
			fmt.Fprintf(w, "\nRun '%s COMMAND --help' for the flags of a command.\n", name)
		}
		return
	}
	fs := newFlagSet(c)
	c.setup(fs)
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprintf(w, "\nflags:\n")
			first = false
		}
		arg, text := flag.UnquoteUsage(f)
		if _, ok := f.Value.(interface{ IsBoolFlag() bool }); ok {
			arg = ""
		}
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		fmt.Fprintf(w, "%s\n      %s", line, strings.ReplaceAll(text, "\n", "\n      "))
		if d := f.DefValue; d != "" && d != "false" && d != "[]" {
			fmt.Fprintf(w, " (default %s)", d)
		}
		fmt.Fprintln(w)
	})
}

// noArgs is the argument check of commands that take no positional
// arguments.
func noArgs(args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	return nil
}
