package reckon

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Fields are the sacct fields read, in this order (docs/reckoner.md#fields).
var Fields = []string{
	"JobID", "JobIDRaw", "JobName", "State", "ExitCode",
	"Submit", "Eligible", "Start", "End", "DBIndex", "Cluster", "NodeList",
}

// SLUIDField is the field of the Slurm-wide unique job id, requested (after
// [Fields]) when `sacct --helpformat` lists it.
const SLUIDField = "SLUID"

// TimeLayout is the layout of sacct's times with SLURM_TIME_FORMAT=standard;
// the times are read in UTC, the zone sacct is run with (TZ=UTC).
const TimeLayout = "2006-01-02T15:04:05"

// Kind is what an accounting row records.
type Kind int

// The kinds of rows.
const (
	// KindAllocation is the job record of one attempt (JobID without a step).
	KindAllocation Kind = iota
	// KindBatch is the batch step (JobID "N.batch").
	KindBatch
	// KindExtern is the extern step (JobID "N.extern", PrologFlags=Contain).
	KindExtern
	// KindStep is any other step ("N.0", "N.interactive", ...).
	KindStep
)

// String is the kind's name, as in the span name slurm.record.<kind>.
func (k Kind) String() string {
	switch k {
	case KindAllocation:
		return "allocation"
	case KindBatch:
		return "batch"
	case KindExtern:
		return "extern"
	default:
		return "step"
	}
}

// Row is one accounting row. Zero times are unknown ("Unknown", "None" or
// empty in sacct's output).
type Row struct {
	// Line is the 1-based line of the row in sacct's output.
	Line int
	// JobID is sacct's JobID: "N", "N_T" (array task), "N+C" (het
	// component), each optionally followed by ".STEP".
	JobID string
	// JobIDRaw is the numeric id of the job (of the array task), with the
	// step suffix.
	JobIDRaw string
	Name     string
	State    string
	ExitCode string
	Submit   time.Time
	Eligible time.Time
	Start    time.Time
	End      time.Time
	// DBIndex is the database index of the job record the row belongs to:
	// each attempt of a requeued job has its own, and its steps carry it.
	DBIndex  string
	Cluster  string
	NodeList string
	// SLUID is the Slurm-wide unique id, where sacct has the field.
	SLUID string

	Kind Kind
	// Step is the step part of JobID ("batch", "extern", "0", ...), "" for
	// the allocation row.
	Step string
}

// ErrSyntax is wrapped by every error about malformed sacct output.
var ErrSyntax = errors.New("malformed sacct output")

// SyntaxError is a malformed line of sacct's output.
type SyntaxError struct {
	Line   int
	Field  string
	Value  string
	Reason string
}

func (e *SyntaxError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("sacct output line %d: %s", e.Line, e.Reason)
	}
	return fmt.Sprintf("sacct output line %d: field %s %q: %s", e.Line, e.Field, e.Value, e.Reason)
}

func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Delimiter separates sacct's fields (--delimiter): the ASCII unit
// separator, a control character no job name, state or node list holds
// (docs/reckoner.md#fields).
const Delimiter = "\x1f"

// nameField is the index of JobName, the one field a user writes freely.
const nameField = 2

