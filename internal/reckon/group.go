package reckon

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Attempt is one attempt of a job: one accounting record (the allocation
// row) and the rows of its steps.
type Attempt struct {
	// Number counts the job's attempts from 0 in the order of their records
	// (DBIndex); it is the attempt's SLURM_RESTART_COUNT.
	Number int
	// DBIndex and SLUID identify the record (docs/reckoner.md#attempts).
	DBIndex string
	SLUID   string
	// Alloc is the allocation row; Rows are the step rows in sacct's order.
	Alloc Row
	Rows  []Row
}

// Job is one Slurm job (one array task) and its attempts, oldest first.
type Job struct {
	// ID is the numeric job id (JobIDRaw of the allocation rows).
	ID string
	// ArrayJobID and ArrayTaskID are set for an array task.
	ArrayJobID, ArrayTaskID string
	Cluster                 string
	Attempts                []Attempt
}

// ErrUnsupported is wrapped when the records describe something the
// reckoner does not handle (a heterogeneous job).
var ErrUnsupported = errors.New("unsupported job")

// ErrInconsistent is wrapped when rows that share a record disagree.
var ErrInconsistent = errors.New("inconsistent accounting rows")

// NotFinal says why the accounting has no final record of a job yet.
type NotFinal struct {
	Reason string
}

func (e *NotFinal) Error() string { return "no final accounting record yet: " + e.Reason }

// Group groups parsed rows by attempt: rows belong to the attempt whose
// record they carry (SLUID where known, and DBIndex), never to a time
// window. Jobs are ordered by id, attempts by record. It returns a *NotFinal
// error when a record is not final (a job still pending, running or
// requeued, an unknown end, or no rows at all), and errors wrapping
// ErrInconsistent or ErrUnsupported for records it cannot read.
func Group(rows []Row) ([]Job, error) {
	if len(rows) == 0 {
		return nil, &NotFinal{Reason: "sacct returned no rows (job unknown to accounting, or not yet recorded)"}
	}
	type key struct{ sluid, db string }
	byKey := map[key]*Attempt{}
	var order []key
	var errs []error
	sluidOf := map[string]Row{}
	for _, r := range rows {
		if o, seen := sluidOf[r.DBIndex]; seen && o.SLUID != r.SLUID {
			errs = append(errs, fmt.Errorf("sacct output lines %d and %d: record %s has SLUIDs %q and %q: %w", o.Line, r.Line, r.DBIndex, o.SLUID, r.SLUID, ErrInconsistent))
			continue
		}
		sluidOf[r.DBIndex] = r
		job, _, _ := strings.Cut(r.JobID, ".")
		if strings.Contains(job, "+") {
			errs = append(errs, fmt.Errorf("sacct output line %d: %s is a heterogeneous job component: %w", r.Line, r.JobID, ErrUnsupported))
			continue
		}
		if strings.Contains(job, "[") {
			return nil, &NotFinal{Reason: fmt.Sprintf("array tasks %s have not started yet", job)}
		}
		k := key{r.SLUID, r.DBIndex}
		a := byKey[k]
		if a == nil {
			a = &Attempt{DBIndex: r.DBIndex, SLUID: r.SLUID}
			byKey[k] = a
			order = append(order, k)
		}
		if r.Kind == KindAllocation {
			if a.Alloc.JobID != "" {
				errs = append(errs, fmt.Errorf("sacct output lines %d and %d: two allocation rows for record %s: %w", a.Alloc.Line, r.Line, r.DBIndex, ErrInconsistent))
				continue
			}
			a.Alloc = r
		} else {
			a.Rows = append(a.Rows, r)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	jobs := map[string]*Job{}
	for _, k := range order {
		a := byKey[k]
		if a.Alloc.JobID == "" {
			return nil, &NotFinal{Reason: fmt.Sprintf("record %s has step rows (%s) but no job row yet", a.DBIndex, a.Rows[0].JobID)}
		}
		for _, r := range a.Rows {
			if rawJob(r.JobIDRaw) != a.Alloc.JobIDRaw {
				errs = append(errs, fmt.Errorf("sacct output line %d: step %s carries record %s of job %s: %w", r.Line, r.JobIDRaw, a.DBIndex, a.Alloc.JobIDRaw, ErrInconsistent))
			}
		}
		j := jobs[a.Alloc.JobIDRaw]
		if j == nil {
			j = &Job{ID: a.Alloc.JobIDRaw, Cluster: a.Alloc.Cluster}
			if arr, task, ok := strings.Cut(a.Alloc.JobID, "_"); ok {
				j.ArrayJobID, j.ArrayTaskID = arr, task
			}
			jobs[j.ID] = j
		} else if j.Cluster != a.Alloc.Cluster || a.Alloc.JobID != j.Attempts[0].Alloc.JobID {
			errs = append(errs, fmt.Errorf("sacct output lines %d and %d: records of job %s disagree on cluster or job id: %w", j.Attempts[0].Alloc.Line, a.Alloc.Line, j.ID, ErrInconsistent))
		}
		j.Attempts = append(j.Attempts, *a)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out := make([]Job, 0, len(jobs))
	for _, j := range jobs {
		slices.SortFunc(j.Attempts, func(a, b Attempt) int { return cmp.Compare(num(a.DBIndex), num(b.DBIndex)) })
		for i := range j.Attempts {
			j.Attempts[i].Number = i
		}
		if err := final(j); err != nil {
			return nil, err
		}
		errs = append(errs, impossible(j)...)
		out = append(out, *j)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(out, func(a, b Job) int { return cmp.Compare(num(a.ID), num(b.ID)) })
	return out, nil
}

// notFinalStates are the allocation states of a job that has not ended; a
// REQUEUED record is final only when a later attempt follows it.
var notFinalStates = []string{"PENDING", "RUNNING", "SUSPENDED", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD",
	"RESIZING", "CONFIGURING", "COMPLETING", "SIGNALING", "STAGE_OUT", "STOPPED"}

func final(j *Job) error {
	for i, a := range j.Attempts {
		state, _, _ := strings.Cut(a.Alloc.State, " ") // "CANCELLED by 0"
		last := i == len(j.Attempts)-1
		if slices.Contains(notFinalStates, state) && (last || state != "REQUEUED") {
			return &NotFinal{Reason: fmt.Sprintf("job %s is %s", a.Alloc.JobID, a.Alloc.State)}
		}
		// Observed on 22.05: a requeued attempt's record can reach the
		// database with its end before its eligible time (and job name); a
		// started attempt was eligible, so its record is not complete yet.
		if !a.Alloc.Start.IsZero() && (a.Alloc.Eligible.IsZero() || a.Alloc.Submit.IsZero()) {
			return &NotFinal{Reason: fmt.Sprintf("record %s of job %s has a start but no submit or eligible time yet", a.DBIndex, a.Alloc.JobID)}
		}
		for r := range a.all() {
			if r.End.IsZero() {
				return &NotFinal{Reason: fmt.Sprintf("%s (%s) has no end time yet", r.JobID, r.State)}
			}
		}
	}
	return nil
}

// ErrImpossible is wrapped when a final record's times cannot be
// (docs/reckoner.md#impossible): nothing of the job is exported then.
var ErrImpossible = errors.New("impossible accounting record")

// minTime and maxTime bound the times a span can carry (an OTLP timestamp:
// nanoseconds since the Unix epoch in an int64).
var (
	minTime = time.Unix(0, 0)
	maxTime = time.Unix(0, math.MaxInt64)
)

// impossible returns an error, naming the row, the fields and their
// values, for each time of j's records that cannot be: out of a span's
// range, an end before its start, an eligible time before the submit
// time, a start before the eligible time.
func impossible(j *Job) []error {
	var errs []error
	bad := func(r *Row, what string) {
		errs = append(errs, fmt.Errorf("sacct output line %d: %s (%s): %s: %w", r.Line, r.JobID, r.State, what, ErrImpossible))
	}
	for _, a := range j.Attempts {
		for r := range a.all() {
			for i, t := range []time.Time{r.Submit, r.Eligible, r.Start, r.End} {
				if !t.IsZero() && (t.Before(minTime) || t.After(maxTime)) {
					bad(r, fmt.Sprintf("%s %s is out of range (1970 to 2262)", Fields[5+i], t.Format(TimeLayout)))
				}
			}
			before(r, "End", r.End, "Start", r.Start, bad)
		}
		al := &a.Alloc
		before(al, "Eligible", al.Eligible, "Submit", al.Submit, bad)
		before(al, "Start", al.Start, "Eligible", al.Eligible, bad)
	}
	return errs
}

// before reports (through bad) that the later time, when both are known,
// is before the earlier one.
func before(r *Row, laterName string, later time.Time, earlierName string, earlier time.Time, bad func(*Row, string)) {
	if !later.IsZero() && !earlier.IsZero() && later.Before(earlier) {
		bad(r, fmt.Sprintf("%s %s is before %s %s", laterName, later.Format(TimeLayout), earlierName, earlier.Format(TimeLayout)))
	}
}

// all yields the attempt's allocation row, then its step rows, without
// copying them.
func (a *Attempt) all() iter.Seq[*Row] {
	return func(yield func(*Row) bool) {
		if !yield(&a.Alloc) {
			return
		}
		for i := range a.Rows {
			if !yield(&a.Rows[i]) {
				return
			}
		}
	}
}

func rawJob(s string) string {
	j, _, _ := strings.Cut(s, ".")
	return j
}

// num orders numeric strings (validated digits) numerically.
func num(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}
