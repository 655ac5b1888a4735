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
	"slices"
	"strings"
	"sync"
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
	// empty; clock is its clock for the log file, and lens reckon's for
	// the end of --wait (nil: time.Now); syslog opens its syslog writer
	// (nil: the local syslog daemon; a nil writer: none).
	policyPath string
	clock      func() time.Time
	syslog     func() io.WriteCloser
	// prologBound replaces lens taskprolog's hard bound when positive
	// (TaskPrologBound); prologAfter, when not nil, replaces time.After
	// for its compute bound (a test fires it when it chooses).
	prologBound time.Duration
	prologAfter func(time.Duration) <-chan time.Time
	// fsRoot is the root under which lens exec reads /proc and
	// /sys/fs/cgroup for the command's usage; "" means "/".
	fsRoot string
	// procOnce tells once whether fsRoot's proc is another PID
	// namespace's (procForeign; procIsOurs).
	procOnce    sync.Once
	procForeign bool
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
	var closeOut, closeErr func()
	a.stdout, closeOut = sharedWriter(a.stdout)
	a.stderr, closeErr = sharedWriter(a.stderr)
	defer closeOut()
	defer closeErr()
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
// while its read of the pipe waits. Its close, called when the command
// returns, drops every later write: an export abandoned at its bound (lens
// reckon's idle --flush-timeout) may still be writing to the console when
// the caller reads the buffer. A file is returned as it is (the process
// exits with the command).
func sharedWriter(w io.Writer) (io.Writer, func()) {
	if _, ok := w.(*os.File); ok || w == nil {
		return w, func() {}
	}
	c := &closingWriter{w: w}
	return c, c.close
}

// closingWriter serialises writes to w until close, and drops them after.
type closingWriter struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (c *closingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return len(p), nil
	}
	return c.w.Write(p)
}

func (c *closingWriter) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
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
	usage   string // a group's synopsis after "lens NAME "; a leaf's positional arguments (its flags are generated)
	help    string // paragraphs printed after the synopsis
	// setup defines the flags of a leaf on fs and returns the function that
	// runs it with the positional arguments.
	setup func(fs *flag.FlagSet) runFunc
	subs  []*command
	// required lists the flags the synopsis shows without brackets.
	required []string
	// manual is the anchor of the command's docs/cli.md section when it is
	// not lens-NAME (a group documented together).
	manual string
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

// statusError ends a command with a status other than 1 and its message
// on stderr ("lens COMMAND: MESSAGE").
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

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
			return a.usageFail(c, fmt.Sprintf("unknown flag %s", arg)+c.suggestFlag(arg))
		}
		for _, s := range c.subs {
			if s.leaf() == args[0] {
				return a.dispatch(ctx, s, args[1:])
			}
		}
		return a.usageFail(c, fmt.Sprintf("unknown command %q", args[0])+c.suggestCommand(args[0]))
	}
	fs := newFlagSet(c)
	runner := c.setup(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			a.printUsage(a.stdout, c, true)
			return 0
		}
		if !c.lenient {
			return a.usageFail(c, flagMessage(fs, err))
		}
		fmt.Fprintf(a.stderr, "lens %s: %s; running with the defaults\n", c.name, oneLineText(flagMessage(fs, err)))
		fs = newFlagSet(c)
		runner = c.setup(fs)
	}
	err := runner(ctx, a, fs.Args())
	var ue *usageError
	var es exitStatus
	var se *statusError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return a.usageFail(c, ue.msg)
	case errors.As(err, &es):
		return int(es)
	case errors.As(err, &se):
		fmt.Fprintf(a.stderr, "lens %s: %v\n", c.name, err)
		return se.status
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
// documentation spells them, the accepted form of a value that does not
// parse, and a suggestion for an unknown flag.
func flagMessage(fs *flag.FlagSet, err error) string {
	msg := flagErrorName.ReplaceAllString(err.Error(), "${1}--${2}")
	if rest, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return "unknown flag " + rest + suggest(strings.TrimLeft(rest, "-"), flagNames(fs), "--")
	}
	if strings.HasPrefix(msg, "invalid boolean value ") {
		msg = strings.TrimSuffix(msg, ": parse error") + ": want true or false"
	}
	if m := flagErrorName.FindStringSubmatch(err.Error()); m != nil && strings.HasSuffix(msg, ": parse error") {
		if f := fs.Lookup(m[2]); f != nil {
			if _, ok := f.Value.(flag.Getter).Get().(time.Duration); ok {
				msg = strings.TrimSuffix(msg, ": parse error") + durationForm
			}
		}
	}
	return msg
}

// durationForm is the accepted form of every duration flag: a number
// without a unit is refused rather than guessed (docs/cli.md#durations).
const durationForm = ": want a duration with its unit, such as 5s, 500ms or 1m30s"

