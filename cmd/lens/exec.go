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
	"strings"
	"time"

	"github.com/nemolens/lens-go/environ"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/lensconv"
)

// defaultFlushTimeout bounds the telemetry shutdown of lens exec after the
// command has exited.
const defaultFlushTimeout = 5 * time.Second

// Trace context variables handed to the command (W3C Trace Context, as
// OTEL's environment-variable propagation convention names them).
const (
	envTraceparent = "TRACEPARENT"
	envTracestate  = "TRACESTATE"
)

// instrumentationScope is the tracer name of lens exec's span.
const instrumentationScope = "github.com/nemolens/lens-go/cmd/lens"

var execCommand = &command{
	name:    "exec",
	summary: "run a command with the composed carrier (and a span)",
	usage:   "[--attr KEY=VALUE]... [--role ROLE] [--flush-timeout D] [--] COMMAND [ARG...]",
	help: `Run COMMAND with ARGs — directly (execve, looked up in PATH; never through a
shell) — with OTEL_RESOURCE_ATTRIBUTES set to the current carrier extended
with --attr values and --role (nv.dl.role) as overrides, and wait for it.
stdin, stdout and stderr are the command's own. SIGINT, SIGTERM, SIGHUP,
SIGQUIT, SIGUSR1 and SIGUSR2 received by lens are forwarded to the command
(a signal sent to the whole process group, like Ctrl-C in a terminal,
therefore reaches it twice).

Exit status: the command's; 128+N when it was killed by signal N; 127 when
COMMAND is not found, 126 when it cannot be executed; 2 for a usage error.

When telemetry is enabled (NEMO_LENS_ENABLED=true; the configuration of
lens resource), lens records one span for the command's lifetime, named
"lens exec BASENAME", under the resource of lens resource (with the --attr
and --role values as caller attributes), with process.command,
process.command_args, process.executable.path, process.pid and
process.exit.code. A non-zero exit sets the span status to Error. The span
continues the trace of lens's own TRACEPARENT/TRACESTATE when they hold a
valid W3C trace context, and the command receives the span's context in
TRACEPARENT and TRACESTATE (W3C Trace Context), so an instrumented command
continues the trace. Metrics and logs are not set up. The "console"
exporter writes to stderr. After the command exits, telemetry is shut down
within --flush-timeout, whatever the collector does. A telemetry
configuration or setup error is reported on stderr and the command runs
without telemetry. Without telemetry TRACEPARENT/TRACESTATE pass through
unchanged.`,
	setup: func(fs *flag.FlagSet) runFunc {
		var attrs attrList
		fs.Var(&attrs, "attr", "set carrier attribute `KEY=VALUE` for the command (a string override; repeatable)")
		role := fs.String("role", "", "set nv.dl.role to `ROLE` for the command (after --attr)")
		flush := fs.Duration("flush-timeout", defaultFlushTimeout, "spend at most `D` (a duration) shutting telemetry down after the command exits")
		return func(ctx context.Context, a *app, args []string) error {
			if len(args) == 0 {
				return usagef("missing command")
			}
			if *flush <= 0 {
				return usagef("--flush-timeout must be positive")
			}
			overrides := attrs.m.Clone()
			if overrides == nil {
				overrides = &attr.Map{}
			}
			if *role != "" {
				overrides.SetString(lensconv.NVDLRole, *role)
			}
			return a.exec(ctx, args, overrides, *flush)
		}
	},
}

// environ returns the environment for a child: env's Environ() when it has
// one (environ.Map), else the process environment.
func (a *app) environ() []string {
	if e, ok := a.env.(interface{ Environ() []string }); ok {
		return e.Environ()
	}
	return os.Environ()
}

// telemetry is lens exec's span and the Handle that exports it.
type telemetry struct {
	handle *lens.Handle
	span   trace.Span
	ctx    context.Context
}

