package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/process"
	"github.com/nemolens/lens-go/internal/telemetry"
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
	usage:   "[--attr KEY=VALUE]... [--role ROLE] [--rank-from slurm|torchrun|k8s-index] [--command-args] [--flush-timeout D] [--] COMMAND [ARG...]",
	help: `Run COMMAND with ARGs — directly (execve, looked up in PATH; never through a
shell) — with OTEL_RESOURCE_ATTRIBUTES set to the current carrier extended
with --rank-from's, --attr's and --role's (nv.dl.role) values as overrides,
in that order, and wait for it. stdin, stdout and stderr are the command's
own. SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 received by lens
are forwarded to the command (a signal sent to the whole process group,
like Ctrl-C in a terminal, therefore reaches it twice).

Exit status: the command's; 128+N when it was killed by signal N; 127 when
COMMAND is not found, 126 when it cannot be executed; 2 for a usage error.

The command always starts: when the composed carrier cannot be passed (a
single environment string is limited to 128 KiB on Linux), it gets the
carrier lens inherited, or none when that cannot be passed either, and lens
says so once on stderr.

Run identity: the command gets NEMO_LENS_RUN_ID — lens's own when set, else
SLURM_JOB_ID, else TORCHELASTIC_RUN_ID, else a random id — so that lens's
span and every process below report the same nemo.run.id.

--rank-from slurm|torchrun|k8s-index sets nv.dl.rank, nv.dl.world_size and
nv.dl.local_rank from the launcher's variables (SLURM_PROCID, SLURM_NTASKS,
SLURM_LOCALID; RANK, WORLD_SIZE, LOCAL_RANK; JOB_COMPLETION_INDEX, rank
only). It is opt-in: the Python reference never reads these variables.

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
--flush-timeout, whatever the collector does; a collector that refuses the
connection ends it at once, with one line on stderr. A telemetry
configuration or setup error is reported on stderr and the command runs
without telemetry. Without telemetry TRACEPARENT/TRACESTATE pass through
unchanged.`,
	setup: func(fs *flag.FlagSet) runFunc {
		var attrs attrList
		fs.Var(&attrs, "attr", "set carrier attribute `KEY=VALUE` for the command (a string override; repeatable)")
		role := fs.String("role", "", "set nv.dl.role to `ROLE` for the command (after --attr)")
		rankFrom := choiceFlag(fs, "rank-from", "", "take nv.dl.rank, nv.dl.world_size and nv.dl.local_rank from the `launcher`'s variables: slurm, torchrun or k8s-index", telemetry.RankSources()...)
		commandArgs := fs.Bool("command-args", false, "record every argument of the command in the span (process.command_args); they may hold secrets")
		flush := fs.Duration("flush-timeout", defaultFlushTimeout, "spend at most `D` (a duration) shutting telemetry down after the command exits")
		return func(ctx context.Context, a *app, args []string) error {
			if len(args) == 0 {
				return usagef("missing command")
			}
			if *flush <= 0 {
				return usagef("--flush-timeout must be positive")
			}
			x := execRun{args: args, overrides: &attr.Map{}, rankFrom: rankFrom.value, commandArgs: *commandArgs, flush: *flush}
			if x.rankFrom != "" {
				kvs, warnings := telemetry.RankAttributes(a.env, x.rankFrom)
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
}

// environ returns the environment for a child: env's list when it can list
// itself (environ.Map), else the process environment.
func (a *app) environ() []string {
	if l := environ.List(a.env); l != nil {
		return l
	}
	return os.Environ()
}

// telemetry is lens exec's span and the tracer provider that exports it.
type execTelemetry struct {
	tracing         *telemetry.Tracing
	propagator      propagation.TextMapPropagator
	span            trace.Span
	ctx             context.Context
	restoreIdentity func()
}

// startTelemetry sets up tracing when the configuration enables it and
// starts the span of the command. It returns nil when telemetry is off or
// cannot be set up (after saying why on stderr, once).
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
	o := &telemetry.Options{
		Attrs:   x.overrides.KeyValues(), // --rank-from's ranks included
		Env:     a.env,
		Detect:  a.detectOptions(),
		Logger:  a.logger,
		Wrapper: wrapperName,
		PID:     a.pid(),
	}
	cfg = o.FillRunID(cfg)
	base := telemetry.SDKAttributes()
	attrs, err := telemetry.ResourceAttributes(ctx, cfg, o, base[:], true)
	if err != nil {
		fmt.Fprintf(a.stderr, "lens exec: telemetry disabled: %v\n", err)
		return nil
	}
	tracing, err := telemetry.NewTracing(ctx, attrs.Resource(), &s, telemetry.TracingOptions{
		Console:     telemetry.ConsoleWriter(a.stderr),
		Diagnostics: a.diag,
		Env:         a.env,
	})
	if err != nil {
		fmt.Fprintf(a.stderr, "lens exec: telemetry disabled: %v\n", err)
		return nil
	}
	id, _ := attrs.Get(lensconv.ServiceInstanceID)
	t := &execTelemetry{
		tracing:    tracing,
		propagator: s.Propagator,
		// The command is this process's child: it gets this run id.
		restoreIdentity: process.SetIdentity(process.Identity{RunID: cfg.RunID, InstanceID: id.String()}),
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

// end ends the span with the outcome and shuts telemetry down within
// timeout.
func (t *execTelemetry) end(a *app, status int, detail string, timeout time.Duration) {
	t.span.SetAttributes(attribute.Int("process.exit.code", status))
	if status != 0 {
		t.span.SetStatus(codes.Error, detail)
	}
	t.span.End()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
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

	command := func(env []string) *exec.Cmd {
		cmd := exec.Command(x.args[0], x.args[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = a.stdin, a.stdout, a.stderr
		cmd.Env = env
		return cmd
	}

	// Subscribe before starting, so that no signal meant for the command
	// is lost (or kills lens) in between.
	var signals chan os.Signal
	if a.notify != nil {
		signals = make(chan os.Signal, 8)
		a.notify(signals, forwardedSignals...)
		defer a.stopNotify(signals)
	}
	cmd, err := a.start(command, env)
	if err != nil {
		fmt.Fprintf(a.stderr, "lens exec: %v\n", err)
		status := startFailure(err)
		if tel != nil {
			tel.end(a, status, err.Error(), x.flush)
		}
		return exitStatus(status)
	}
	if tel != nil {
		tel.span.SetAttributes(
			attribute.String("process.executable.path", cmd.Path),
			attribute.Int("process.pid", cmd.Process.Pid),
		)
	}
	done := make(chan struct{})
	if signals != nil {
		go func() {
			for {
				select {
				case sig := <-signals:
					_ = cmd.Process.Signal(sig) // fails only once the command has exited
				case <-done:
					return
				}
			}
		}()
	}
	err = cmd.Wait()
	close(done)
	var status int
	var detail string
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		status, detail = waitStatus(ee.ProcessState)
	default:
		// An I/O copying error after the command ran: report it, keep the
		// command's status.
		fmt.Fprintf(a.stderr, "lens exec: %v\n", err)
		status, detail = waitStatus(cmd.ProcessState)
	}
	if tel != nil {
		tel.end(a, status, detail, x.flush)
	}
	return exitStatus(status)
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

// start starts the command with env; when the environment is too large
// for the kernel (E2BIG), it tries again with the carrier lens inherited,
// then without a carrier, saying so once, so that the command starts
// whenever it can.
func (a *app) start(command func([]string) *exec.Cmd, env []string) (*exec.Cmd, error) {
	cmd := command(env)
	err := cmd.Start()
	if err == nil || !errors.Is(err, syscall.E2BIG) {
		return cmd, err
	}
	const prefix = carrier.EnvVar + "="
	without := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			without = append(without, kv)
		}
	}
	if inherited, ok := a.env.LookupEnv(carrier.EnvVar); ok {
		cmd = command(append(slices.Clip(without), prefix+inherited))
		if err = cmd.Start(); err == nil {
			fmt.Fprintf(a.stderr, "lens exec: the environment was too large for the command (E2BIG); it got the inherited carrier\n")
			return cmd, nil
		}
	}
	cmd = command(without)
	if err = cmd.Start(); err == nil {
		fmt.Fprintf(a.stderr, "lens exec: the environment was too large for the command (E2BIG); it got no carrier\n")
	}
	return cmd, err
}

// startFailure maps an error starting the command to the shell's statuses:
// 127 not found, 126 found but not executable.
func startFailure(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return 127
	}
	return 126
}
