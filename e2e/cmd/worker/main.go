// Command worker is the instrumented program of the lens-level end-to-end
// tests (e2e/lens_jaeger_test.go, e2e/exec_jaeger_test.go,
// e2e/example_sbatch_test.go, e2e/job_jaeger_test.go,
// e2e/example_k8s_test.go).
//
// Worker mode (the default) does only what an instrumented Go program does:
//
//	cfg, _ := lens.FromEnv()
//	h, _ := lens.Setup(ctx, cfg)   // + nv.dl.rank from $VAR with -rank-env VAR,
//	                               // + lens.WithRankFrom(L) with -rank-from L
//	one span named -span, ended    // continues $TRACEPARENT: Setup reads it
//	h.Shutdown(ctx with a 10 s deadline)
//
// and writes a record (package e2e/internal/worker) with its pid, host name,
// the carrier, trace context and run-id/rank variables it received, the
// span's ids and the resource, into -out DIR (stdout when -out is empty).
// -exit N makes it exit with status N afterwards.
//
// Parent mode (-mode parent) is a launcher without telemetry: it publishes
// the job-level attributes (-attr KEY=VALUE..., plus nv.dl.world_size=-ranks)
// as its own carrier with carrier.Publish, and, while they are published,
// starts -ranks copies of itself in worker mode, each with the environment
// carrier.ChildEnv(nil, {nv.dl.rank: k}); it waits for them and writes a
// record listing their pids and the carrier each was given.
//
// Launcher mode (-mode launcher) is a launcher with telemetry: lens.FromEnv,
// lens.Setup, a span named -span, and inside it -ranks copies of itself in
// worker mode (span -child-span, label -child-label), each started with
// carrier.ChildEnv(span context, {nv.dl.rank: k}); with -lens PATH one more
// child, started with carrier.ChildEnv(span context, nil), is
// `PATH exec --attr nv.dl.rank=<ranks> -- worker` (worker span -exec-span,
// label -exec-label). The children run concurrently; the launcher waits for
// all of them, ends its span, shuts down and writes a record listing them.
//
// Usage:
//
//	worker [-mode worker] [-span NAME] [-out DIR] [-label L] [-rank-env VAR] [-rank-from L] [-exit N]
//	worker -mode parent [-ranks N] [-attr KEY=VALUE]... [-span NAME] [-out DIR] [-label L] [-child-label L]
//	worker -mode launcher [-ranks N] [-lens PATH] [-span NAME] [-child-span NAME] [-exec-span NAME]
//	       [-out DIR] [-label L] [-child-label L] [-exec-label L]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/worker"
)

// shutdownTimeout bounds lens's Shutdown (the flush of the span).
const shutdownTimeout = 10 * time.Second

type attrFlags []string

func (a *attrFlags) String() string { return strings.Join(*a, ",") }
func (a *attrFlags) Set(s string) error {
	if k, _, ok := strings.Cut(s, "="); !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	*a = append(*a, s)
	return nil
}

type options struct {
	mode       string
	span       string
	out        string
	label      string
	childLabel string
	rankEnv    string
	rankFrom   string
	exit       int
	ranks      int
	attrs      attrFlags
	// launcher mode
	lens      string
	childSpan string
	execSpan  string
	execLabel string
}

