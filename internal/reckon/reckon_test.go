package reckon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

func load(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// span is a planned span reduced to what the tests compare.
type span struct {
	name, start, end string
}

func spansOf(p Plan) []span {
	var out []span
	for _, s := range p.Spans() {
		out = append(out, span{s.Name, s.Start.Format("15:04:05"), s.End.Format("15:04:05")})
	}
	return out
}

func plansOf(t *testing.T, file string, o Options) []Plan {
	t.Helper()
	rows, err := Parse(load(t, file), false)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := Group(rows)
	if err != nil {
		t.Fatal(err)
	}
	plans, err := Plans(jobs, o)
	if err != nil {
		t.Fatal(err)
	}
	return plans
}

func equalSpans(t *testing.T, what string, got, want []span) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s spans:\n got  %v\n want %v", what, got, want)
	}
}

// The recorded outputs come from the e2e cluster (Slurm 22.05.8, slurmdbd +
// MariaDB); the expected times are read off those files by hand.
func TestPlansRecorded(t *testing.T) {
	t.Parallel()
	t.Run("completed", func(t *testing.T) {
		p := plansOf(t, "completed.sacct", Options{})
		if len(p) != 1 {
			t.Fatalf("%d plans, want 1", len(p))
		}
		equalSpans(t, "completed", spansOf(p[0]), []span{
			{SpanDeferred, "21:10:32", "21:10:32"},
			{SpanQueued, "21:10:32", "21:10:32"},
			{"slurm.record.allocation", "21:10:32", "21:10:35"},
			{"slurm.record.batch", "21:10:32", "21:10:35"},
			{"slurm.record.extern", "21:10:32", "21:10:35"},
			{"slurm.record.step", "21:10:33", "21:10:35"},
			{"slurm.record.step", "21:10:35", "21:10:35"},
			{SpanWorkload, "21:10:33", "21:10:35"},
			{SpanCleanupTail, "21:10:35", "21:10:35"},
		})
	})
	t.Run("requeued", func(t *testing.T) {
		p := plansOf(t, "requeued.sacct", Options{})
		if len(p) != 2 {
			t.Fatalf("%d plans, want 2 (one per attempt)", len(p))
		}
		if p[0].Attempt.Number != 0 || p[1].Attempt.Number != 1 || p[0].Attempt.DBIndex != "3" || p[1].Attempt.DBIndex != "5" {
			t.Errorf("attempts %+v %+v, want 0 (record 3) and 1 (record 5)", p[0].Attempt, p[1].Attempt)
		}
		if p[0].TraceID == p[1].TraceID {
			t.Errorf("both attempts in trace %s", p[0].TraceID)
		}
		equalSpans(t, "attempt 0", spansOf(p[0]), []span{
			{SpanDeferred, "21:10:39", "21:10:39"},
			{SpanQueued, "21:10:39", "21:10:40"},
			{"slurm.record.allocation", "21:10:40", "21:10:42"},
			{"slurm.record.batch", "21:10:40", "21:10:42"},
			{"slurm.record.extern", "21:10:40", "21:10:42"},
			{"slurm.record.step", "21:10:40", "21:10:41"},
			{SpanWorkload, "21:10:40", "21:10:41"},
			{SpanCleanupTail, "21:10:42", "21:10:42"},
		})
		equalSpans(t, "attempt 1", spansOf(p[1]), []span{
			{SpanDeferred, "21:10:43", "21:10:44"},
			{SpanQueued, "21:10:44", "21:10:45"},
			{"slurm.record.allocation", "21:10:45", "21:10:46"},
			{"slurm.record.batch", "21:10:45", "21:10:46"},
			{"slurm.record.extern", "21:10:45", "21:10:46"},
			{"slurm.record.step", "21:10:45", "21:10:46"},
			{SpanWorkload, "21:10:45", "21:10:46"},
			{SpanCleanupTail, "21:10:46", "21:10:46"},
			{SpanRequeueGap, "21:10:42", "21:10:45"},
		})
	})
	t.Run("killed", func(t *testing.T) {
		p := plansOf(t, "killed.sacct", Options{})
		equalSpans(t, "killed", spansOf(p[0]), []span{
			{SpanDeferred, "21:11:25", "21:11:25"},
			{SpanQueued, "21:11:25", "21:11:25"},
			{"slurm.record.allocation", "21:11:25", "21:11:28"},
			{"slurm.record.batch", "21:11:25", "21:11:29"},
			{"slurm.record.extern", "21:11:25", "21:11:29"},
			{"slurm.record.step", "21:11:26", "21:11:29"},
			{SpanWorkload, "21:11:26", "21:11:29"},
			{SpanCleanupTail, "21:11:28", "21:11:29"},
		})
		if got := attrOf(p[0].Spans()[2].Attributes, AttrState); got != "CANCELLED by 0" {
			t.Errorf("allocation state %q", got)
		}
	})
	t.Run("infra step", func(t *testing.T) {
		p := plansOf(t, "infra-step.sacct", Options{InfraSteps: []string{"dcgm"}})
		equalSpans(t, "infra", spansOf(p[0])[7:], []span{
			{SpanWorkload, "21:11:30", "21:11:33"},
			{SpanCleanupTail, "21:11:36", "21:11:36"},
		})
		if got := attrOf(p[0].Spans()[5].Attributes, AttrInfra); got != "true" {
			t.Errorf("dcgm step: slurm.step.infra %q, want true", got)
		}
		p = plansOf(t, "infra-step.sacct", Options{})
		equalSpans(t, "unmarked", spansOf(p[0])[7:8], []span{{SpanWorkload, "21:11:30", "21:11:36"}})
	})
	t.Run("deferred", func(t *testing.T) {
		p := plansOf(t, "deferred.sacct", Options{})
		equalSpans(t, "deferred", spansOf(p[0])[:2], []span{
			{SpanDeferred, "21:11:29", "21:11:32"},
			{SpanQueued, "21:11:32", "21:11:36"},
		})
	})
	t.Run("array", func(t *testing.T) {
		p := plansOf(t, "array.sacct", Options{})
		if len(p) != 2 || p[0].Job.ID != "5" || p[1].Job.ID != "7" || p[0].Job.ArrayTaskID != "1" || p[1].Job.ArrayTaskID != "0" {
			t.Fatalf("array plans: %d", len(p))
		}
		// detect's rule: every task of an array has the array's run UUID.
		if p[0].TraceID != p[1].TraceID {
			t.Errorf("array tasks in traces %s and %s, want one (docs/detection.md#run-uuid)", p[0].TraceID, p[1].TraceID)
		}
	})
}

