package reckon

import (
	"fmt"
	"iter"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/traceid"
	"github.com/nemolens/lens-go/lensconv"
)

// The span names (docs/reckoner.md#spans).
const (
	SpanDeferred    = "slurm.phase.deferred"
	SpanQueued      = "slurm.phase.queued"
	SpanCleanupTail = "slurm.phase.cleanup_tail"
	SpanWorkload    = "slurm.phase.workload"
	SpanRequeueGap  = "slurm.phase.requeue_gap"
	// SpanRecordPrefix is followed by the row's [Kind].
	SpanRecordPrefix = "slurm.record."
)

// Attribute keys of the reckoner's spans besides lensconv's slurm.* keys
// (docs/reckoner.md#attributes).
const (
	AttrState    = "slurm.accounting.state"
	AttrExitCode = "slurm.accounting.exit_code"
	AttrNodeList = "slurm.accounting.nodelist"
	AttrDBIndex  = "slurm.accounting.db_index"
	AttrStepID   = "slurm.step.id"
	AttrStepName = "slurm.step.name"
	AttrInfra    = "slurm.step.infra"
	// AttrPreviousDBIndex is on slurm.phase.requeue_gap: the previous attempt's record.
	AttrPreviousDBIndex = "slurm.accounting.previous_db_index"
)

// Span is one planned span: times from accounting, no parent (the spans of
// an attempt are flat roots of its trace).
type Span struct {
	Name       string
	Start, End time.Time
	Attributes []attribute.KeyValue
}

// Plan is the trace of one attempt.
type Plan struct {
	Job     *Job
	Attempt *Attempt
	// RunUUID is the attempt's nv.dl.run.uuid and TraceID its 16 bytes.
	RunUUID string
	TraceID trace.TraceID
	// Anchor is the attempt's anchor span id (docs/tracing.md#attempt-trace-id),
	// the id of its slurm.record.allocation span; Previous is the previous
	// attempt's trace and anchor, which every span links to. Both are unset
	// for an array task, whose attempts share one trace.
	Anchor   trace.SpanID
	Previous trace.SpanContext

	prev *Attempt // the previous attempt, nil for the first
	opts Options
}

// All yields the attempt's spans in a stable order: the phases, the
// records in sacct's order, the derived phases. Each span is built as it
// is yielded, so that reckoning a job holds one span's attributes at a
// time beside its rows (docs/reckoner.md#bounds).
func (p *Plan) All() iter.Seq[Span] {
	return func(yield func(Span) bool) { attemptSpans(p.Job, p.Attempt, p.prev, p.opts, yield) }
}

// Spans returns the spans All yields, in one slice.
func (p *Plan) Spans() []Span { return slices.Collect(p.All()) }

// Options change the plan.
type Options struct {
	// InfraSteps are step names (sacct JobName) of co-scheduled
	// infrastructure steps: they keep their slurm.record.step span (with
	// slurm.step.infra=true) and are left out of slurm.phase.workload and
	// slurm.phase.cleanup_tail.
	InfraSteps []string
}

// RunEnv is the environment the tasks of an attempt see, as far as
// nv.dl.run.uuid reads it (docs/detection.md#run-uuid): the cluster, the
// job (or array) ids and, outside arrays, the restart count.
func RunEnv(j *Job, a *Attempt) environ.Map {
	env := environ.Map{"SLURM_CLUSTER_NAME": j.Cluster, "SLURM_JOB_ID": j.ID}
	if j.ArrayJobID != "" {
		env["SLURM_ARRAY_JOB_ID"] = j.ArrayJobID
		env["SLURM_ARRAY_TASK_ID"] = j.ArrayTaskID
	}
	if a.Number > 0 {
		env["SLURM_RESTART_COUNT"] = fmt.Sprint(a.Number)
	}
	return env
}

