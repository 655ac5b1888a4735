package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/process"
	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/internal/taskprolog"
)

// Variables lens taskprolog reads besides the job's own.
const (
	// TaskPrologPolicyEnv names the policy file when --policy does not.
	TaskPrologPolicyEnv = "LENS_TASKPROLOG_POLICY"
	// TaskPrologEnv set to "off" in a job's environment turns lens
	// taskprolog off for that job's tasks (docs/taskprolog.md#opt-out).
	TaskPrologEnv = "LENS_TASKPROLOG"
	// TaskPrologName is the syslog tag of lens taskprolog's reports and
	// the name of the link slurm.conf's TaskProlog may name (slurm.conf
	// cannot pass arguments): any program name whose base name contains
	// "taskprolog" runs lens taskprolog (taskPrologArgs).
	TaskPrologName = "lens-taskprolog"
	// TaskPrologBound is the hard bound of one lens taskprolog run, from
	// the command's start to its return (docs/taskprolog.md#bounds).
	TaskPrologBound = time.Second
	// syslogWait bounds the syslog writes of one run, within
	// TaskPrologBound.
	syslogWait = 250 * time.Millisecond
)

// slurmScriptContextEnv is what slurmstepd sets in a TaskProlog's
// environment (SLURM_SCRIPT_CONTEXT=prolog_task).
const (
	slurmScriptContextEnv = "SLURM_SCRIPT_CONTEXT"
	slurmPrologTask       = "prolog_task"
)

// slurmdNodenameEnv is read only to label reports.
const slurmdNodenameEnv = "SLURMD_NODENAME"

var taskPrologCommand = &command{
	name:    "taskprolog",
	summary: "as Slurm's TaskProlog: print the exports of the starting task",
	usage:   "",
	help: `Act as Slurm's TaskProlog: print the "export NAME=VALUE" lines slurmstepd
sets for the starting task (the carrier of lens env's stages, the run id,
the policy's defaults). It never cancels or holds a task: it returns within
1 s and exits 0 whatever happens (docs/taskprolog.md).`,
	lenient: true,
	setup: func(fs *flag.FlagSet) runFunc {
		policy := fs.String("policy", "", "the policy `FILE` (default $"+TaskPrologPolicyEnv+", then "+taskprolog.DefaultPolicyPath+")")
		return func(ctx context.Context, a *app, args []string) error {
			a.runTaskProlog(ctx, *policy, args)
			return nil
		}
	},
}

// runTaskProlog is lens taskprolog under its hard bound
// (docs/taskprolog.md#bounds): the exports are computed in one goroutine
// and written in another; whatever blocks, it returns within the bound
// (a.prologBound, else TaskPrologBound), and main then exits 0, which ends
// whatever is still blocked. Computing gets 60 % of the bound: when it has
// not finished then, nothing is exported and that is reported.
func (a *app) runTaskProlog(ctx context.Context, policyFlag string, args []string) {
	defer func() {
		// A panic would exit 2 and cancel the task: say it, exit 0.
		if p := recover(); p != nil {
			fmt.Fprintf(a.stderr, "lens taskprolog: internal error: %s\n", oneLineText(fmt.Sprint(p)))
		}
	}()
	bound := a.prologBound
	if bound <= 0 {
		bound = TaskPrologBound
	}
	start := time.Now()
	deadline := start.Add(bound)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	r := a.newPrologReporter()
	r.deadline = deadline
	if len(args) > 0 {
		r.report("ignoring unexpected argument %q", args[0])
	}
	computed := make(chan string, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				r.report("internal error, nothing exported: %v", p)
				computed <- ""
			}
		}()
		computed <- a.taskPrologLines(ctx, policyFlag, r)
	}()
	after := a.prologAfter
	if after == nil {
		after = time.After
	}
	var lines string
	select {
	case lines = <-computed:
	case <-after(bound * 6 / 10):
		// What is still running may report no more: its reports so far
		// are written, with this one.
		r.abandon("gave up after %v while %s; nothing exported", bound*6/10, r.stage())
	}
	written := make(chan struct{})
	go func() {
		defer close(written)
		if lines != "" {
			if _, err := io.WriteString(a.stdout, lines); err != nil {
				r.report("writing the exports: %v", err)
			}
		}
		r.close()
	}()
	rest := time.NewTimer(time.Until(deadline))
	defer rest.Stop()
	select {
	case <-written:
	case <-rest.C:
		// The reports could not all be written in time (a log file on a
		// hung file system, a full pipe): stop here, the task starts.
	}
}

