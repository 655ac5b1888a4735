package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os/exec"
	"strings"
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
requeue gaps (docs/reckoner.md). Run it after the job has ended:
  sbatch --dependency=afterany:JOBID examples/reckon.sbatch JOBID`,
	setup: func(fs *flag.FlagSet) runFunc {
		var infra keyList
		fs.Var(&infra, "infra-step", "comma-separated step `NAMES` (sacct JobName) of infrastructure, left out of the workload phase (repeatable)")
		flush := fs.Duration("flush-timeout", 10*time.Second, "spend at most `D` exporting the spans")
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
			return a.reckon(ctx, args[0], reckon.Options{InfraSteps: infra}, *wait, *flush)
		}
	},
}

// sacctRunner runs sacct from PATH with lens's environment plus TZ=UTC and
// SLURM_TIME_FORMAT=standard, so that its times are UTC in one layout.
func (a *app) sacctRunner() reckon.Runner {
	if a.sacct != nil {
		return a.sacct
	}
	return func(ctx context.Context, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "sacct", args...)
		cmd.Env = append(a.environ(), "TZ=UTC", "SLURM_TIME_FORMAT=standard")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.Output()
		if err != nil {
			if msg := strings.TrimSpace(stderr.String()); msg != "" {
				err = fmt.Errorf("%w: %s", err, strings.ReplaceAll(msg, "\n", "; "))
			}
			return nil, err
		}
		return out, nil
	}
}

// reckonPoll is the interval of lens reckon --wait.
const reckonPoll = time.Second

func (a *app) reckon(ctx context.Context, job string, o reckon.Options, wait, flush time.Duration) error {
	deadline := time.Now().Add(wait)
	poll := a.reckonPoll
	if poll <= 0 {
		poll = reckonPoll
	}
	var jobs []reckon.Job
	var err error
	var nf *reckon.NotFinal
	for {
		jobs, err = reckon.Read(ctx, a.sacctRunner(), job)
		if !errors.As(err, &nf) || !time.Now().Add(poll).Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
	if errors.As(err, &nf) {
		fmt.Fprintf(a.stdout, "lens reckon: job %s: %s; nothing exported. Run the reckoner after the job has ended:\n  sbatch --dependency=afterany:%s examples/reckon.sbatch %s\n", job, nf.Reason, job, job)
		return nil
	}
	if err != nil {
		return err
	}
	plans, err := reckon.Plans(jobs, o)
	if err != nil {
		return err
	}
	tracing, err := a.reckonTracing(ctx, jobs)
	if err != nil {
		return err
	}
	tracer := tracing.Provider().Tracer(reckonScope)
	var emitErrs []error
	for _, p := range plans {
		tctx := completed.ContextWithTraceID(ctx, p.TraceID)
		// completed.Emit wants the names of one set unique (children name
		// their parent); the reckoner's spans are flat, so each is a set.
		for _, cs := range attemptSpans(p) {
			if err := completed.Emit(tctx, tracer, []completed.Span{cs}); err != nil {
				emitErrs = append(emitErrs, fmt.Errorf("job %s attempt %d: %w", p.Job.ID, p.Attempt.Number, err))
			}
		}
		fmt.Fprintf(a.stdout, "job %s attempt %d trace %s record %s state %q queued %s spans %d\n",
			p.Job.ID, p.Attempt.Number, p.TraceID, p.Attempt.DBIndex, p.Attempt.Alloc.State, queueWait(p.Attempt), len(p.Spans))
	}
	sctx, cancel := context.WithTimeout(context.Background(), flush)
	defer cancel()
	err = tracing.Shutdown(sctx)
	if c := tracing.Counts(); err == nil && c.Exported != c.Ended {
		err = fmt.Errorf("%d of %d spans exported (%d dropped, %d failed)", c.Exported, c.Ended, c.Dropped, c.Failed)
	}
	if err != nil {
		emitErrs = append(emitErrs, fmt.Errorf("telemetry: %v", oneLine(err)))
	}
	return errors.Join(emitErrs...)
}

// attemptSpans are the completed spans of one attempt: the plan's spans,
// each emitted as a root (flat), the allocation span with the attempt's
// anchor span id, every span linked to the previous attempt's anchor.
func attemptSpans(p reckon.Plan) []completed.Span {
	out := make([]completed.Span, 0, len(p.Spans))
	for _, s := range p.Spans {
		cs := completed.Span{Name: s.Name, Start: s.Start, End: s.End, Attributes: s.Attributes, Kind: trace.SpanKindInternal}
		if s.Name == reckon.SpanRecordPrefix+reckon.KindAllocation.String() {
			cs.SpanID = p.Anchor
		}
		if p.Previous.IsValid() {
			cs.Links = []trace.Link{{SpanContext: p.Previous}}
		}
		out = append(out, cs)
	}
	return out
}

func queueWait(a *reckon.Attempt) string {
	if a.Alloc.Eligible.IsZero() || a.Alloc.Start.IsZero() {
		return "unknown"
	}
	return a.Alloc.Start.Sub(a.Alloc.Eligible).String()
}

// reckonTracing sets up the trace pipeline as lens exec does, with the
// reckoned job's resource and without a parent from TRACEPARENT.
func (a *app) reckonTracing(ctx context.Context, jobs []reckon.Job) (*telemetry.Tracing, error) {
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
