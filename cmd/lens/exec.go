package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/assembly"
	"github.com/nemolens/lens-go/internal/process"
	"github.com/nemolens/lens-go/internal/supervise"
	"github.com/nemolens/lens-go/internal/telemetry"
	"github.com/nemolens/lens-go/internal/traceid"
	"github.com/nemolens/lens-go/lensconv"
)

// defaultFlushTimeout bounds the telemetry shutdown of lens exec after the
// command has exited.
const defaultFlushTimeout = 5 * time.Second

// instrumentationScope is the tracer name of lens exec's span.
const instrumentationScope = "github.com/nemolens/lens-go/cmd/lens"

// wrapperName is what lens exec appends (with its pid) to its own
// service.instance.id, so that it never reports the id of the command it
// wraps.
const wrapperName = "lens-exec"

var execCommand = &command{
	name:    "exec",
	summary: "run a command with the composed carrier (and a span)",
	usage:   "[--attr KEY=VALUE]... [--role ROLE] [--rank-from slurm|torchrun|k8s-index|mpi] [--signals auto|relay|direct|aside] [--command-args] [--flush-timeout D] [--] COMMAND [ARG...]",
	help: `Run COMMAND with ARGs — found and run as execvp(3) does (PATH with empty,
"." and relative entries; /bin:/usr/bin when PATH is unset; a file without
"#!" run by /bin/sh), never through a shell — with OTEL_RESOURCE_ATTRIBUTES
set to the current carrier extended with --rank-from's, --attr's and
--role's (nv.dl.role) values as overrides, in that order, and wait for it.
stdin, stdout and stderr are the command's own.

The command sees what it would see without lens (docs/exec.md says what
reaches it under Slurm, Kubernetes, torchrun and a terminal):
  - Signals arrive once. --signals auto picks where lens runs: relay as
    PID 1 or as its process group's leader (the command leads its own
    group and holds lens's terminal; lens passes every signal on to it),
    direct in a Slurm step (the command stays in lens's group, Slurm
    signals it itself, lens passes nothing on), aside elsewhere (lens
    leaves its group to the command, so a terminal's and a group's signals
    reach the command directly, and passes on what is sent to its pid).
    Signals that arrive before the command starts are passed on when it
    runs. A job-control stop of the command stops lens too.
  - The command gets SIGKILL when lens dies (a parent-death signal); as
    PID 1 lens reaps every orphan.
  - Nothing lens does with telemetry delays the start (the GPU probe runs
    beside the command), and lens's own stdout or stderr failing never
    changes the status.

Exit status: the command's; 128+N when it was killed by signal N; 127 when
COMMAND is not found, 126 when it was found and cannot be run; 2 for a
usage error.

The command always starts: when the composed carrier cannot be passed (a
single environment string is limited to 128 KiB on Linux), it gets the
carrier lens inherited, or none when that cannot be passed either, and lens
says so once on stderr.

Run identity: the command gets NEMO_LENS_RUN_ID — lens's own when set, else
SLURM_JOB_ID, else TORCHELASTIC_RUN_ID, else an MPI job's PMIX_NAMESPACE or
OMPI_MCA_ess_base_jobid, else a random id — so that lens's span and every
process below report the same nemo.run.id. A random id also goes in
NEMO_LENS_RUN_ID_DRAWN: a launcher's id below (torchrun's, mpirun's)
outranks it in lens-go processes (docs/resource.md#run-id-launcher).

--rank-from slurm|torchrun|k8s-index|mpi sets nv.dl.rank, nv.dl.world_size
and nv.dl.local_rank from the launcher's variables (SLURM_PROCID,
SLURM_NTASKS, SLURM_LOCALID; RANK, WORLD_SIZE, LOCAL_RANK;
JOB_COMPLETION_INDEX, rank only; mpi: OMPI_COMM_WORLD_RANK, _SIZE,
_LOCAL_RANK, else PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, else PMIX_RANK). It is
opt-in: the Python reference never reads these variables.

When telemetry is enabled (NEMO_LENS_ENABLED=true and traces on; the
configuration of lens resource, and OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER
and the other standard switches), lens records one span for the command's
lifetime, named "lens exec BASENAME", under the resource of lens resource
with the override values as caller attributes. Its service.instance.id is
the one the command will report followed by ".lens-exec.<lens's pid>": the
wrapper and the command never share an instance id, and both carry
nv.dl.rank. The span carries process.command (COMMAND as given),
process.executable.path, process.pid, process.args_count and
process.exit.code; a non-zero exit sets the status to Error. It carries
process.command_args (every argument, which may hold secrets) only with
--command-args. The span continues the trace of lens's own
TRACEPARENT/TRACESTATE when they hold a valid trace context, and the command
receives the span's context in TRACEPARENT and TRACESTATE (the OpenTelemetry
environment-variable convention), so an instrumented command continues the
trace. Metrics and logs are not set up. The "console" exporter writes to
stderr. After the command exits, telemetry is shut down within
--flush-timeout, whatever the collector does; SIGINT, SIGTERM, SIGHUP or
SIGQUIT during that flush ends it at once, and a collector that refuses the
connection ends it at once, with one line on stderr. A telemetry
configuration or setup error is reported on stderr and the command runs
without telemetry. Without telemetry TRACEPARENT/TRACESTATE pass through
unchanged.`,
	setup: func(fs *flag.FlagSet) runFunc {
		var attrs attrList
		fs.Var(&attrs, "attr", "set carrier attribute `KEY=VALUE` for the command (a string override; repeatable)")
		role := fs.String("role", "", "set nv.dl.role to `ROLE` for the command (after --attr)")
		rankFrom := choiceFlag(fs, "rank-from", "", "take nv.dl.rank, nv.dl.world_size and nv.dl.local_rank from the `launcher`'s variables: slurm, torchrun, k8s-index or mpi", detect.RankSources()...)
		commandArgs := fs.Bool("command-args", false, "record every argument of the command in the span (process.command_args); they may hold secrets")
		flush := fs.Duration("flush-timeout", defaultFlushTimeout, "spend at most `D` (a duration) shutting telemetry down after the command exits")
		signals := choiceFlag(fs, "signals", supervise.ModeAuto.String(), "how signals reach the command: `auto`, relay, direct or aside (docs/exec.md)",
			supervise.ModeAuto.String(), supervise.ModeRelay.String(), supervise.ModeDirect.String(), supervise.ModeAside.String())
		return func(ctx context.Context, a *app, args []string) error {
			if len(args) == 0 {
				return usagef("missing command")
			}
			if *flush <= 0 {
				return usagef("--flush-timeout must be positive")
			}
			mode, _ := supervise.ParseMode(signals.value) // the flag accepts valid modes only
			x := execRun{args: args, overrides: &attr.Map{}, rankFrom: rankFrom.value, commandArgs: *commandArgs, flush: *flush, mode: mode}
			if x.rankFrom != "" {
				kvs, warnings := detect.Ranks(a.env, x.rankFrom)
				for _, w := range warnings {
					fmt.Fprintf(a.stderr, "lens exec: %s\n", w)
				}
				ranks, _ := attr.FromKeyValues(kvs...)
				x.overrides.Update(ranks)
			}
			x.overrides.Update(attrs.m)
			if *role != "" {
				x.overrides.SetString(lensconv.NVDLRole, *role)
			}
			return a.exec(ctx, &x)
		}
	},
}

