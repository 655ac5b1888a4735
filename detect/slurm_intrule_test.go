package detect

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/lensconv"
)

// reasonRecorder is a slog.Handler that keeps the "reason" attribute of
// every record.
type reasonRecorder struct {
	mu      *sync.Mutex
	reasons *[]string
}

func newReasonRecorder() reasonRecorder {
	return reasonRecorder{mu: &sync.Mutex{}, reasons: &[]string{}}
}

func (r reasonRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r reasonRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r reasonRecorder) WithGroup(string) slog.Handler            { return r }
func (r reasonRecorder) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "reason" {
			r.mu.Lock()
			*r.reasons = append(*r.reasons, a.Value.String())
			r.mu.Unlock()
		}
		return true
	})
	return nil
}

func (r reasonRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(*r.reasons)
}

// TestSlurmLocalIntegerRule pins the intentional divergence of
// docs/compatibility.md#divergence-slurm-local-integers: local Slurm
// integers follow the strict integer rule (as carrier values do), where the
// Python reference's local derivation calls int(). The two columns are what
// lens emits for slurm.ntasks and what Python's int() reads (computed with
// pytext.IntText, whose own rows are checked against CPython in
// internal/pytext's TestIntText);
// where they differ, the explanation (and, for a rejected value, the DEBUG
// message) names the reference's result.
func TestSlurmLocalIntegerRule(t *testing.T) {
	t.Parallel()
	const reading = "; lens applies the strict integer rule to local values too)"
	cases := []struct {
		name     string
		value    string // SLURM_NTASKS
		lens     int64  // what lens emits; -1: slurm.ntasks is omitted
		python   string // what Python's int() reads; "" = ValueError
		note     string // the explanation's note on slurm.ntasks; "" = none
		debugged bool   // the note is also the reason of a DEBUG message
	}{
		{"underscore separator", "1_0", -1, "10",
			`SLURM_NTASKS="1_0" is not a base-10 integer (the Python reference's int() reads 10` + reading + ``, true},
		{"Arabic-Indic digits", "١٠", -1, "10",
			`SLURM_NTASKS="١٠" is not a base-10 integer (the Python reference's int() reads 10` + reading + ``, true},
		{"trailing U+001F", "5\x1f", 5, "",
			`SLURM_NTASKS="5\x1f" is read as 5 (the Python reference's int() rejects it and omits slurm.ntasks` + reading, false},
		{"leading U+001C", "\x1c5", 5, "",
			`SLURM_NTASKS="\x1c5" is read as 5 (the Python reference's int() rejects it and omits slurm.ntasks` + reading, false},
		{"spaces", " 5 ", 5, "5", "", false},
		{"no-break space", "\u00a05", 5, "5", "", false},
		{"beyond int64", "99999999999999999999", -1, "99999999999999999999",
			`SLURM_NTASKS="99999999999999999999" is not a base-10 integer (the Python reference's int() reads 99999999999999999999` + reading + ``, true},
		{"rejected by both", "x", -1, "",
			`SLURM_NTASKS="x" is not a base-10 integer`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// The Python column.
			py, ok := pytext.IntText(c.value)
			if c.python == "" {
				if ok {
					t.Errorf("int(%q) = %s, want ValueError", c.value, py)
				}
			} else if !ok || py != c.python {
				t.Errorf("int(%q) = %q, %v; want %s", c.value, py, ok, c.python)
			}

			// The lens column.
			rec := newReasonRecorder()
			e := &Explanation{}
			env := environ.Map{"SLURM_JOB_ID": "1", "SLURM_NTASKS": c.value}
			got := Slurm(context.Background(), WithEnv(env), WithExplanation(e), WithLogger(slog.New(rec)))
			v, present := got.Get(lensconv.SlurmNTasks)
			switch {
			case c.lens < 0 && present:
				t.Errorf("slurm.ntasks = %v, want it omitted", v)
			case c.lens >= 0 && (!present || v.AsInt64() != c.lens):
				t.Errorf("slurm.ntasks = %v (present %v), want %d", v, present, c.lens)
			}

			o, _ := e.Origin(lensconv.SlurmNTasks)
			var want []string
			if c.note != "" {
				want = []string{c.note}
			}
			if !slices.Equal(o.Notes, want) {
				t.Errorf("explanation notes\n got %q\nwant %q", o.Notes, want)
			}

			var wantReasons []string
			if c.debugged {
				wantReasons = []string{strings.TrimSuffix(c.note, "")}
			}
			if got := rec.all(); !slices.Equal(got, wantReasons) {
				t.Errorf("DEBUG reasons\n got %q\nwant %q", got, wantReasons)
			}
		})
	}
}

// TestSlurmLocalIntegerRuleChosenFirst: the Python clause comes before the
// note on the variables that were not consulted, and a carrier value that
// wins is said to be used.
func TestSlurmLocalIntegerRuleChosenFirst(t *testing.T) {
	t.Parallel()
	e := &Explanation{}
	env := environ.Map{
		"SLURM_JOB_ID": "1", "SLURM_JOB_NUM_NODES": "1_0", "SLURM_NNODES": "4", "SLURM_RESTART_COUNT": "2\x1f",
		"OTEL_RESOURCE_ATTRIBUTES": "slurm.restart_count=3",
	}
	got := Slurm(context.Background(), WithEnv(env), WithExplanation(e))
	if got.Has(lensconv.SlurmNNodes) {
		t.Errorf("slurm.nnodes is present: %v", got)
	}
	if v, _ := got.Get(lensconv.SlurmRestartCount); v.AsInt64() != 3 {
		t.Errorf("slurm.restart_count = %v, want the carrier's 3", v)
	}
	o, _ := e.Origin(lensconv.SlurmNNodes)
	want := []string{`SLURM_JOB_NUM_NODES="1_0" is not a base-10 integer (the Python reference's int() reads 10; ` +
		`lens applies the strict integer rule to local values too) (SLURM_NNODES not consulted)`}
	if !slices.Equal(o.Notes, want) {
		t.Errorf("slurm.nnodes notes\n got %q\nwant %q", o.Notes, want)
	}
	o, _ = e.Origin(lensconv.SlurmRestartCount)
	want = []string{
		`the carrier value wins over SLURM_RESTART_COUNT ("2")`,
		`SLURM_RESTART_COUNT="2\x1f" is read as 2 (the Python reference's int() rejects it and omits ` +
			`slurm.restart_count; lens applies the strict integer rule to local values too); the carrier value is used`,
	}
	if !slices.Equal(o.Notes, want) {
		t.Errorf("slurm.restart_count notes\n got %q\nwant %q", o.Notes, want)
	}
}
