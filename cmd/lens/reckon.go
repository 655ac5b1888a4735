package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/completed"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/assembly"
	"github.com/nemolens/lens-go/internal/reckon"
	"github.com/nemolens/lens-go/internal/telemetry"
	"github.com/nemolens/lens-go/lensconv"
)

// reckonService is the reckoner's service.name when neither
// OTEL_SERVICE_NAME nor the carrier names one.
const reckonService = "lens-reckon"

// reckonScope is the tracer name of the reckoner's spans.
const reckonScope = "github.com/nemolens/lens-go/cmd/lens/reckon"

var reckonCommand = &command{
	name:    "reckon",
	summary: "export a finished Slurm job's accounting as back-dated spans",
	usage:   "JOBID",
	help: `Read Slurm job JOBID's accounting (sacct) and export it as back-dated
spans, one trace per attempt: queue wait, allocation, steps, cleanup,
requeue gaps, all or none (docs/reckoner.md). Run it after the job ended:
  sbatch --dependency=afterany:JOBID examples/reckon.sbatch JOBID`,
	setup: func(fs *flag.FlagSet) runFunc {
		var infra keyList
		fs.Var(&infra, "infra-step", "comma-separated step `NAMES` (sacct JobName) of infrastructure, left out of the workload phase (repeatable)")
		flush := fs.Duration("flush-timeout", time.Minute, "end the export when no batch was accepted for `D`")
		sacctT := fs.Duration("sacct-timeout", defaultSacctTimeout, "kill each sacct call after `D`")
		wait := fs.Duration("wait", 0, "while the record is not final, ask sacct every second for up to `D`")
		return func(ctx context.Context, a *app, args []string) error {
			if len(args) != 1 {
				return usagef("want exactly one JOBID, got %d arguments", len(args))
			}
			if !reckon.ValidJobArg(args[0]) {
				return usagef("JOBID %q: want N or N_T (an array task)", args[0])
			}
			if *flush <= 0 {
				return usagef("--flush-timeout must be positive")
			}
			if *wait < 0 {
				return usagef("--wait must not be negative")
			}
			if *sacctT <= 0 {
				return usagef("--sacct-timeout must be positive")
			}
			return a.reckon(ctx, reckonRun{job: args[0], opts: reckon.Options{InfraSteps: infra}, wait: *wait, flush: *flush, sacctT: *sacctT})
		}
	},
}

// defaultSacctTimeout bounds each sacct call of lens reckon: examples/
// reckon.sbatch asks again every second for up to 10 minutes, and a
// healthy slurmdbd answers in well under a second.
const defaultSacctTimeout = time.Minute

// maxSacctStderr is how much of a failing sacct's stderr lens reckon keeps
// (the message shows MaxErrorText bytes of it; the rest is counted).
const maxSacctStderr = 64 << 10

// sacctRunner returns the runner of lens reckon: a.sacct, or the sacct found
// in PATH with lens's environment plus TZ=UTC and SLURM_TIME_FORMAT=standard
// (so that its times are UTC in one layout), each call bounded by timeout
// (docs/reckoner.md#bounds).
func (a *app) sacctRunner(timeout time.Duration) reckon.Runner {
	run := a.sacct
	if run == nil {
		env := append(a.environ(), "TZ=UTC", "SLURM_TIME_FORMAT=standard")
		run = func(ctx context.Context, args ...string) ([]byte, error) { return runSacct(ctx, env, args) }
	}
	return func(ctx context.Context, args ...string) ([]byte, error) {
		tctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		out, err := run(tctx, args...)
		if err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer within --sacct-timeout %v: killed it and its process group", timeout)
		}
		return out, err
	}
}

// runSacct runs sacct as the leader of a process group, which the end of
// ctx kills whole, and returns its output; a failure's message holds the
// start of its stderr, shaped like a collector's error body.
func runSacct(ctx context.Context, env, args []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "sacct", args...)
	cmd.Env = env
	sacctProcessGroup(cmd)
	var stdout bytes.Buffer
	stderr := &headWriter{max: maxSacctStderr}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	_ = killGroup(cmd) // what sacct left behind in its group
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if msg := strings.TrimSpace(stderr.buf.String()); msg != "" || stderr.more > 0 {
			err = fmt.Errorf("%w: %s", err, telemetry.ShapeText(msg, stderr.more))
		}
		return nil, err
	}
	return stdout.Bytes(), nil
}

