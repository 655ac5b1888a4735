package reckon

// Tests that kill mutants scripts/mutation.sh found surviving in this
// package (docs/testing.md#mutation); each names the mutant it kills.

import (
	"errors"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/lensconv"
)

// syntaxErrors unwraps Parse's error into its *SyntaxErrors.
func syntaxErrors(t *testing.T, err error) []*SyntaxError {
	t.Helper()
	var out []*SyntaxError
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var se *SyntaxError
		if !errors.As(e, &se) {
			t.Fatalf("error %v is not a *SyntaxError", e)
		}
		out = append(out, se)
	}
	if err != nil {
		walk(err)
	}
	return out
}

// TestParseReadsPastBlankLines: a blank line is skipped and the rows after
// it are read (row.go, the continue after a blank line as break dropped
// them).
func TestParseReadsPastBlankLines(t *testing.T) {
	t.Parallel()
	out := row("9", "9", "a", "REQUEUED", "2026-12-01T10:00:03", "1") + "\n \r\n" +
		row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:09", "4")
	rows, err := Parse(out, false)
	if err != nil || len(rows) != 2 || rows[1].DBIndex != "4" || rows[1].Line != 4 {
		t.Fatalf("Parse = %+v, %v; want the rows of lines 1 and 4", rows, err)
	}
}

// TestParseReportsEveryMalformedLine: every malformed line is reported, by
// its 1-based line number (row.go: the continue after a malformed line as
// break reported only the first; `i+1` as `i-1` numbered lines from -1).
func TestParseReportsEveryMalformedLine(t *testing.T) {
	t.Parallel()
	out := "9|9|a\n" + row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:09", "4") + "also bad\n"
	rows, err := Parse(out, false)
	var lines []int
	for _, se := range syntaxErrors(t, err) {
		lines = append(lines, se.Line)
	}
	if rows != nil || len(lines) != 2 || lines[0] != 1 || lines[1] != 3 {
		t.Errorf("Parse = %d rows, errors on lines %v (%v); want none, lines 1 and 3", len(rows), lines, err)
	}
}

// TestParseNamesTheBadTimeField: a time that does not parse is reported
// with its own field's name and value (row.go, `Fields[5+i]` and `f[5+i]`
// as `5-i` named ExitCode, JobName, ... instead).
func TestParseNamesTheBadTimeField(t *testing.T) {
	t.Parallel()
	out := strings.Replace(row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:09", "4"),
		"|2026-12-01T10:00:01|", "|yesterday|", 1)
	_, err := Parse(out, false)
	ses := syntaxErrors(t, err)
	if len(ses) != 1 || ses[0].Field != "Eligible" || ses[0].Value != "yesterday" {
		t.Errorf("Parse: %v; want one error for field Eligible, value yesterday", err)
	}
}

// TestParseRejectsMalformedJobIDs: a JobID that is not N, N_T, N_[...] or
// N+C is malformed output (row.go, validJobID: the && before the array
// task as || took "x_1", the && of "[" and "]" as || took "9_[1-3", the &&
// of a het component as || took "x+0").
func TestParseRejectsMalformedJobIDs(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"x_1", "9_[1-3", "9_1-3]", "x+0", "9+x"} {
		_, err := Parse(row(id, "9", "a", "COMPLETED", "2026-12-01T10:00:09", "4"), false)
		ses := syntaxErrors(t, err)
		if len(ses) != 1 || ses[0].Field != "JobID" {
			t.Errorf("JobID %q: %v; want a syntax error of JobID", id, err)
		}
	}
}