func flagNames(fs *flag.FlagSet) []string {
	names := []string{"help"}
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

func (c *command) suggestCommand(name string) string {
	var names []string
	for _, s := range c.subs {
		names = append(names, s.leaf())
	}
	if c == root {
		names = append(names, "help")
		// "lens version": the root's flag --version, when it is nearer
		// than every command.
		if v, d := nearest(name, []string{"version"}); v != "" {
			if _, dc := nearest(name, names); d < dc {
				return fmt.Sprintf("; did you mean --%s?", v)
			}
		}
	}
	return suggest(name, names, "")
}

// suggestFlag suggests a flag of a group (--help, and --version at the root).
func (c *command) suggestFlag(arg string) string {
	names := []string{"help"}
	if c == root {
		names = append(names, "version")
	}
	return suggest(strings.TrimLeft(arg, "-"), names, "--")
}

// suggest returns "; did you mean X?" for the candidate closest to typed:
// within an edit distance of 2 (Levenshtein), or one that typed is a prefix
// of; "" when none is.
func suggest(typed string, candidates []string, prefix string) string {
	best, _ := nearest(typed, candidates)
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %s%s?", prefix, best)
}

// nearest is suggest's choice and its distance ("" and 3 when none is
// near enough).
func nearest(typed string, candidates []string) (string, int) {
	best, bestDist := "", 3
	if typed, _, _ = strings.Cut(typed, "="); typed == "" {
		return "", bestDist
	}
	for _, c := range candidates {
		d := editDistance(typed, c)
		if d > 2 && strings.HasPrefix(c, typed) {
			d = 2
		}
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, bestDist
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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
			return a.usageFail(c, fmt.Sprintf("unknown command %q", arg)+c.suggestCommand(arg))
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

// helpWidth is the width every line of lens's usage and help fits in
// (TestHelpFitsAScreen).
const helpWidth = 80

// printUsage writes the synopsis, the subcommands or flags and, when full,
// the help paragraph of c and the section of docs/cli.md that is its
// manual. A leaf's synopsis and flag list are generated from its flag set,
// so they always agree and a new flag fits by itself: a choice flag's
// placeholder is its values (a|b|c), another flag's the `name` of its
// usage text; a flag whose value has a Repeatable method gets "...".
func (a *app) printUsage(w io.Writer, c *command, full bool) {
	name := "lens"
	if c != root {
		name += " " + c.name
	}
	if c.subs != nil {
		fmt.Fprintf(w, "usage: %s %s\n", name, c.usage)
	} else {
		fmt.Fprint(w, wrapWords("usage: "+name+" ", c.synopsis(), helpWidth))
	}
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
			fmt.Fprintf(w, "\nRun '%s COMMAND --help' for the flags of a command;\nthe manual is docs/cli.md.\n", name)
		}
		return
	}
	fs := newFlagSet(c)
	c.setup(fs)
	const col = 22 // where a flag's text starts
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprintf(w, "\nflags:\n")
			first = false
		}
		line := "  --" + f.Name
		if arg := flagArg(f); arg != "" {
			line += " " + arg
		}
		_, text := flag.UnquoteUsage(f)
		words := strings.Fields(text)
		if d := f.DefValue; d != "" && d != "false" && d != "[]" && d != "0s" {
			words = append(words, "(default "+d+")")
		}
		if len(line)+2 > col {
			fmt.Fprintln(w, line)
			line = ""
		}
		fmt.Fprint(w, wrapWords(fmt.Sprintf("%-*s", col, line), words, helpWidth))
	})
	if full {
		fmt.Fprintf(w, "\nManual: docs/cli.md#%s\n", c.manualAnchor())
	}
}

// manualAnchor is the anchor of c's section of docs/cli.md: its own, or
// the one of the group documented together (lens uuid).
func (c *command) manualAnchor() string {
	if c.manual != "" {
		return c.manual
	}
	return "lens-" + strings.ReplaceAll(c.name, " ", "-")
}

// synopsis is a leaf's synopsis after "lens NAME": every flag with its
// placeholder (optional ones in brackets, "..." for repeatable ones), then
// the positional arguments of c.usage.
func (c *command) synopsis() []string {
	fs := newFlagSet(c)
	c.setup(fs)
	var parts []string
	fs.VisitAll(func(f *flag.Flag) {
		p := "--" + f.Name
		if arg := flagArg(f); arg != "" {
			p += " " + arg
		}
		if !slices.Contains(c.required, f.Name) {
			p = "[" + p + "]"
		}
		if r, ok := f.Value.(interface{ Repeatable() bool }); ok && r.Repeatable() {
			p += "..."
		}
		parts = append(parts, p)
	})
	if c.usage != "" {
		parts = append(parts, c.usage)
	}
	return parts
}

// flagArg is the placeholder of a flag's value: "" for a boolean, the
// values of a choice (a|b|c), else the back-quoted name of its usage text.
func flagArg(f *flag.Flag) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return ""
	}
	if ch, ok := f.Value.(*choice); ok {
		return strings.Join(ch.allowed, "|")
	}
	arg, _ := flag.UnquoteUsage(f)
	return arg
}

// wrapWords writes words after prefix, separated by spaces and wrapped at
// width; continuation lines are indented to prefix's length. A word is
// never split (a synopsis passes each "[--flag ARG]" as one word).
func wrapWords(prefix string, words []string, width int) string {
	var b strings.Builder
	indent := strings.Repeat(" ", len(prefix))
	line := prefix
	empty := true
	for _, word := range words {
		if !empty && len(line)+1+len(word) > width {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line, empty = indent, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	return b.String()
}

// noArgs is the argument check of commands that take no positional
// arguments.
func noArgs(args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	return nil
}