// execRun is one lens exec invocation.
type execRun struct {
	args        []string
	overrides   *attr.Map
	rankFrom    string
	commandArgs bool
	flush       time.Duration
	mode        supervise.Mode
}

// environ returns the environment for a child: env's list when it can list
// itself (environ.Map), else the process environment.
func (a *app) environ() []string {
	if l := environ.List(a.env); l != nil {
		return l
	}
	return os.Environ()
}

// execTelemetry is lens exec's span and the tracer provider that exports it.
type execTelemetry struct {
	tracing         *telemetry.Tracing
	propagator      propagation.TextMapPropagator
	span            trace.Span
	ctx             context.Context
	restoreIdentity func()
	// attrs are the resource attributes; gpu, when not nil, is the GPU
	// probe running beside the command, whose count completes them.
	attrs *attr.Map
	gpu   *gpuProbe
}

// gpuProbe is the GPU-count probe of lens exec, run beside the command so
// that it never delays its start.
type gpuProbe struct {
	done   chan struct{}
	cancel context.CancelFunc
	n      int
	ok     bool
}

func (a *app) startGPUProbe() *gpuProbe {
	probe := a.gpuCount
	if probe == nil {
		probe = detect.NvidiaSMIGPUCount
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &gpuProbe{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(g.done)
		g.n, g.ok = probe(ctx)
	}()
	return g
}

// noGPUCount stands for the probe while the resource is assembled: the
// probe's count is added when it comes.
func noGPUCount(context.Context) (int, bool) { return 0, false }

// startTelemetry sets up tracing when the configuration enables it and
// starts the span of the command. It returns nil when telemetry is off or
// cannot be set up (after saying why on stderr, once). Nothing it does
// blocks: the GPU probe, when one is needed, runs beside the command.
func (a *app) startTelemetry(ctx context.Context, x *execRun) *execTelemetry {
	cfg, err := telemetry.FromEnv(a.env, "", "")
	if err != nil {
		fmt.Fprintf(a.stderr, "lens exec: telemetry disabled: %v\n", oneLine(err))
		return nil
	}
	if !cfg.Enabled || cfg.TracesDisabled {
		return nil
	}
	s, err := telemetry.ReadSettings(a.env, cfg, telemetry.Needs{Traces: true})
	if s.SDKDisabled {
		return nil
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "lens exec: telemetry disabled: %v\n", oneLine(err))
		return nil
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(a.stderr, "lens exec: %s\n", w)
	}
	if s.Traces.Kind == telemetry.KindNone {
		return nil
	}
	detectOpts := a.detectOptions()
	var gpu *gpuProbe
	if _, ok := a.env.LookupEnv("CUDA_VISIBLE_DEVICES"); !ok {
		gpu = a.startGPUProbe()
		detectOpts = append(detectOpts, detect.WithGPUCount(noGPUCount))
	}
	o := &assembly.Options{
		Attrs:   x.overrides.KeyValues(), // --rank-from's ranks included
		Env:     a.env,
		Detect:  detectOpts,
		Logger:  a.logger,
		Wrapper: wrapperName,
		PID:     a.pid(),
	}
	attempt, cfg := o.Identify(cfg, s.TracePerAttempt)
	base := assembly.SDKAttributes()
	fail := func(err error) *execTelemetry {
		fmt.Fprintf(a.stderr, "lens exec: telemetry disabled: %v\n", err)
		if gpu != nil {
			gpu.cancel()
			<-gpu.done // the probe's process group is killed: none outlives lens
		}
		return nil
	}
	attrs, err := assembly.ResourceAttributes(ctx, cfg, o, base[:], true)
	if err != nil {
		return fail(err)
	}
	tracing, err := a.newTracing(ctx, "exec", attrs.Resource(), &s, attempt)
	if err != nil {
		return fail(err)
	}
	id, _ := attrs.Get(lensconv.ServiceInstanceID)
	t := &execTelemetry{
		tracing:    tracing,
		propagator: s.Propagator,
		// The command is this process's child: it gets this run id.
		restoreIdentity: process.SetIdentity(process.Identity{RunID: cfg.RunID, InstanceID: id.String()}),
		attrs:           attrs,
		gpu:             gpu,
	}
	spanAttrs := []attribute.KeyValue{
		attribute.String("process.command", x.args[0]),
		attribute.Int("process.args_count", len(x.args)),
	}
	if x.commandArgs {
		spanAttrs = append(spanAttrs, attribute.StringSlice("process.command_args", x.args))
	}
	t.ctx, t.span = tracing.Provider().Tracer(instrumentationScope).Start(ctx, "lens exec "+filepath.Base(x.args[0]),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(spanAttrs...))
	return t
}