func main() {
	var o options
	flag.StringVar(&o.mode, "mode", worker.ModeWorker, "worker, parent or launcher")
	flag.StringVar(&o.span, "span", envOr("LENS_WORKER_SPAN", "work"), "span `name` (default $LENS_WORKER_SPAN, else \"work\")")
	flag.StringVar(&o.out, "out", os.Getenv("LENS_WORKER_OUT"), "record `dir` (default $LENS_WORKER_OUT; empty: stdout)")
	flag.StringVar(&o.label, "label", envOr("LENS_WORKER_LABEL", ""), "record file `label` (default $LENS_WORKER_LABEL, else the mode)")
	flag.StringVar(&o.childLabel, "child-label", "", "parent: record `label` of the children (default \"child\")")
	flag.StringVar(&o.rankEnv, "rank-env", "", "worker: add nv.dl.rank = the integer in `VAR` as a caller attribute")
	flag.StringVar(&o.rankFrom, "rank-from", "", "worker: lens.WithRankFrom(`launcher`): slurm, torchrun, k8s-index or mpi")
	flag.IntVar(&o.exit, "exit", 0, "worker: exit `status` after exporting")
	flag.IntVar(&o.ranks, "ranks", 2, "parent, launcher: number of worker children")
	flag.StringVar(&o.lens, "lens", "", "launcher: also run one worker under `PATH` exec --attr nv.dl.rank=<ranks>")
	flag.StringVar(&o.childSpan, "child-span", "work", "launcher: span `name` of the worker children")
	flag.StringVar(&o.execSpan, "exec-span", "exec-work", "launcher: span `name` of the worker under lens exec")
	flag.StringVar(&o.execLabel, "exec-label", "exec-child", "launcher: record `label` of the worker under lens exec")
	flag.Var(&o.attrs, "attr", "parent: job-level carrier attribute `KEY=VALUE` to publish (repeatable)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "worker: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if o.label == "" {
		o.label = o.mode
	}
	if o.childLabel == "" {
		o.childLabel = "child"
	}

	rec := &worker.Record{Mode: o.mode, Label: o.label, PID: os.Getpid(), PPID: os.Getppid()}
	rec.Hostname, _ = os.Hostname()
	rec.Carrier, rec.CarrierSet = os.LookupEnv("OTEL_RESOURCE_ATTRIBUTES")
	rec.Traceparent = os.Getenv("TRACEPARENT")
	rec.Tracestate = os.Getenv("TRACESTATE")
	rec.SlurmProcID = os.Getenv("SLURM_PROCID")
	rec.Env = recordedEnv(os.Environ())

	ctx := context.Background()
	var err error
	switch o.mode {
	case worker.ModeWorker:
		err = runWorker(ctx, &o, rec)
	case worker.ModeParent:
		err = runParent(ctx, &o, rec)
	case worker.ModeLauncher:
		err = runLauncherMode(ctx, &o, rec)
	default:
		fmt.Fprintf(os.Stderr, "worker: unknown -mode %q\n", o.mode)
		os.Exit(2)
	}
	if err != nil {
		rec.Error = err.Error()
		fmt.Fprintln(os.Stderr, "worker:", err)
	}
	if werr := write(o.out, rec); werr != nil {
		fmt.Fprintln(os.Stderr, "worker: writing the record:", werr)
		os.Exit(1)
	}
	if err != nil {
		os.Exit(1)
	}
	os.Exit(o.exit)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func write(dir string, rec *worker.Record) error {
	if dir == "" {
		return writeStdout(rec)
	}
	return worker.Write(dir, rec)
}

// runParent publishes the job-level attributes and runs the children.
func runParent(ctx context.Context, o *options, rec *worker.Record) error {
	if o.ranks < 1 {
		return fmt.Errorf("-ranks must be positive, got %d", o.ranks)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return publishAndRun(ctx, o.attrs, o.ranks, func(rank int, env []string) (worker.Child, error) {
		args := []string{"-mode", worker.ModeWorker, "-span", o.span, "-label", o.childLabel}
		if o.out != "" {
			args = append(args, "-out", o.out)
		}
		cmd := exec.Command(self, args...)
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		c := worker.Child{Rank: rank, Carrier: lookup(env, "OTEL_RESOURCE_ATTRIBUTES"), ExitCode: -1}
		if err := cmd.Start(); err != nil {
			return c, err
		}
		c.PID = cmd.Process.Pid
		err := cmd.Wait()
		c.ExitCode = cmd.ProcessState.ExitCode()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("child rank %d (pid %d): %v", rank, c.PID, err)
		}
		return c, err
	}, rec)
}

// runLauncherMode runs the launcher: the children are this program in
// worker mode, and with -lens one more under lens exec.
func runLauncherMode(ctx context.Context, o *options, rec *worker.Record) error {
	if o.ranks < 0 {
		return fmt.Errorf("-ranks must not be negative, got %d", o.ranks)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	workerArgs := func(span, label string) []string {
		args := []string{"-mode", worker.ModeWorker, "-span", span, "-label", label}
		if o.out != "" {
			args = append(args, "-out", o.out)
		}
		return args
	}
	specs := make([]childSpec, 0, o.ranks+1)
	for k := range o.ranks {
		specs = append(specs, childSpec{rank: k, path: self, args: workerArgs(o.childSpan, o.childLabel)})
	}
	if o.lens != "" {
		args := append([]string{"exec", "--attr", "nv.dl.rank=" + strconv.Itoa(o.ranks), "--", self}, workerArgs(o.execSpan, o.execLabel)...)
		specs = append(specs, childSpec{rank: o.ranks, exec: true, path: o.lens, args: args})
	}
	return runLauncher(ctx, o, specs, rec)
}

// childSpec is one child of the launcher.
type childSpec struct {
	rank int
	exec bool // lens exec: no rank override (the --attr flag gives it)
	path string
	args []string
}

// startChild runs one child with env and waits for it.
func startChild(s childSpec, env []string) (worker.Child, error) {
	cmd := exec.Command(s.path, s.args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	c := worker.Child{
		Rank: s.rank, Exec: s.exec, ExitCode: -1,
		Carrier:     lookup(env, "OTEL_RESOURCE_ATTRIBUTES"),
		RunID:       lookup(env, "NEMO_LENS_RUN_ID"),
		Traceparent: lookup(env, "TRACEPARENT"),
	}
	if err := cmd.Start(); err != nil {
		return c, err
	}
	c.PID = cmd.Process.Pid
	err := cmd.Wait()
	c.ExitCode = cmd.ProcessState.ExitCode()
	if err != nil {
		err = fmt.Errorf("child rank %d (pid %d, %s): %v", s.rank, c.PID, s.path, err)
	}
	return c, err
}

// recordedEnv returns the variables of worker.EnvNames and
// worker.EnvPrefixes present in env (the last entry of a name wins).
func recordedEnv(env []string) map[string]string {
	out := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if slices.Contains(worker.EnvNames, k) || slices.ContainsFunc(worker.EnvPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			out[k] = v
		}
	}
	return out
}

// lookup returns the last value of name in env ("" when absent).
func lookup(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

func atoi(name, s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%s=%q: not an integer", name, s)
	}
	return n, nil
}