func attrOf(kvs []attribute.KeyValue, key string) string {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

// The trace id is the attempt's nv.dl.run.uuid, as a task of that attempt
// derives it from its own environment.
func TestTraceIDIsRunUUID(t *testing.T) {
	t.Parallel()
	p := plansOf(t, "requeued.sacct", Options{})
	for i, env := range []environ.Map{
		{"SLURM_CLUSTER_NAME": "lensprobe", "SLURM_JOB_ID": "2", "SLURM_JOB_NAME": "i18r-rq.sh"},
		{"SLURM_CLUSTER_NAME": "lensprobe", "SLURM_JOB_ID": "2", "SLURM_RESTART_COUNT": "1"},
	} {
		u, _ := detect.RunUUID(env, "")
		want := strings.ReplaceAll(u, "-", "")
		if got := p[i].TraceID.String(); got != want {
			t.Errorf("attempt %d: trace %s, want %s (run uuid %s)", i, got, want, u)
		}
	}
}

func TestNotFinal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, reason string }{
		{"running.sacct", "is PENDING"},
		{"pending.sacct", "no rows"},
		{"unknown.sacct", "no rows"},
		// Recorded right after a requeued job ended: the second record has
		// its end, but not yet its eligible time (it came ~1 s later).
		{"requeued-eligible-late.sacct", "no submit or eligible time yet"},
	} {
		rows, err := Parse(load(t, tc.file), false)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		_, err = Group(rows)
		var nf *NotFinal
		if !errors.As(err, &nf) || !strings.Contains(nf.Reason, tc.reason) {
			t.Errorf("%s: %v, want NotFinal containing %q", tc.file, err, tc.reason)
		}
	}
}