// TestGroupReportsEveryProblem: Group reports every inconsistent or
// unsupported row, not only the first (group.go: the continue after a
// SLUID conflict, after a het component and after a second allocation row,
// each as break, dropped the problems after it).
func TestGroupReportsEveryProblem(t *testing.T) {
	t.Parallel()
	sluid := func(r, s string) string { return strings.ReplaceAll(r, "\n", "|"+s+"\n") }
	out := sluid(row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:09", "4"), "S1") +
		sluid(row("9.batch", "9.batch", "batch", "COMPLETED", "2026-12-01T10:00:09", "4"), "S2") + // SLUID conflict
		sluid(row("8+0", "8", "a", "COMPLETED", "2026-12-01T10:00:09", "5"), "S3") + // het component
		sluid(row("7", "7", "a", "COMPLETED", "2026-12-01T10:00:09", "6"), "S4") +
		sluid(row("7", "7", "a", "COMPLETED", "2026-12-01T10:00:09", "6"), "S4") + // second allocation row
		sluid(row("8+1", "8", "a", "COMPLETED", "2026-12-01T10:00:09", "7"), "S5") // het component
	rows, err := Parse(out, true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Group(rows)
	var j interface{ Unwrap() []error }
	if !errors.As(err, &j) || len(j.Unwrap()) != 4 {
		t.Fatalf("Group: %v; want 4 problems (lines 2, 3, 5, 6)", err)
	}
	for i, want := range []error{ErrInconsistent, ErrUnsupported, ErrInconsistent, ErrUnsupported} {
		if e := j.Unwrap()[i]; !errors.Is(e, want) {
			t.Errorf("problem %d: %v, want %v", i+1, e, want)
		}
	}
}

// TestGroupRecordsOfOneJobAgree: records of one job that disagree on the
// cluster alone, or on the JobID alone, are inconsistent (group.go,
// `j.Cluster != a.Alloc.Cluster || a.Alloc.JobID != ...` as && needed
// both).
func TestGroupRecordsOfOneJobAgree(t *testing.T) {
	t.Parallel()
	first := row("9_3", "11", "a", "REQUEUED", "2026-12-01T10:00:05", "4")
	second := row("9_3", "11", "a", "COMPLETED", "2026-12-01T10:00:09", "12")
	for name, out := range map[string]string{
		"cluster": first + strings.Replace(second, "|c1|", "|c2|", 1),
		"job id":  first + strings.Replace(second, "9_3|", "9_4|", 1),
	} {
		if got := classify(parseGroup(out, false)); got != "inconsistent" {
			t.Errorf("records disagreeing on the %s: %s, want inconsistent", name, got)
		}
	}
}

// planSpan is the span named name of the one attempt of out's one job.
func planSpan(t *testing.T, out string, sluid bool, name string) (Plan, Span) {
	t.Helper()
	jobs, err := parseGroup(out, sluid)
	if err != nil {
		t.Fatal(err)
	}
	plans, err := Plans(jobs, Options{})
	if err != nil || len(plans) != 1 {
		t.Fatalf("Plans = %d plans, %v; want 1", len(plans), err)
	}
	for s := range plans[0].All() {
		if s.Name == name {
			return plans[0], s
		}
	}
	t.Fatalf("no span %s in %+v", name, plans[0].Spans())
	return Plan{}, Span{}
}

// TestPlansAttributesByKind: the array ids are on the spans of an array
// task only, the SLUID only when accounting has one, the step id only on
// step records; the attempt anchor is for jobs outside arrays only
// (spans.go: `j.ArrayJobID != ""` as ==, `a.SLUID != ""` as ==,
// `r.Kind != KindAllocation` as ==, `j.ArrayJobID == ""` as !=).
func TestPlansAttributesByKind(t *testing.T) {
	t.Parallel()
	const end = "2026-12-01T10:00:09"
	plain := row("9", "9", "a", "COMPLETED", end, "4") + row("9.0", "9.0", "x", "COMPLETED", end, "4")
	p, alloc := planSpan(t, plain, false, SpanRecordPrefix+"allocation")
	_, step := planSpan(t, plain, false, SpanRecordPrefix+"step")
	if !p.Anchor.IsValid() {
		t.Error("job outside an array: no attempt anchor")
	}
	for _, key := range []string{lensconv.SlurmArrayJobID, lensconv.SlurmArrayTaskID, lensconv.SlurmSLUID, AttrStepID} {
		if v := attrOf(alloc.Attributes, key); v != "" {
			t.Errorf("allocation record of a plain job: %s = %q", key, v)
		}
	}
	if v := attrOf(step.Attributes, AttrStepID); v != "0" {
		t.Errorf("step record: %s = %q, want 0", AttrStepID, v)
	}

	array := strings.ReplaceAll(row("9_3", "11", "a", "COMPLETED", end, "4"), "\n", "|S-1\n")
	p, alloc = planSpan(t, array, true, SpanRecordPrefix+"allocation")
	if p.Anchor.IsValid() {
		t.Error("array task: an attempt anchor")
	}
	for key, want := range map[string]string{lensconv.SlurmArrayJobID: "9", lensconv.SlurmArrayTaskID: "3", lensconv.SlurmSLUID: "S-1"} {
		if v := attrOf(alloc.Attributes, key); v != want {
			t.Errorf("allocation record of an array task: %s = %q, want %q", key, v, want)
		}
	}
}
