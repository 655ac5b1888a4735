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
	"github.com/nemolens/lens-go/internal/usage"
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
	usage:   "[--] COMMAND [ARG...]",
	help: `Run COMMAND with the current carrier extended by --rank-from, --attr and
--role, and wait for it; with telemetry enabled, record one span for its
lifetime. The command sees what it would see without lens: signals once,
its own stdio and exit status, which lens exits with (docs/exec.md).`,
	setup: func(fs *flag.FlagSet) runFunc {
		var attrs attrList
		fs.Var(&attrs, "attr", "set `KEY=VALUE` in the command's carrier (repeatable)")
		role := fs.String("role", "", "set nv.dl.role to `ROLE` (after --attr)")
		rankFrom := choiceFlag(fs, "rank-from", "", "take the ranks from the launcher's variables", detect.RankSources()...)
		commandArgs := fs.Bool("command-args", false, "record all arguments in the span (may hold secrets)")
		flush := fs.Duration("flush-timeout", defaultFlushTimeout, "bound the flush after the command to `D`")
		signals := choiceFlag(fs, "signals", supervise.ModeAuto.String(), "how signals reach it (docs/exec.md)",
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
	// metrics, when not nil, are the per-rank metrics (docs/usage.md#metrics);
	// cgroup, when not nil, is lens's cgroup v2 that holds lens alone
	// (docs/usage.md#cgroup).
	metrics *execMetrics
	cgroup  *usage.Cgroup
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
	if !cfg.Enabled {
		return nil
	}
	wantMetrics := a.metricsRequested(cfg)
	if cfg.TracesDisabled && !wantMetrics {
		return nil
	}
	s, err := telemetry.ReadSettings(a.env, cfg, telemetry.Needs{Traces: !cfg.TracesDisabled, Metrics: wantMetrics})
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
	traces := !cfg.TracesDisabled && s.Traces.Kind != telemetry.KindNone
	if !traces && !wantMetrics {
		return nil
	}
	detectOpts := a.detectOptions()
	_, cvd := a.env.LookupEnv("CUDA_VISIBLE_DEVICES")
	gpu := a.startGPUProbe(!cvd)
	if !cvd {
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
		fmt.Fprintf(a.stderr, "lens exec: telemetry disabled: %v\n", oneLine(err))
		if gpu != nil {
			gpu.stop() // the probe's process group is killed: none outlives lens
		}
		return nil
	}
	attrs, err := assembly.ResourceAttributes(ctx, cfg, o, base[:], true)
	if err != nil {
		return fail(err)
	}
	t := &execTelemetry{attrs: attrs, gpu: gpu, ctx: ctx, span: trace.SpanFromContext(ctx)}
	if traces {
		if t.tracing, err = a.newTracing(ctx, "exec", attrs.Resource(), &s, attempt); err != nil {
			return fail(err)
		}
		t.propagator = s.Propagator
		if a.procIsOurs() {
			t.cgroup, _ = usage.OwnCgroup(a.root(), a.pid())
		}
	}
	if wantMetrics {
		if t.metrics, err = a.startMetrics(ctx, attrs, &s, gpu); err != nil {
			if t.tracing != nil {
				_ = t.tracing.Shutdown(ctx)
			}
			return fail(err)
		}
	}
	id, _ := attrs.Get(lensconv.ServiceInstanceID)
	// The command is this process's child: it gets this run id.
	t.restoreIdentity = process.SetIdentity(process.Identity{RunID: cfg.RunID, InstanceID: id.String()})
	if !traces {
		return t
	}
	spanAttrs := []attribute.KeyValue{
		attribute.String("process.command", x.args[0]),
		attribute.Int("process.args_count", len(x.args)),
	}
	if x.commandArgs {
		spanAttrs = append(spanAttrs, attribute.StringSlice("process.command_args", x.args))
	}
	t.ctx, t.span = t.tracing.Provider().Tracer(instrumentationScope).Start(ctx, "lens exec "+filepath.Base(x.args[0]),
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

// end ends the span with the outcome and the command's usage ru (nil when
// it did not start; docs/usage.md#span-attributes) and shuts telemetry
// down within timeout, or at once when interrupted is closed. The GPU probe's count
// joins the resource first, if it comes within that time.
func (t *execTelemetry) end(a *app, status int, ru *syscall.Rusage, detail string, timeout time.Duration, interrupted <-chan struct{}) {
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
		// The probe gets at most half the flush timeout, so that the export
		// keeps the other half whatever the probe does (docs/exec.md#gpu-probe).
		probeCtx, probeCancel := context.WithTimeout(ctx, timeout/2)
		if t.gpu.complete(probeCtx, a, t.attrs) && t.tracing != nil {
			t.tracing.SetResource(t.attrs.Resource())
		}
		probeCancel()
	}
	t.span.SetAttributes(attribute.Int("process.exit.code", status))
	t.span.SetAttributes(usage.SpanAttributes(ru)...)
	if peak, ok := t.cgroup.MemoryPeak(); ok {
		t.span.SetAttributes(attribute.Int64(usage.CgroupMemoryPeak, peak))
	}
	if status != 0 {
		t.span.SetStatus(codes.Error, detail)
	}
	t.span.End()
	var errs []error
	if t.tracing != nil {
		errs = append(errs, t.tracing.Shutdown(ctx))
	}
	if t.metrics != nil {
		errs = append(errs, t.metrics.end(ctx, status, ru))
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(a.stderr, "lens exec: telemetry shutdown: %v\n", oneLine(err))
	}
	if t.tracing != nil {
		// A partial success is no failed export: said here, once
		// (docs/tracing.md#export-counts).
		if r := t.tracing.Rejection(); r != nil {
			fmt.Fprintf(a.stderr, "lens exec: telemetry: %v\n", oneLine(r))
		}
	}
	t.restoreIdentity()
}

// oneLine writes err on one line (errors.Join separates with newlines).
func oneLine(err error) string { return strings.ReplaceAll(unprefixed(err).Error(), "\n", "; ") }

// unprefixed returns err with the library's "lens: " cut from the start of
// each of its lines (a *lens.ConfigError's, a setup error's): the command
// names itself already ("lens exec: telemetry disabled: NAME=…", not
// "…: lens: NAME=…"). errors.Is and errors.As see the original.
func unprefixed(err error) error {
	if err == nil || !strings.Contains("\n"+err.Error(), "\nlens: ") {
		return err
	}
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "lens: ")
	}
	return &textError{text: strings.Join(lines, "\n"), err: err}
}