// probeDone is closed when the GPU probe (if any) has finished.
func (t *execTelemetry) probeDone() <-chan struct{} {
	if t == nil || t.gpu == nil {
		return closedChan
	}
	return t.gpu.done
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// end ends the span with the outcome and shuts telemetry down within
// timeout, or at once when interrupted is closed. The GPU probe's count
// joins the resource first, if it comes within that time.
func (t *execTelemetry) end(a *app, status int, detail string, timeout time.Duration, interrupted <-chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-interrupted:
			cancel()
		case <-ctx.Done():
		}
	}()
	if t.gpu != nil {
		select {
		case <-t.gpu.done:
			if t.gpu.ok {
				t.attrs.Set(lensconv.HostGPUCount, attr.Int(t.gpu.n))
				t.tracing.SetResource(t.attrs.Resource())
			}
		case <-ctx.Done():
			// Cancelled, the probe kills its process group; lens waits for
			// that, so that no probe outlives it.
			t.gpu.cancel()
			<-t.gpu.done
			fmt.Fprintf(a.stderr, "lens exec: the GPU probe had not finished when the telemetry flush ended: the span has no %s\n", lensconv.HostGPUCount)
		}
	}
	t.span.SetAttributes(attribute.Int("process.exit.code", status))
	if status != 0 {
		t.span.SetStatus(codes.Error, detail)
	}
	t.span.End()
	if err := t.tracing.Shutdown(ctx); err != nil {
		fmt.Fprintf(a.stderr, "lens exec: telemetry shutdown: %v\n", oneLine(err))
	}
	t.restoreIdentity()
}