// headWriter keeps the first max bytes written and counts the rest.
type headWriter struct {
	buf  bytes.Buffer
	max  int
	more int64
}

func (w *headWriter) Write(p []byte) (int, error) {
	keep := min(len(p), w.max-w.buf.Len())
	w.buf.Write(p[:keep])
	w.more += int64(len(p) - keep)
	return len(p), nil
}

// reckonPoll is the interval of lens reckon --wait.
const reckonPoll = time.Second

// reckonRun is what lens reckon's flags ask for.
type reckonRun struct {
	job                 string
	opts                reckon.Options
	wait, flush, sacctT time.Duration
}

func (a *app) reckon(ctx context.Context, r reckonRun) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var caught atomic.Int64 // the signal that ended lens reckon, if any
	if a.reckonSignals != nil {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case sig := <-a.reckonSignals:
				if s, ok := sig.(syscall.Signal); ok {
					caught.Store(int64(s))
				}
				cancel()
			case <-done:
			}
		}()
	}
	stopped := func() error {
		if sig := syscall.Signal(caught.Load()); sig != 0 {
			a.dieBy = sig
			return fmt.Errorf("stopped by signal %d (%v); sacct was killed with its process group", int(sig), sig)
		}
		return nil
	}
	job := r.job
	deadline := a.now().Add(r.wait) // a.clock: a test's clock decides when --wait ends
	poll := a.reckonPoll
	if poll <= 0 {
		poll = reckonPoll
	}
	run := a.sacctRunner(r.sacctT)
	var jobs []reckon.Job
	var err error
	var nf *reckon.NotFinal
	for {
		jobs, err = reckon.Read(ctx, run, job)
		if !errors.As(err, &nf) || !a.now().Add(poll).Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return cmp.Or(stopped(), ctx.Err())
		case <-time.After(poll):
		}
	}
	if err := stopped(); err != nil {
		return err
	}
	if errors.As(err, &nf) {
		fmt.Fprintf(a.stdout, "lens reckon: job %s: %s; nothing exported. Run the reckoner after the job has ended:\n  sbatch --dependency=afterany:%s examples/reckon.sbatch %s\n", job, nf.Reason, job, job)
		return nil
	}
	if err != nil {
		return err
	}
	plans, err := reckon.Plans(jobs, r.opts)
	if err != nil {
		return err
	}
	// All or nothing: every span is checked before any is exported.
	total := 0
	var bad []error
	for i := range plans {
		for cs := range attemptSpans(&plans[i]) {
			total++
			p := &plans[i]
			if err := completed.Validate([]completed.Span{cs}); err != nil {
				bad = append(bad, fmt.Errorf("job %s attempt %d: %w", p.Job.ID, p.Attempt.Number, err))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("job %s: nothing exported: %w", job, errors.Join(bad...))
	}
	// --flush-timeout bounds the export by its progress: it ends when no
	// batch has been accepted for that long (docs/tracing.md#batch-export).
	dctx, dcancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer dcancel(nil)
	tracing, err := a.reckonTracing(ctx, dctx, jobs)
	if err != nil {
		return err
	}
	defer tracing.CancelWhenIdle(r.flush, dcancel)()
	tracer := tracing.Provider().Tracer(reckonScope)
	var emitErrs []error
	one := make([]completed.Span, 1)
	for i := range plans {
		p := &plans[i]
		tctx := completed.ContextWithTraceID(ctx, p.TraceID)
		// completed.Emit wants the names of one set unique (children name
		// their parent); the reckoner's spans are flat, so each is a set.
		n := 0
		for cs := range attemptSpans(p) {
			n++
			one[0] = cs
			if err := completed.Emit(tctx, tracer, one); err != nil {
				emitErrs = append(emitErrs, fmt.Errorf("job %s attempt %d: %w", p.Job.ID, p.Attempt.Number, err))
			}
		}
		fmt.Fprintf(a.stdout, "job %s attempt %d trace %s record %s state %q queued %s spans %d\n",
			p.Job.ID, p.Attempt.Number, p.TraceID, p.Attempt.DBIndex, p.Attempt.Alloc.State, queueWait(p.Attempt), n)
	}
	emitErrs = append(emitErrs, idleReason(dctx, tracing.Shutdown(dctx)))
	if err := exportVerdict(tracing, int64(total), errors.Join(emitErrs...), r.flush,
		func(w string) { fmt.Fprintf(a.stderr, "lens reckon: %s\n", w) }); err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	return stopped()
}

// attemptSpans yields the completed spans of one attempt: the plan's spans,
// each emitted as a root (flat), the allocation span with the attempt's
// anchor span id, every span linked to the previous attempt's anchor.
func attemptSpans(p *reckon.Plan) iter.Seq[completed.Span] {
	var links []trace.Link
	if p.Previous.IsValid() {
		links = []trace.Link{{SpanContext: p.Previous}}
	}
	return func(yield func(completed.Span) bool) {
		for s := range p.All() {
			cs := completed.Span{Name: s.Name, Start: s.Start, End: s.End, Attributes: s.Attributes, Kind: trace.SpanKindInternal, Links: links}
			if s.Name == reckon.SpanRecordPrefix+reckon.KindAllocation.String() {
				cs.SpanID = p.Anchor
			}
			if !yield(cs) {
				return
			}
		}
	}
}

func queueWait(a *reckon.Attempt) string {
	if a.Alloc.Eligible.IsZero() || a.Alloc.Start.IsZero() {
		return "unknown"
	}
	return a.Alloc.Start.Sub(a.Alloc.Eligible).String()
}

// reckonTracing sets up the trace pipeline as lens exec does, with the
// reckoned job's resource and without a parent from TRACEPARENT.
func (a *app) reckonTracing(ctx, batch context.Context, jobs []reckon.Job) (*telemetry.Tracing, error) {
	cfg, err := telemetry.FromEnv(a.env, "", "")
	if err != nil {
		return nil, fmt.Errorf("telemetry: %v", oneLine(err))
	}
	if cfg.TracesDisabled {
		return nil, errors.New("telemetry: NEMO_LENS_TRACES_ENABLED is false: the spans would go nowhere")
	}
	s, err := telemetry.ReadSettings(a.env, cfg, telemetry.Needs{Traces: true})
	if s.SDKDisabled {
		return nil, errors.New("telemetry: OTEL_SDK_DISABLED is true: the spans would go nowhere")
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: %v", oneLine(err))
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(a.stderr, "lens reckon: %s\n", w)
	}
	if s.Traces.Kind == telemetry.KindNone {
		return nil, errors.New("telemetry: the traces exporter is none: the spans would go nowhere")
	}
	// Each attempt's trace is requested explicitly (ContextWithTraceID): the
	// reckoner's own job is no attempt of the reckoned one.
	s.TracePerAttempt = false
	res := reckonResource(a.env, jobs)
	return telemetry.NewTracing(ctx, res.Resource(), &s, telemetry.TracingOptions{
		Console:     telemetry.ConsoleWriter(a.stderr),
		Diagnostics: a.diag,
		Env:         environ.Map{}, // no TRACEPARENT: each attempt has its own trace
		Batch:       batch,
	})
}

// reckonResource is the carrier (OTEL_RESOURCE_ATTRIBUTES), the SDK's
// attributes, service.name, and the reckoned job's keys, which win.
func reckonResource(env environ.Lookuper, jobs []reckon.Job) *attr.Map {
	text, _ := env.LookupEnv("OTEL_RESOURCE_ATTRIBUTES")
	m := carrier.Parse(text)
	for _, e := range assembly.SDKAttributes() {
		m.Set(e.Key, e.Value)
	}
	if v, ok := environ.NonEmpty(env, "OTEL_SERVICE_NAME"); ok {
		m.SetString(lensconv.ServiceName, v)
	} else if !m.Has(lensconv.ServiceName) {
		m.SetString(lensconv.ServiceName, reckonService)
	}
	j := jobs[0]
	m.SetString(lensconv.SlurmClusterName, j.Cluster)
	if j.ArrayJobID != "" && len(jobs) > 1 {
		m.SetString(lensconv.SlurmArrayJobID, j.ArrayJobID)
		m.Delete(lensconv.SlurmJobID)
	} else {
		m.SetString(lensconv.SlurmJobID, j.ID)
	}
	sluid := ""
	for _, job := range jobs {
		for _, at := range job.Attempts {
			if sluid == "" {
				sluid = at.SLUID
			} else if at.SLUID != sluid {
				sluid = "-"
			}
		}
	}
	if sluid != "" && sluid != "-" {
		m.SetString(lensconv.SlurmSLUID, sluid)
	}
	return m
}
