package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
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
	// TaskPrologName is the name under which the lens binary runs as
	// "lens taskprolog" (a symbolic link that slurm.conf's TaskProlog names:
	// slurm.conf cannot pass arguments).
	TaskPrologName = "lens-taskprolog"
)

// slurmdNodenameEnv is read only to label reports.
const slurmdNodenameEnv = "SLURMD_NODENAME"

var taskPrologCommand = &command{
	name:    "taskprolog",
	summary: "as Slurm's TaskProlog: print the exports of the starting task",
	usage:   "",
	help: `Act as Slurm's TaskProlog: print the "export NAME=VALUE" lines slurmstepd
sets for the starting task (the carrier of lens env's stages, the run id,
the policy's defaults). It never cancels a task: it exits 0 whatever
happens (docs/taskprolog.md).`,
	lenient: true,
	setup: func(fs *flag.FlagSet) runFunc {
		policy := fs.String("policy", "", "read the policy from `FILE` (default $"+TaskPrologPolicyEnv+", else "+taskprolog.DefaultPolicyPath+")")
		return func(ctx context.Context, a *app, args []string) error {
			defer func() {
				// A panic would exit 2 and cancel the task: say it, exit 0.
				if p := recover(); p != nil {
					fmt.Fprintf(a.stderr, "lens taskprolog: internal error: %s\n", oneLineText(fmt.Sprint(p)))
				}
			}()
			r := a.newPrologReporter()
			defer r.close()
			if len(args) > 0 {
				r.report("ignoring unexpected argument %q", args[0])
			}
			lines := a.taskPrologLines(ctx, *policy, r)
			if _, err := io.WriteString(a.stdout, lines); err != nil {
				r.report("writing the exports: %v", err)
			}
			return nil
		}
	},
}

// taskPrologArgs returns the arguments lens runs with when its program
// name is argv0: "taskprolog" first when it is called lens-taskprolog.
func taskPrologArgs(argv0 string, args []string) []string {
	base := argv0[strings.LastIndexByte(argv0, '/')+1:]
	if base == TaskPrologName {
		return append([]string{taskPrologCommand.name}, args...)
	}
	return args
}

// taskPrologLines computes the exports (docs/taskprolog.md#what-a-task-carries).
// It never fails: what it cannot set it leaves out and reports.
func (a *app) taskPrologLines(ctx context.Context, policyFlag string, r *prologReporter) (out string) {
	defer func() {
		if p := recover(); p != nil {
			r.report("internal error, nothing exported: %v", p)
			out = ""
		}
	}()
	env := a.env
	if v, ok := env.LookupEnv(TaskPrologEnv); ok {
		if strings.EqualFold(pytext.TrimSpace(v), taskprolog.Off) {
			return ""
		}
		r.report("%s=%q is not %q; ignored", TaskPrologEnv, v, taskprolog.Off)
	}
	pol := a.loadPrologPolicy(policyFlag, r)
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
	r.setLog(pol.Log)
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

// prologReporter sends lens taskprolog's reports where an admin looks
// (docs/taskprolog.md#reports): the policy's log file, syslog, and stderr.
// Every report is one line that starts with "lens taskprolog:", so that
// slurmstepd, which reads stderr together with stdout, never takes it for
// an export.
type prologReporter struct {
	a      *app
	log    string
	prefix string
	lines  []string
}

func (a *app) newPrologReporter() *prologReporter {
	r := &prologReporter{a: a}
	job, _ := a.env.LookupEnv(process.SlurmJobIDEnv)
	step := detect.SlurmStep(a.env)
	if step != "" {
		step, _ = a.env.LookupEnv(step)
	} else {
		step = "batch"
	}
	rank := "?"
	if kvs, _ := detect.Ranks(a.env, detect.RankFromSlurm); len(kvs) > 0 {
		rank = kvs[0].Value.String()
	}
	node, _ := a.env.LookupEnv(slurmdNodenameEnv)
	r.prefix = oneLineText(fmt.Sprintf("job %s step %s task %s node %s pid %d", job, step, rank, node, a.pid()))
	return r
}

func (r *prologReporter) setLog(path string) { r.log = path }

func (r *prologReporter) report(format string, args ...any) {
	r.lines = append(r.lines, oneLineText(fmt.Sprintf(format, args...)))
}

// close writes the reports, if any.
func (r *prologReporter) close() {
	if len(r.lines) == 0 {
		return
	}
	var b strings.Builder
	for _, l := range r.lines {
		fmt.Fprintf(&b, "lens taskprolog: %s: %s\n", r.prefix, l)
	}
	text := b.String()
	_, _ = io.WriteString(r.a.stderr, text)
	if r.log != "" {
		now := r.a.now().UTC().Format(time.RFC3339)
		var fb strings.Builder
		for _, l := range strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n") {
			fb.WriteString(now + " " + l)
		}
		fb.WriteString("\n")
		if err := appendFile(r.log, fb.String()); err != nil {
			_, _ = fmt.Fprintf(r.a.stderr, "lens taskprolog: %s: log %s: %s\n", r.prefix, oneLineText(r.log), oneLineText(err.Error()))
		}
	}
	if w := r.a.openSyslog(); w != nil {
		for _, l := range r.lines {
			_, _ = io.WriteString(w, r.prefix+": "+l)
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

func (a *app) openSyslog() io.WriteCloser {
	if a.syslog != nil {
		return a.syslog()
	}
	return dialSyslog()
}

// appendFile appends text to path in one write (O_APPEND), creating it
// with mode 0644 when it does not exist.
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, text)
	return errors.Join(err, f.Close())
}

// oneLineText escapes the characters that would break a report line:
// newline, carriage return and NUL.
func oneLineText(s string) string {
	if !strings.ContainsAny(s, "\n\r\x00") {
		return s
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\x00", `\x00`).Replace(s)
}