// oneLine writes err on one line (errors.Join separates with newlines).
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

func (a *app) exec(ctx context.Context, x *execRun) error {
	tel := a.startTelemetry(ctx, x)
	childCtx, opts := ctx, []carrier.ChildOption{carrier.WithEnviron(a.environ())}
	if tel != nil {
		childCtx = tel.ctx
		opts = append(opts, carrier.WithPropagator(tel.propagator))
	}
	env, err := carrier.ChildEnv(childCtx, x.overrides, opts...)
	a.reportChildEnv(err)

	files, closeFiles := a.stdio()
	place := supervise.Locate(a.env)
	p, err := a.start(supervise.Command{
		Args: x.args, Env: env,
		Stdin: files[0], Stdout: files[1], Stderr: files[2],
		Mode: supervise.ResolveMode(x.mode, place), Signals: a.signals,
		Slurm: place.SlurmJob,
		Note:  func(line string) { fmt.Fprintf(a.stderr, "lens exec: %s\n", line) },
	})
	if err != nil {
		closeFiles()
		fmt.Fprintf(a.stderr, "lens exec: %v\n", err)
		status := 126
		var se *supervise.StartError
		if errors.As(err, &se) {
			status = se.Status()
		}
		if tel != nil {
			tel.end(a, status, err.Error(), x.flush, nil)
		}
		return exitStatus(status)
	}
	defer p.Close()
	if tel != nil {
		tel.span.SetAttributes(
			attribute.String("process.executable.path", p.Path()),
			attribute.Int("process.pid", p.Pid()),
		)
	}
	// As PID 1, lens reaps every orphan once its own probe is done.
	go func() {
		<-tel.probeDone()
		p.ReapOrphans()
	}()
	exit := p.Wait()
	closeFiles()
	if tel != nil {
		tel.end(a, exit.Status(), exit.String(), x.flush, p.Interrupted())
	}
	a.dieBy = exit.Signal
	return exitStatus(exit.Status())
}