// textError is err with another text.
type textError struct {
	text string
	err  error
}

func (e *textError) Error() string { return e.text }
func (e *textError) Unwrap() error { return e.err }

func (a *app) exec(ctx context.Context, x *execRun) error {
	tel := a.startTelemetry(ctx, x)
	childCtx, opts := ctx, []carrier.ChildOption{carrier.WithEnviron(a.environ())}
	if tel != nil && tel.propagator != nil {
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
			tel.end(a, status, nil, err.Error(), x.flush, nil)
		}
		return exitStatus(status)
	}
	defer p.Close()
	if tel != nil {
		tel.span.SetAttributes(
			attribute.String("process.executable.path", p.Path()),
			attribute.Int("process.pid", p.Pid()),
		)
		tel.metrics.started(p.Pid())
	}
	// As PID 1, lens reaps every orphan once its own probe is done.
	go func() {
		<-tel.probeDone()
		p.ReapOrphans()
	}()
	exit := p.Wait()
	closeFiles()
	if tel != nil {
		tel.end(a, exit.Status(), exit.Usage, exit.String(), x.flush, p.Interrupted())
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
	return a.newBatchTracing(ctx, nil, name, res, s, attempt)
}

// newBatchTracing is newTracing in the batch mode when batch is non-nil
// (telemetry.TracingOptions.Batch): ending a span waits for room in the
// queue until batch is done.
func (a *app) newBatchTracing(ctx, batch context.Context, name string, res *resource.Resource, s *telemetry.Settings, attempt traceid.Attempt) (*telemetry.Tracing, error) {
	return telemetry.NewTracing(ctx, res, s, telemetry.TracingOptions{
		Batch:       batch,
		Console:     telemetry.ConsoleWriter(a.stderr),
		Diagnostics: a.diag,
		Env:         a.env,
		Attempt:     attempt,
		Warn:        func(w string) { fmt.Fprintf(a.stderr, "lens %s: %s\n", name, w) },
	})
}