// Plans returns the traces of every attempt of jobs, in order.
func Plans(jobs []Job, o Options) ([]Plan, error) {
	var out []Plan
	for ji := range jobs {
		j := &jobs[ji]
		for ai := range j.Attempts {
			a := &j.Attempts[ai]
			u, ok := detect.RunUUID(RunEnv(j, a), "")
			if !ok {
				return nil, fmt.Errorf("job %s: no nv.dl.run.uuid", j.ID)
			}
			tid, err := traceid.FromUUID(u)
			if err != nil {
				return nil, err
			}
			p := Plan{Job: j, Attempt: a, RunUUID: u, TraceID: tid}
			if j.ArrayJobID == "" {
				p.Anchor = traceid.Anchor(tid)
			}
			var prev *Attempt
			if ai > 0 {
				prev = &j.Attempts[ai-1]
				if last := out[len(out)-1]; last.Anchor.IsValid() {
					// The link every process of this attempt makes (docs/tracing.md#attempt-links).
					link, _ := traceid.Attempt{TraceID: tid, Previous: last.TraceID}.Link()
					p.Previous = link.SpanContext
				}
			}
			p.prev, p.opts = prev, o
			out = append(out, p)
		}
	}
	return out, nil
}

// common are the attributes of every span of an attempt.
func common(j *Job, a *Attempt) []attribute.KeyValue {
	kv := []attribute.KeyValue{
		attribute.String(lensconv.SlurmJobID, j.ID),
		attribute.String(lensconv.SlurmClusterName, j.Cluster),
		attribute.Int(lensconv.SlurmRestartCount, a.Number),
		attribute.String(AttrDBIndex, a.DBIndex),
	}
	if j.ArrayJobID != "" {
		kv = append(kv, attribute.String(lensconv.SlurmArrayJobID, j.ArrayJobID), attribute.String(lensconv.SlurmArrayTaskID, j.ArrayTaskID))
	}
	if a.SLUID != "" {
		kv = append(kv, attribute.String(lensconv.SlurmSLUID, a.SLUID))
	}
	return kv
}

// attemptSpans yields the spans of attempt a (see Plan.All) until yield
// returns false.
func attemptSpans(j *Job, a *Attempt, prev *Attempt, o Options, yield func(Span) bool) {
	base := common(j, a)
	more := true
	// known reports whether a span from start to end is yielded: both ends
	// known (Group refuses an end before its start).
	known := func(start, end time.Time) bool {
		return more && !start.IsZero() && !end.IsZero() && !end.Before(start)
	}
	add := func(name string, start, end time.Time, extra ...attribute.KeyValue) {
		if known(start, end) {
			more = yield(Span{Name: name, Start: start, End: end, Attributes: append(slices.Clip(base), extra...)})
		}
	}
	al := &a.Alloc
	add(SpanDeferred, al.Submit, al.Eligible)
	add(SpanQueued, al.Eligible, al.Start)
	var last, wStart, wEnd time.Time
	for i := -1; i < len(a.Rows); i++ {
		r := al
		if i >= 0 {
			r = &a.Rows[i]
		}
		infra := r.Kind == KindStep && slices.Contains(o.InfraSteps, r.Name)
		if known(r.Start, r.End) {
			more = yield(Span{Name: SpanRecordPrefix + r.Kind.String(), Start: r.Start, End: r.End, Attributes: recordAttrs(base, al.Name, r, infra)})
		}
		if infra {
			continue
		}
		if r.End.After(last) {
			last = r.End
		}
		if r.Kind == KindStep && !r.Start.IsZero() {
			if wStart.IsZero() || r.Start.Before(wStart) {
				wStart = r.Start
			}
			if r.End.After(wEnd) {
				wEnd = r.End
			}
		}
	}
	add(SpanWorkload, wStart, wEnd)
	add(SpanCleanupTail, al.End, last)
	if prev != nil {
		pe := prev.Alloc.End
		for _, r := range prev.Rows {
			if !slices.Contains(o.InfraSteps, r.Name) && r.End.After(pe) {
				pe = r.End
			}
		}
		add(SpanRequeueGap, pe, al.Start, attribute.String(AttrPreviousDBIndex, prev.DBIndex))
	}
}

// recordAttrs are the attributes of row r's record span: base, then the
// row's state, exit code, node list and the job's name, a step's id and
// name, and the infrastructure mark.
func recordAttrs(base []attribute.KeyValue, jobName string, r *Row, infra bool) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, len(base)+7)
	kv = append(append(kv, base...), attribute.String(AttrState, r.State), attribute.String(AttrExitCode, r.ExitCode),
		attribute.String(AttrNodeList, r.NodeList), attribute.String(lensconv.SlurmJobName, jobName))
	if r.Kind != KindAllocation {
		kv = append(kv, attribute.String(AttrStepID, r.Step), attribute.String(AttrStepName, r.Name))
	}
	if infra {
		kv = append(kv, attribute.Bool(AttrInfra, true))
	}
	return kv
}