// Parse reads `sacct -P -n -o FIELDS` output, FIELDS being [Fields] followed
// by [SLUIDField] when withSLUID. A line's fields are separated by
// [Delimiter], or by sacct's default '|' on a line without it (recorded
// output, a site wrapper that drops --delimiter); a line with more fields
// than FIELDS has a separator in its job name, the one free-text field,
// which takes the extra ones. Empty lines are skipped. Every malformed line
// is reported (errors.Join); no row of a malformed output is returned.
func Parse(out string, withSLUID bool) ([]Row, error) {
	want := len(Fields)
	if withSLUID {
		want++
	}
	var rows []Row
	var errs []error
	for i, line := range strings.Split(out, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		r, err := parseLine(i+1, line, want)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rows = append(rows, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return rows, nil
}

func parseLine(n int, line string, want int) (Row, error) {
	sep := Delimiter
	if !strings.Contains(line, Delimiter) {
		sep = "|"
	}
	f := strings.Split(line, sep)
	if extra := len(f) - want; extra > 0 {
		// The job name holds the separator: it takes the extra fields.
		name := strings.Join(f[nameField:nameField+extra+1], sep)
		f = append(append(f[:nameField:nameField], name), f[nameField+extra+1:]...)
	}
	if len(f) != want {
		return Row{}, &SyntaxError{Line: n, Reason: fmt.Sprintf("%d fields, want %d (%s)", len(f), want, strings.Join(Fields, ","))}
	}
	r := Row{Line: n, JobID: f[0], JobIDRaw: f[1], Name: f[2], State: f[3], ExitCode: f[4],
		DBIndex: f[9], Cluster: f[10], NodeList: f[11]}
	if want > len(Fields) {
		r.SLUID = f[12]
	}
	var errs []error
	for i, p := range []*time.Time{&r.Submit, &r.Eligible, &r.Start, &r.End} {
		t, err := parseTime(f[5+i])
		if err != nil {
			errs = append(errs, &SyntaxError{Line: n, Field: Fields[5+i], Value: f[5+i], Reason: err.Error()})
		}
		*p = t
	}
	if r.DBIndex == "" || !digits(r.DBIndex) {
		errs = append(errs, &SyntaxError{Line: n, Field: "DBIndex", Value: r.DBIndex, Reason: "not a number (is accounting stored by slurmdbd?)"})
	}
	job, step, hasStep := strings.Cut(r.JobID, ".")
	rawJob, rawStep, rawHasStep := strings.Cut(r.JobIDRaw, ".")
	switch {
	case job == "" || !validJobID(job):
		errs = append(errs, &SyntaxError{Line: n, Field: "JobID", Value: r.JobID, Reason: "not a job id"})
	case !digits(rawJob):
		errs = append(errs, &SyntaxError{Line: n, Field: "JobIDRaw", Value: r.JobIDRaw, Reason: "not a job id"})
	case hasStep != rawHasStep || step != rawStep:
		errs = append(errs, &SyntaxError{Line: n, Field: "JobIDRaw", Value: r.JobIDRaw, Reason: "step differs from JobID " + r.JobID})
	case hasStep && step == "":
		errs = append(errs, &SyntaxError{Line: n, Field: "JobID", Value: r.JobID, Reason: "empty step"})
	}
	if len(errs) > 0 {
		return Row{}, errors.Join(errs...)
	}
	r.Step = step
	switch {
	case !hasStep:
		r.Kind = KindAllocation
	case step == "batch":
		r.Kind = KindBatch
	case step == "extern":
		r.Kind = KindExtern
	default:
		r.Kind = KindStep
	}
	return r, nil
}

// parseTime reads one sacct time; "Unknown", "None" and "" are unknown (zero).
func parseTime(s string) (time.Time, error) {
	switch s {
	case "", "Unknown", "None":
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation(TimeLayout, s, time.UTC)
	if err != nil {
		return time.Time{}, errors.New("not a time in the layout " + TimeLayout + " (sacct run with SLURM_TIME_FORMAT=standard)")
	}
	return t, nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// validJobID accepts "N", "N_T" and "N+C" (sacct's JobID without a step).
func validJobID(s string) bool {
	if a, b, ok := strings.Cut(s, "_"); ok {
		// "N_[2-5%2]": array tasks that have not been split off yet.
		return digits(a) && (digits(b) || strings.HasPrefix(b, "[") && strings.HasSuffix(b, "]"))
	}
	if a, b, ok := strings.Cut(s, "+"); ok {
		return digits(a) && digits(b)
	}
	return digits(s)
}

// ValidJobArg reports whether s is a job id lens reckon accepts: "N" or
// "N_T" (one array task).
func ValidJobArg(s string) bool {
	if a, b, ok := strings.Cut(s, "_"); ok {
		return digits(a) && digits(b)
	}
	return digits(s)
}