// stdio returns the command's standard files: lens's own when they are
// files, else pipes copied to and from lens's readers and writers (the
// in-process tests). done closes lens's ends and waits for the copies.
func (a *app) stdio() (files [3]*os.File, done func()) {
	var copies sync.WaitGroup
	var parentEnds []*os.File
	if f, ok := a.stdin.(*os.File); ok {
		files[0] = f
	} else if r, w, err := os.Pipe(); err == nil {
		files[0] = r
		copies.Go(func() {
			_, _ = io.Copy(w, a.stdin)
			_ = w.Close()
		})
		parentEnds = append(parentEnds, r, w) // closing w also ends a copy the command does not read
	}
	for i, out := range []io.Writer{a.stdout, a.stderr} {
		if f, ok := out.(*os.File); ok {
			files[i+1] = f
			continue
		}
		r, w, err := os.Pipe()
		if err != nil {
			continue
		}
		files[i+1] = w
		parentEnds = append(parentEnds, w)
		copies.Go(func() {
			_, _ = io.Copy(out, r)
			_ = r.Close()
		})
	}
	var once sync.Once
	return files, func() {
		once.Do(func() {
			for _, f := range parentEnds {
				_ = f.Close()
			}
			copies.Wait()
		})
	}
}

// reportChildEnv says once on stderr what the child's environment lacks:
// entries the carrier cannot hold, a carrier too long to pass.
func (a *app) reportChildEnv(err error) {
	if err == nil {
		return
	}
	var dropped []carrier.Dropped
	var other []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if d, ok := e.(carrier.Dropped); ok {
				dropped = append(dropped, d)
			} else {
				other = append(other, e)
			}
		}
	} else if d, ok := err.(carrier.Dropped); ok {
		dropped = append(dropped, d)
	} else {
		other = append(other, err)
	}
	a.reportDropped("exec", dropped)
	for _, e := range other {
		fmt.Fprintf(a.stderr, "lens exec: %v\n", e)
	}
}

// start starts the command; when the environment is too large for the
// kernel (E2BIG), it tries again with the carrier lens inherited, then
// without a carrier, saying so once, so that the command starts whenever
// it can.
func (a *app) start(c supervise.Command) (*supervise.Process, error) {
	p, err := supervise.Start(&c)
	if err == nil || !errors.Is(err, syscall.E2BIG) {
		return p, err
	}
	env := c.Env
	const prefix = carrier.EnvVar + "="
	without := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			without = append(without, kv)
		}
	}
	if inherited, ok := a.env.LookupEnv(carrier.EnvVar); ok {
		c.Env = append(slices.Clip(without), prefix+inherited)
		if p, err = supervise.Start(&c); err == nil {
			fmt.Fprintf(a.stderr, "lens exec: the environment was too large for the command (E2BIG); it got the inherited carrier\n")
			return p, nil
		}
	}
	c.Env = without
	if p, err = supervise.Start(&c); err == nil {
		fmt.Fprintf(a.stderr, "lens exec: the environment was too large for the command (E2BIG); it got no carrier\n")
	}
	return p, err
}

// newTracing builds the trace engine of a lens command that exports spans
// (exec, emit-spans): the console exporter writes to stderr, and the
// engine's warnings are said there, prefixed with the command's name.
func (a *app) newTracing(ctx context.Context, name string, res *resource.Resource, s *telemetry.Settings, attempt traceid.Attempt) (*telemetry.Tracing, error) {
	return telemetry.NewTracing(ctx, res, s, telemetry.TracingOptions{
		Console:     telemetry.ConsoleWriter(a.stderr),
		Diagnostics: a.diag,
		Env:         a.env,
		Attempt:     attempt,
		Warn:        func(w string) { fmt.Fprintf(a.stderr, "lens %s: %s\n", name, w) },
	})
}
