package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/nemolens/lens-go/completed"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/internal/assembly"
	"github.com/nemolens/lens-go/internal/telemetry"
)

// emitSpansWrapper is appended (with the pid) to lens emit-spans's
// service.instance.id, as lens exec appends its own: a lens process never
// reports the id of the process it runs beside.
const emitSpansWrapper = "lens-emit-spans"

// defaultEmitTimeout is lens emit-spans's idle bound: the export ends when
// no batch has been accepted for that long.
const defaultEmitTimeout = 30 * time.Second

var emitSpansCommand = &command{
	name:     "emit-spans",
	summary:  "export completed spans from explicit start and end times",
	usage:    "",
	required: []string{"span"},
	help: `Export spans whose times were measured elsewhere as completed, back-dated
spans (docs/tracing.md#emit-spans). Times are seconds since the Unix epoch
with an optional fraction (1700000000.25). The set is checked first: on any
problem nothing is exported and lens exits 2.`,
	setup: func(fs *flag.FlagSet) runFunc {
		var specs specList
		fs.Var(&specs, "span", "a span `NAME,START,END[,PARENT]`, times in epoch seconds (repeatable)")
		service := fs.String("service", "", "the spans' service.name `NAME` (beats OTEL_SERVICE_NAME)")
		flush := fs.Duration("flush-timeout", defaultEmitTimeout, "end the export when no batch was accepted for `D`")
		return func(ctx context.Context, a *app, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			if len(specs) == 0 {
				return usagef("no --span given")
			}
			if *flush <= 0 {
				return usagef("--flush-timeout must be positive")
			}
			serviceSet := false
			fs.Visit(func(f *flag.Flag) { serviceSet = serviceSet || f.Name == "service" })
			if serviceSet && *service == "" {
				return usagef("--service must not be empty")
			}
			return a.emitSpans(ctx, specs, *service, *flush)
		}
	},
}

// specList is the repeatable --span flag.
type specList []string

func (l *specList) String() string { return strings.Join(*l, " ") }

func (l *specList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// emitSpans validates the spans, and only then sets up tracing, emits them
// and shuts tracing down within timeout.
func (a *app) emitSpans(ctx context.Context, specs []string, service string, timeout time.Duration) error {
	spans, err := completed.ParseSet(specs)
	if err != nil {
		// One line per problem, then the verdict: a usage error's status,
		// without the usage (the values, not the flags, are wrong).
		problems := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			problems = j.Unwrap()
		}
		for _, p := range problems {
			fmt.Fprintf(a.stderr, "lens emit-spans: %s\n", oneLine(p))
		}
		fmt.Fprintf(a.stderr, "lens emit-spans: %d problem(s); nothing exported\n", len(problems))
		return exitStatus(2)
	}

	cfg, err := telemetry.FromEnv(a.env, "", "")
	if err != nil {
		return fmt.Errorf("configuration: %w", unprefixed(err))
	}
	if service != "" {
		cfg.ServiceName = service
	}
	if cfg.TracesDisabled {
		return errors.New("NEMO_LENS_TRACES_ENABLED is false: the spans would go nowhere")
	}
	s, err := telemetry.ReadSettings(a.env, cfg, telemetry.Needs{Traces: true})
	if s.SDKDisabled {
		return errors.New("OTEL_SDK_DISABLED is true: the spans would go nowhere")
	}
	if err != nil {
		return fmt.Errorf("configuration: %w", unprefixed(err))
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(a.stderr, "lens emit-spans: %s\n", w)
	}
	if s.Traces.Kind == telemetry.KindNone {
		return errors.New("the traces exporter is none: the spans would go nowhere")
	}
	o := &assembly.Options{
		Env:     a.env,
		Detect:  append(a.detectOptions(), detect.WithGPUCount(noGPUCount)), // no nvidia-smi for a few spans
		Logger:  a.logger,
		Wrapper: emitSpansWrapper,
		PID:     a.pid(),
	}
	attempt, cfg := o.Identify(cfg, s.TracePerAttempt)
	base := assembly.SDKAttributes()
	attrs, err := assembly.ResourceAttributes(ctx, cfg, o, base[:], true)
	if err != nil {
		return fmt.Errorf("resource: %w", err)
	}
	// --flush-timeout bounds the export by its progress: it ends when no
	// batch has been accepted for that long (docs/tracing.md#batch-export).
	// Until then ending a span waits for room in the queue (the batch
	// mode), and the flush waits.
	dctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	tracing, err := a.newBatchTracing(ctx, dctx, "emit-spans", attrs.Resource(), &s, attempt)
	if err != nil {
		return err
	}
	defer tracing.CancelWhenIdle(timeout, cancel)()
	emitErr := completed.Emit(ctx, tracing.Provider().Tracer(instrumentationScope), spans)
	shutErr := idleReason(dctx, tracing.Shutdown(dctx))
	return exportVerdict(tracing, int64(len(spans)), errors.Join(emitErr, shutErr), timeout,
		func(w string) { fmt.Fprintf(a.stderr, "lens emit-spans: %s\n", w) })
}

// idleReason is err, the error of a batch export's shutdown, with the
// idle bound's reason in place of its context's error when the bound
// ended the export.
func idleReason(ctx context.Context, err error) error {
	var idle *telemetry.IdleError
	if err == nil || !errors.As(context.Cause(ctx), &idle) {
		return err
	}
	return fmt.Errorf("no batch was accepted for --flush-timeout %v", idle.Idle)
}

// statusRejected is the exit status of a batch command whose every span
// reached the collector, which rejected some of them (an OTLP partial
// success): a rerun would send the exported spans again, and the rejected
// ones would be rejected again (docs/tracing.md#export-counts).
const statusRejected = 3

// exportVerdict is the error of a batch command's export (nil when every one
// of want spans was exported): how many spans went, and why not the others
// (docs/tracing.md#batch-export). A collector's warning that rejected
// nothing goes to warn.
func exportVerdict(t *telemetry.Tracing, want int64, err error, timeout time.Duration, warn func(string)) error {
	c := t.Counts()
	rejection := t.Rejection()
	if err == nil && c.Exported == want {
		if rejection != nil {
			warn(oneLine(rejection))
		}
		return nil
	}
	// Pending: an export the deadline abandoned, which fails.
	counts := fmt.Sprintf("%d of %d spans exported (%d failed, %d dropped, %d rejected)", c.Exported, want, c.Failed+c.Pending, c.Dropped, c.Rejected)
	if err == nil && c.Rejected > 0 && c.Exported+c.Rejected == want {
		return &statusError{status: statusRejected, err: fmt.Errorf(
			"export: %s: %s; the collector keeps the %d others, so a rerun would send them again", counts, oneLine(rejection), c.Exported)}
	}
	if err == nil {
		err = t.ExportError()
	}
	why := ""
	switch first := t.ExportError(); {
	case err != nil && first != nil && err != first && oneLine(err) != oneLine(first):
		why = ": " + oneLine(err) + "; first failed export: " + oneLine(first)
	case err != nil:
		why = ": " + oneLine(err)
	case c.Dropped > 0:
		why = fmt.Sprintf(": no batch was accepted for --flush-timeout %v", timeout)
	}
	if c.Rejected > 0 && rejection != nil {
		why += "; " + oneLine(rejection)
	}
	return fmt.Errorf("export: %s%s", counts, why)
}