// taskPrologArgs returns the arguments lens runs with when its program
// name is argv0 (docs/taskprolog.md#slurm-conf): "taskprolog" first when
// the base name of argv0 contains "taskprolog" (lens-taskprolog,
// lens_taskprolog, lens-taskprolog-1.0), or when lens runs with no
// argument as slurmstepd's TaskProlog (SLURM_SCRIPT_CONTEXT=prolog_task in
// env): slurm.conf's TaskProlog= may name the lens binary itself.
func taskPrologArgs(argv0 string, args []string, env environ.Lookuper) []string {
	if len(args) > 0 && args[0] == taskPrologCommand.name {
		return args
	}
	base := argv0[strings.LastIndexByte(argv0, '/')+1:]
	if strings.Contains(base, taskPrologCommand.name) {
		return append([]string{taskPrologCommand.name}, args...)
	}
	if v, _ := env.LookupEnv(slurmScriptContextEnv); len(args) == 0 && v == slurmPrologTask {
		return []string{taskPrologCommand.name}
	}
	return args
}

// taskPrologLines computes the exports (docs/taskprolog.md#what-a-task-carries).
// It never fails: what it cannot set it leaves out and reports.
func (a *app) taskPrologLines(ctx context.Context, policyFlag string, r *prologReporter) (out string) {
	env := a.env
	if v, ok := env.LookupEnv(TaskPrologEnv); ok {
		if strings.EqualFold(pytext.TrimSpace(v), taskprolog.Off) {
			return ""
		}
		r.report("%s=%q is not %q; ignored", TaskPrologEnv, v, taskprolog.Off)
	}
	r.setStage("reading the policy")
	pol := a.loadPrologPolicy(policyFlag, r)
	r.setStage("computing the exports")
	var b strings.Builder
	export := func(name, value string) {
		line, err := taskprolog.Export(name, value)
		if err != nil {
			r.report("%v", err)
			return
		}
		b.WriteString(line)
	}
	if !pol.NoCarrier {
		report := func(format string, args ...any) { r.report(format, args...) }
		text, ok, err := a.stageCarrier(ctx, env, "sbatch", "", report)
		inStep := detect.SlurmStep(env) != ""
		if err == nil && ok && inStep {
			text, ok, err = a.stageCarrier(ctx, withVar{env, carrier.EnvVar, text}, "task", "", report)
		}
		if err == nil && ok && inStep && pol.Ranks == taskprolog.RanksSlurm {
			// detect.Ranks refuses values no launcher gives (the check
			// lens exec --rank-from shares), with one warning.
			kvs, warnings := detect.Ranks(env, detect.RankFromSlurm)
			for _, w := range warnings {
				r.report("%s", w)
			}
			ranks, _ := attr.FromKeyValues(kvs...)
			// What lens exec --rank-from slurm gives its command.
			switch extended, dropped := carrier.Extend(text, nil, ranks); {
			case len(dropped) > 0:
				r.report("the ranks cannot be carried (%v); exported without them", dropped[0].Err)
			case !carrier.Fits(extended):
				r.report("the carrier with the ranks would not fit in an environment string; exported without them")
			default:
				text = extended
			}
		}
		switch {
		case err != nil:
			r.report("carrier not set: %v", err)
		case ok:
			// slurmstepd reads one line per export: a segment holding a
			// newline (an inherited one; appended values are encoded)
			// is left out, never the line (docs/taskprolog.md#reports).
			if kept := withoutLineBreaks(text); kept != text {
				r.report("an inherited %s segment holding a newline or a NUL was left out", carrier.EnvVar)
				text = kept
			}
			export(carrier.EnvVar, text)
		}
	}
	if v, _ := env.LookupEnv(process.RunIDEnv); pytext.TrimSpace(v) == "" {
		id, _ := process.FillRunID(env)
		export(process.RunIDEnv, id)
	}
	if pol.ServiceName != "" {
		if _, ok := env.LookupEnv("OTEL_SERVICE_NAME"); !ok {
			export("OTEL_SERVICE_NAME", pol.ServiceName)
		}
	}
	for _, s := range pol.Env {
		if _, ok := env.LookupEnv(s.Name); !ok {
			export(s.Name, s.Value)
		}
	}
	return b.String()
}

// loadPrologPolicy reads the policy (--policy, else $LENS_TASKPROLOG_POLICY,
// else the default path) and points r at its log file. A missing default
// file is no policy; any other problem is reported and gives the built-in
// policy.
func (a *app) loadPrologPolicy(flagPath string, r *prologReporter) taskprolog.Policy {
	path, named := flagPath, flagPath != ""
	if !named {
		if v, ok := environ.NonEmpty(a.env, TaskPrologPolicyEnv); ok {
			path, named = v, true
		}
	}
	if !named {
		path = a.defaultPolicyPath()
	}
	pol, err := taskprolog.LoadPolicy(path)
	r.setLog(pol.Log, pol.Syslog)
	for _, w := range pol.Warnings {
		r.report("%v", w)
	}
	if err == nil {
		return pol
	}
	if !named && errors.Is(err, fs.ErrNotExist) {
		return taskprolog.Policy{}
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		r.report("%v", e)
	}
	r.report("policy %s not applied: carrier and run id only", path)
	return taskprolog.Policy{}
}

func (a *app) defaultPolicyPath() string {
	if a.policyPath != "" {
		return a.policyPath
	}
	return taskprolog.DefaultPolicyPath
}

// withVar is env with one variable replaced.
type withVar struct {
	environ.Lookuper
	name, value string
}