// startTelemetry sets up tracing when the configuration enables it and
// starts the span of the command. It returns nil when telemetry is off or
// cannot be set up (after saying why on stderr).
func (a *app) startTelemetry(ctx context.Context, args []string, caller *attr.Map) *telemetry {
	cfg, err := lens.FromEnv(lens.WithEnv(a.env))
	if err != nil {
		fmt.Fprintf(a.stderr, "lens exec: telemetry disabled: %v\n", err)
		return nil
	}
	if !cfg.Enabled || cfg.TracesDisabled {
		return nil
	}
	cfg.MetricsDisabled, cfg.LogsEnabled = true, false
	h, err := lens.Setup(ctx, cfg,
		lens.WithEnv(a.env),
		lens.WithLogger(a.logger),
		lens.WithDetectOptions(a.detectOptions()...),
		lens.WithResourceAttributes(caller.KeyValues()...),
		lens.WithConsoleWriter(a.stderr),
		lens.WithoutGlobals(),
		lens.WithAllowReinit(), // in-process tests run commands in parallel
	)
	if err != nil {
		fmt.Fprintf(a.stderr, "lens exec: telemetry disabled: %v\n", err)
		return nil
	}
	parent := propagation.TraceContext{}.Extract(ctx, lookupCarrier{a.env})
	cmdArgs := make([]string, len(args))
	copy(cmdArgs, args)
	sctx, span := h.Tracer(instrumentationScope).Start(parent, "lens exec "+filepath.Base(args[0]),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("process.command", args[0]),
			attribute.StringSlice("process.command_args", cmdArgs),
		))
	return &telemetry{handle: h, span: span, ctx: sctx}
}

// childEnv replaces TRACEPARENT and TRACESTATE in environ with the span's
// context.
func (t *telemetry) childEnv(environ []string) []string {
	mc := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(t.ctx, mc)
	out := environ[:0:0]
	for _, kv := range environ {
		if strings.HasPrefix(kv, envTraceparent+"=") || strings.HasPrefix(kv, envTracestate+"=") {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range mc {
		out = append(out, strings.ToUpper(k)+"="+v)
	}
	return out
}

// end ends the span with the outcome and shuts telemetry down within
// timeout.
func (t *telemetry) end(a *app, status int, detail string, timeout time.Duration) {
	t.span.SetAttributes(attribute.Int("process.exit.code", status))
	if status != 0 {
		t.span.SetStatus(codes.Error, detail)
	}
	t.span.End()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := t.handle.Shutdown(ctx); err != nil {
		fmt.Fprintf(a.stderr, "lens exec: telemetry shutdown: %v\n", err)
	}
}

// lookupCarrier reads TRACEPARENT/TRACESTATE for the propagator from a
// environ.Lookuper.
type lookupCarrier struct{ env environ.Lookuper }

func (c lookupCarrier) Get(key string) string {
	v, _ := c.env.LookupEnv(strings.ToUpper(key))
	return v
}
func (c lookupCarrier) Set(string, string) {}
func (c lookupCarrier) Keys() []string     { return []string{"traceparent", "tracestate"} }

func (a *app) exec(ctx context.Context, args []string, overrides *attr.Map, flush time.Duration) error {
	env, dropped := carrier.ChildEnv(a.environ(), nil, overrides)
	a.reportDropped("exec", dropped)

	tel := a.startTelemetry(ctx, args, overrides)
	if tel != nil {
		env = tel.childEnv(env)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.stdin, a.stdout, a.stderr
	cmd.Env = env

	// Subscribe before starting, so that no signal meant for the command
	// is lost (or kills lens) in between.
	var signals chan os.Signal
	if a.notify != nil {
		signals = make(chan os.Signal, 8)
		a.notify(signals, forwardedSignals...)
		defer a.stopNotify(signals)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(a.stderr, "lens exec: %v\n", err)
		status := startFailure(err)
		if tel != nil {
			tel.end(a, status, err.Error(), flush)
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
	err := cmd.Wait()
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
		tel.end(a, status, detail, flush)
	}
	return exitStatus(status)
}

// startFailure maps an error starting the command to the shell's statuses:
// 127 not found, 126 found but not executable.
func startFailure(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return 127
	}
	return 126
}
