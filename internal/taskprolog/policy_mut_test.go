package taskprolog_test

import (
	"errors"
	"testing"

	"github.com/nemolens/lens-go/internal/taskprolog"
)

// TestParsePolicyGoesOnAfterAFault: each faulty line is reported, the lines
// after it still are (every fault, with its line number), and a valid log
// line after a faulty one still sets Log, where lens taskprolog reports the
// faults (docs/testing.md#mutation). Kills two mutants of
// internal/taskprolog/policy.go: the continue after a NUL in a value as
// break (the rest of the file was not read), and `IndexByte(value, 0) >= 0`
// as `> 0` (a value starting with NUL was taken).
func TestParsePolicyGoesOnAfterAFault(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name, text string
		errs       []error
		line       []int
		log        string
	}{
		{name: "syntax", text: "just words\nranks = x\nlog = /l\n",
			errs: []error{taskprolog.ErrSyntax, taskprolog.ErrBadValue}, line: []int{1, 2}, log: "/l"},
		{name: "NUL", text: "service_name = a\x00b\nranks = x\nlog = /l\n",
			errs: []error{taskprolog.ErrNUL, taskprolog.ErrBadValue}, line: []int{1, 2}, log: "/l"},
		{name: "relative log", text: "log = l\nranks = x\n",
			errs: []error{taskprolog.ErrBadValue, taskprolog.ErrBadValue}, line: []int{1, 2}},
		{name: "value starting with NUL", text: "service_name = \x00a\nlog = /l\n",
			errs: []error{taskprolog.ErrNUL}, line: []int{1}, log: "/l"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			p, err := taskprolog.ParsePolicy("p.conf", []byte(r.text))
			var joined interface{ Unwrap() []error }
			if !errors.As(err, &joined) {
				t.Fatalf("ParsePolicy: %v, want a join of %d errors", err, len(r.errs))
			}
			got := joined.Unwrap()
			if len(got) != len(r.errs) {
				t.Fatalf("errors %q, want %d", err, len(r.errs))
			}
			for i, e := range got {
				var pe *taskprolog.PolicyError
				if !errors.As(e, &pe) || !errors.Is(e, r.errs[i]) || pe.Line != r.line[i] {
					t.Errorf("error %d: %v, want %v on line %d", i, e, r.errs[i], r.line[i])
				}
			}
			if p.Log != r.log || p.NoCarrier || p.Ranks != "" || p.ServiceName != "" || p.Env != nil {
				t.Errorf("policy %+v, want only Log %q", p, r.log)
			}
		})
	}
}

// TestParsePolicyReadsPastComments: blank and comment lines are skipped,
// and the lines after them are read (internal/taskprolog/policy.go, the
// continue after a blank or comment line as break ignored the rest of the
// file).
func TestParsePolicyReadsPastComments(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"# ranks\nranks = slurm\n", "\nranks = slurm\n", "  \t\r\nranks = slurm\n"} {
		p, err := taskprolog.ParsePolicy("p.conf", []byte(text))
		if err != nil || p.Ranks != taskprolog.RanksSlurm {
			t.Errorf("ParsePolicy(%q) = %+v, %v; want ranks = slurm", text, p, err)
		}
	}
}