func (w withVar) LookupEnv(key string) (string, bool) {
	if key == w.name {
		return w.value, true
	}
	return w.Lookuper.LookupEnv(key)
}

// withoutLineBreaks returns carrier text without its segments (split on
// every ',', as the carrier's parse splits) that hold a newline or a NUL;
// text itself when it has none.
func withoutLineBreaks(text string) string {
	if !strings.ContainsAny(text, "\n\x00") {
		return text
	}
	segs := strings.Split(text, ",")
	kept := segs[:0]
	for _, seg := range segs {
		if !strings.ContainsAny(seg, "\n\x00") {
			kept = append(kept, seg)
		}
	}
	return strings.Join(kept, ",")
}

// prologReporter sends lens taskprolog's reports where an admin looks
// (docs/taskprolog.md#reports): the policy's log file, syslog, and stderr.
// Every report is one line that starts with "lens taskprolog:", so that
// slurmstepd, which reads stderr together with stdout, never takes it for
// an export. It is safe for concurrent use: the goroutine that computes
// the exports reports while the bound may run out (abandon).
type prologReporter struct {
	a        *app
	prefix   string
	deadline time.Time

	mu        sync.Mutex
	log       string
	syslog    string
	lines     []string
	abandoned bool
	doing     string
}

func (a *app) newPrologReporter() *prologReporter {
	r := &prologReporter{a: a, doing: "starting"}
	job, _ := a.env.LookupEnv(process.SlurmJobIDEnv)
	step := detect.SlurmStep(a.env)
	if step != "" {
		step, _ = a.env.LookupEnv(step)
	} else {
		step = "batch"
	}
	rank := "?"
	if n, ok := detect.RawRank(a.env, detect.RankFromSlurm); ok {
		rank = strconv.FormatInt(n, 10)
	}
	node, _ := a.env.LookupEnv(slurmdNodenameEnv)
	r.prefix = oneLineText(fmt.Sprintf("job %s step %s task %s node %s pid %d", job, step, rank, node, a.pid()))
	return r
}

func (r *prologReporter) setLog(path, syslog string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log, r.syslog = path, syslog
}

func (r *prologReporter) setStage(doing string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.doing = doing
}

func (r *prologReporter) stage() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.doing
}

func (r *prologReporter) report(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.abandoned {
		r.lines = append(r.lines, oneLineText(fmt.Sprintf(format, args...)))
	}
}

// abandon adds a last report; later ones are dropped.
func (r *prologReporter) abandon(format string, args ...any) {
	r.report(format, args...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.abandoned = true
}

// close writes the reports, if any: to the log file, then to stderr and
// syslog together with a log file that failed.
func (r *prologReporter) close() {
	r.mu.Lock()
	lines, logValue, syslogPath := slices.Clone(r.lines), r.log, r.syslog
	r.abandoned = true
	r.mu.Unlock()
	if len(lines) == 0 {
		return
	}
	if logValue != "" {
		now := r.a.now().UTC().Format(time.RFC3339)
		var fb strings.Builder
		for _, l := range lines {
			fmt.Fprintf(&fb, "%s lens taskprolog: %s: %s\n", now, r.prefix, l)
		}
		if err := taskprolog.AppendLog(logValue, os.Getuid(), fb.String()); err != nil {
			lines = append(lines, oneLineText(fmt.Sprintf("log %s: %v", taskprolog.LogPath(logValue, os.Getuid()), err)))
		}
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "lens taskprolog: %s: %s\n", r.prefix, l)
	}
	_, _ = io.WriteString(r.a.stderr, b.String())
	// A stuck syslog daemon costs a task at most syslogWait.
	syslogDeadline := time.Now().Add(syslogWait)
	if !r.deadline.IsZero() && r.deadline.Before(syslogDeadline) {
		syslogDeadline = r.deadline
	}
	if w := r.a.openSyslog(syslogPath, syslogDeadline); w != nil {
		for _, l := range lines {
			if _, err := io.WriteString(w, r.prefix+": "+l); err != nil {
				break // a stuck syslog daemon: the deadline passed
			}
		}
		_ = w.Close()
	}
}

func (a *app) now() time.Time {
	if a.clock != nil {
		return a.clock()
	}
	return time.Now()
}

// openSyslog returns the syslog writer of the policy's syslog value (""
// for the default socket, "off" for none), whose writes give up at
// deadline, or nil.
func (a *app) openSyslog(path string, deadline time.Time) io.WriteCloser {
	if a.syslog != nil {
		return a.syslog()
	}
	switch path {
	case taskprolog.SyslogOff:
		return nil
	case "":
		path = taskprolog.DefaultSyslogPath
	}
	return dialSyslog(path, TaskPrologName, a.pid(), deadline)
}

// oneLineText escapes the characters that would break a report line:
// newline, carriage return and NUL.
func oneLineText(s string) string {
	if !strings.ContainsAny(s, "\n\r\x00") {
		return s
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\x00", `\x00`).Replace(s)
}