const line = "%s|%s|%s|%s|0:0|2026-12-01T10:00:00|2026-12-01T10:00:01|2026-12-01T10:00:02|%s|%s|c1|n1\n"

func row(id, raw, name, state, end, db string) string {
	return fmt.Sprintf(line, id, raw, name, state, end, db)
}

// rowT is a row with all four times given.
func rowT(id, state, submit, eligible, start, end string) string {
	return strings.Join([]string{id, id, "a", state, "0:0", submit, eligible, start, end, "4", "c1", "n1"}, "|") + "\n"
}

const (
	t0 = "2026-12-01T10:00:00"
	t1 = "2026-12-01T10:00:01"
	t2 = "2026-12-01T10:00:02"
	t3 = "2026-12-01T10:00:03"
)

// groupCases are hand-written edge cases; they also seed FuzzParseGroup.
var groupCases = []struct {
	name, out string
	sluid     bool
	// want is "attempts:N" per job, or an error kind.
	want string
}{
	{"requeued twice", row("9", "9", "a", "REQUEUED", "2026-12-01T10:00:03", "1") + row("9.batch", "9.batch", "batch", "CANCELLED", "2026-12-01T10:00:03", "1") +
		row("9", "9", "a", "REQUEUED", "2026-12-01T10:00:05", "4") + row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:09", "12") +
		row("9.batch", "9.batch", "batch", "COMPLETED", "2026-12-01T10:00:09", "12"), false, "9:3"},
	{"records out of order", row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:09", "12") + row("9", "9", "a", "REQUEUED", "2026-12-01T10:00:05", "4"), false, "9:2"},
	{"last attempt requeued", row("9", "9", "a", "REQUEUED", "2026-12-01T10:00:05", "4"), false, "notfinal"},
	{"step without job row", row("9.batch", "9.batch", "batch", "COMPLETED", "2026-12-01T10:00:05", "4"), false, "notfinal"},
	{"running", row("9", "9", "a", "RUNNING", "Unknown", "4"), false, "notfinal"},
	{"step end unknown", row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:05", "4") + row("9.0", "9.0", "x", "RUNNING", "Unknown", "4"), false, "notfinal"},
	{"pending array tasks", row("9_[1-3]", "9", "a", "PENDING", "Unknown", "4"), false, "notfinal"},
	{"het job", row("9+0", "9", "a", "COMPLETED", "2026-12-01T10:00:05", "4"), false, "unsupported"},
	{"two job rows one record", row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:05", "4") + row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:05", "4"), false, "inconsistent"},
	{"step of another job", row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:05", "4") + row("8.0", "8.0", "x", "COMPLETED", "2026-12-01T10:00:05", "4"), false, "inconsistent"},
	{"bad time", strings.Replace(row("9", "9", "a", "COMPLETED", "2026-12-01 10:00:05", "4"), "", "", 1), false, "syntax"},
	{"no db index", row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:05", ""), false, "syntax"},
	{"too few fields", "9|9|a\n", false, "syntax"},
	{"raw step differs", row("9.0", "9.1", "x", "COMPLETED", "2026-12-01T10:00:05", "4"), false, "syntax"},
	{"sluid", strings.ReplaceAll(row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:05", "4"), "\n", "|S1\n"), true, "9:1"},
	{"sluid splits a record", strings.ReplaceAll(row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:05", "4"), "\n", "|S1\n") +
		strings.ReplaceAll(row("9.0", "9.0", "x", "COMPLETED", "2026-12-01T10:00:05", "4"), "\n", "|S2\n"), true, "inconsistent"},
	{"started, eligible not recorded yet", strings.Replace(row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:05", "4"), "|2026-12-01T10:00:01|", "|Unknown|", 1), false, "notfinal"},
	{"cancelled while pending", strings.Replace(row("9", "9", "a", "CANCELLED by 0", "2026-12-01T10:00:05", "4"), "|2026-12-01T10:00:02|", "|None|", 1), false, "9:1"},
	{"array task", row("9_3", "11", "a", "COMPLETED", "2026-12-01T10:00:05", "4"), false, "11:1"},
	// Issue 30: a DBIndex that is not a number; a started attempt without
	// a submit time is not final.
	{"db index 12a", row("9", "9", "a", "COMPLETED", "2026-12-01T10:00:05", "12a"), false, "syntax"},
	{"started, submit not recorded yet", rowT("9", "COMPLETED", "Unknown", t1, t2, t3), false, "notfinal"},
	// Impossible records (docs/reckoner.md#impossible), each limit at, one
	// second below and one second above.
	{"end before start", rowT("9", "COMPLETED", t0, t1, t3, t2), false, "impossible"},
	{"end at start", rowT("9", "COMPLETED", t0, t1, t2, t2), false, "9:1"},
	{"step end before start", rowT("9", "COMPLETED", t0, t1, t2, t3) + rowT("9.0", "COMPLETED", t0, t1, t3, t2), false, "impossible"},
	{"eligible before submit", rowT("9", "COMPLETED", t1, t0, t2, t3), false, "impossible"},
	{"eligible at submit", rowT("9", "COMPLETED", t1, t1, t2, t3), false, "9:1"},
	{"start before eligible", rowT("9", "COMPLETED", t0, t2, t1, t3), false, "impossible"},
	{"start at eligible", rowT("9", "COMPLETED", t0, t1, t1, t3), false, "9:1"},
	{"step ends in 9999", rowT("9", "COMPLETED", t0, t1, t2, t3) + rowT("9.0", "COMPLETED", t0, t1, t2, "9999-12-31T23:59:59"), false, "impossible"},
	{"end at the last second", rowT("9", "COMPLETED", t0, t1, t2, "2262-04-11T23:47:16"), false, "9:1"},
	{"end past the last second", rowT("9", "COMPLETED", t0, t1, t2, "2262-04-11T23:47:17"), false, "impossible"},
	{"submit at the epoch", rowT("9", "COMPLETED", "1970-01-01T00:00:00", t1, t2, t3), false, "9:1"},
	{"submit before the epoch", rowT("9", "COMPLETED", "1969-12-31T23:59:59", t1, t2, t3), false, "impossible"},
	// The delimiter in a job name: the name takes the extra fields.
	{"name with the default delimiter", row("9", "9", "a|b", "COMPLETED", t3, "4"), false, "9:1"},
	{"name with two delimiters", row("9", "9", "a||b", "COMPLETED", t3, "4"), false, "9:1"},
	{"unit separator", strings.ReplaceAll(row("9", "9", "a|b", "COMPLETED", t3, "4"), "|", Delimiter), false, "9:1"},
	{"one field short", strings.Replace(row("9", "9", "a", "COMPLETED", t3, "4"), "|c1", "", 1), false, "syntax"},
}

func classify(jobs []Job, err error) string {
	var nf *NotFinal
	var se *SyntaxError
	switch {
	case err == nil:
		var parts []string
		for _, j := range jobs {
			parts = append(parts, fmt.Sprintf("%s:%d", j.ID, len(j.Attempts)))
		}
		return strings.Join(parts, ",")
	case errors.As(err, &nf):
		return "notfinal"
	case errors.Is(err, ErrUnsupported):
		return "unsupported"
	case errors.Is(err, ErrInconsistent):
		return "inconsistent"
	case errors.Is(err, ErrImpossible):
		return "impossible"
	case errors.As(err, &se) && errors.Is(err, ErrSyntax):
		return "syntax"
	}
	return "other: " + err.Error()
}

func parseGroup(out string, sluid bool) ([]Job, error) {
	rows, err := Parse(out, sluid)
	if err != nil {
		return nil, err
	}
	return Group(rows)
}

func TestGroupCases(t *testing.T) {
	t.Parallel()
	for _, tc := range groupCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := classify(parseGroup(tc.out, tc.sluid)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func FuzzParseGroup(f *testing.F) {
	for _, tc := range groupCases {
		f.Add(tc.out, tc.sluid)
	}
	f.Fuzz(func(t *testing.T, out string, sluid bool) {
		jobs, err := parseGroup(out, sluid)
		if err != nil {
			if c := classify(nil, err); strings.HasPrefix(c, "other") {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		plans, err := Plans(jobs, Options{InfraSteps: []string{"x"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range plans {
			for _, s := range p.Spans() {
				if s.End.Before(s.Start) || s.Start.IsZero() {
					t.Fatalf("span %s %v..%v", s.Name, s.Start, s.End)
				}
			}
		}
	})
}

func TestRead(t *testing.T) {
	t.Parallel()
	help := load(t, "helpformat-22.05.txt")
	if HasSLUID(help) {
		t.Fatal("22.05 has no SLUID field")
	}
	var calls [][]string
	run := func(_ context.Context, args ...string) ([]byte, error) {
		calls = append(calls, args)
		if args[0] == "--helpformat" {
			return []byte(help + " SLUID\n"), nil
		}
		return []byte(strings.ReplaceAll(load(t, "completed.sacct"), "\n", "|sluid-1\n")), nil
	}
	jobs, err := Read(context.Background(), run, "1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "-j 1 -D -P --delimiter=" + Delimiter + " -n -o " + strings.Join(Fields, ",") + ",SLUID"; strings.Join(calls[1], " ") != want {
		t.Errorf("sacct %q, want %q", calls[1], want)
	}
	if jobs[0].Attempts[0].SLUID != "sluid-1" {
		t.Errorf("SLUID %q", jobs[0].Attempts[0].SLUID)
	}
	boom := errors.New("boom")
	_, err = Read(context.Background(), func(context.Context, ...string) ([]byte, error) { return nil, boom }, "1")
	if !errors.Is(err, ErrSacct) || !errors.Is(err, boom) {
		t.Errorf("failing sacct: %v", err)
	}
}

func TestValidJobArg(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{"12": true, "12_3": true, "": false, "12_": false, "12.batch": false, "12+0": false, "-1": false, "12_[1-3]": false} {
		if got := ValidJobArg(s); got != want {
			t.Errorf("ValidJobArg(%q) = %v", s, got)
		}
	}
}

// TestParseJobNameDelimiter: a job name holding '|' (sacct's default
// delimiter) or the unit separator is read whole, and the fields after it
// stay in place.
func TestParseJobNameDelimiter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ out, name string }{
		{strings.ReplaceAll(row("9", "9", "x", "COMPLETED", t3, "4"), "|", Delimiter), "x"},
		{strings.ReplaceAll(row("9", "9", "@", "COMPLETED", t3, "4"), "|", Delimiter), "@"},
		{strings.ReplaceAll(strings.ReplaceAll(row("9", "9", "@", "COMPLETED", t3, "4"), "|", Delimiter), "@", "a|b"), "a|b"},
		{strings.ReplaceAll(row("9", "9", "a\x1fb", "COMPLETED", t3, "4"), "|", Delimiter), "a\x1fb"},
		{row("9", "9", "a|b|c", "COMPLETED", t3, "4"), "a|b|c"},
	} {
		rows, err := Parse(tc.out, false)
		if err != nil {
			t.Fatalf("%q: %v", tc.out, err)
		}
		if r := rows[0]; r.Name != tc.name || r.State != "COMPLETED" || r.DBIndex != "4" || r.NodeList != "n1" {
			t.Errorf("%q: name %q state %q db %q nodes %q", tc.out, r.Name, r.State, r.DBIndex, r.NodeList)
		}
	}
}

// TestOfJob: rows of a job that was not asked for (a site wrapper that
// ignores -j) are refused, each by line; an array job id takes its tasks.
func TestOfJob(t *testing.T) {
	t.Parallel()
	rows, err := Parse(row("9", "9", "a", "COMPLETED", t3, "4")+row("9.0", "9.0", "a", "COMPLETED", t3, "4")+
		row("7_2", "12", "a", "COMPLETED", t3, "5")+row("8", "8", "a", "COMPLETED", t3, "6"), false)
	if err != nil {
		t.Fatal(err)
	}
	rows90, err := Parse(row("90", "90", "a", "COMPLETED", t3, "7")+row("90.0", "90.0", "a", "COMPLETED", t3, "7")+
		row("90_1", "91", "a", "COMPLETED", t3, "8"), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		job  string
		rows []Row
		bad  []string
	}{
		{"9", rows[:2], nil},
		{"9", rows, []string{"line 3", "line 4"}},
		{"7", rows[2:3], nil},
		{"7_2", rows[2:3], nil},
		{"12", rows[2:3], nil},
		{"7_3", rows[2:3], []string{"line 3"}},
		{"90", rows[:1], []string{"line 1"}},
		// Job 90 and its array task are not job 9's (break: the array
		// task's prefix job+"_" as job).
		{"9", rows90, []string{"line 1", "line 2", "line 3"}},
	} {
		err := OfJob(tc.rows, tc.job)
		if (err != nil) != (tc.bad != nil) || err != nil && !errors.Is(err, ErrOtherJob) {
			t.Errorf("job %s: %v, want lines %v", tc.job, err, tc.bad)
			continue
		}
		for _, l := range tc.bad {
			if !strings.Contains(err.Error(), l) {
				t.Errorf("job %s: %v, want %s", tc.job, err, l)
			}
		}
	}
}

// TestRequeueGapIgnoresLateInfraStep: an infrastructure step of the
// previous attempt that ends after its other rows does not move the start
// of slurm.phase.requeue_gap (break: drop `!slices.Contains(o.InfraSteps,
// r.Name) &&` in the previous attempt's loop of attemptSpans).
func TestRequeueGapIgnoresLateInfraStep(t *testing.T) {
	t.Parallel()
	line := func(id, name, state, submit, start, end, db string) string {
		return strings.Join([]string{id, id, name, state, "0:0", submit, submit, start, end, db, "c1", "n1"}, "|") + "\n"
	}
	out := line("9", "a", "REQUEUED", t0, t1, t3, "1") +
		line("9.0", "train", "COMPLETED", t1, t1, t3, "1") +
		line("9.1", "dcgm", "CANCELLED", t1, t1, "2026-12-01T10:00:08", "1") +
		line("9", "a", "COMPLETED", "2026-12-01T10:00:09", "2026-12-01T10:00:10", "2026-12-01T10:00:20", "2") +
		line("9.0", "train", "COMPLETED", "2026-12-01T10:00:10", "2026-12-01T10:00:10", "2026-12-01T10:00:20", "2")
	jobs, err := parseGroup(out, false)
	if err != nil {
		t.Fatal(err)
	}
	plans, err := Plans(jobs, Options{InfraSteps: []string{"dcgm"}})
	if err != nil {
		t.Fatal(err)
	}
	var gap []span
	for _, s := range spansOf(plans[1]) {
		if s.name == SpanRequeueGap {
			gap = append(gap, s)
		}
	}
	if want := []span{{SpanRequeueGap, "10:00:03", "10:00:10"}}; !slices.Equal(gap, want) {
		t.Errorf("requeue gap %v, want %v (from the last non-infrastructure end)", gap, want)
	}
}
