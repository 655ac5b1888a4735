package main

import (
	"strings"
	"testing"

	"github.com/nemolens/lens-go/carrier"
)

// TestTaskPrologNewlineSegment: an inherited carrier segment holding a
// newline never costs the task its carrier line: a malformed one is
// dropped as the reference drops it (docs/compatibility.md#lens-env), a
// valid one is left out (slurmstepd reads one line per export) and
// reported; the line carries the rest and the Slurm attributes. On edd0320
// lens taskprolog printed no carrier line for OTEL_RESOURCE_ATTRIBUTES=$'a=1,x\ny'.
func TestTaskPrologNewlineSegment(t *testing.T) {
	t.Parallel()
	policy := emptyPolicy(t)
	for _, tc := range []struct {
		inherited, prefix string
		report            bool
	}{
		{"a=1,x\ny", "export OTEL_RESOURCE_ATTRIBUTES=a=1,slurm.job.id=7", false},
		{"a=1\n2,b=2", "export OTEL_RESOURCE_ATTRIBUTES=b=2,slurm.job.id=7", true},
		{"a,=1, ,,b=2", "export OTEL_RESOURCE_ATTRIBUTES=b=2,slurm.job.id=7", false},
	} {
		r := prologBin(t, map[string]string{carrier.EnvVar: tc.inherited, "SLURM_JOB_ID": "7"}, policy)
		var line string
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(l, "export "+carrier.EnvVar+"=") {
				line = l
			}
		}
		if r.code != 0 || !strings.HasPrefix(line, tc.prefix) || strings.Contains(r.stdout, "x\ny") {
			t.Errorf("inherited %q: %v; want a carrier line starting %q", tc.inherited, r, tc.prefix)
		}
		if reported := strings.Contains(r.stderr, "segment holding a newline or a NUL was left out"); reported != tc.report {
			t.Errorf("inherited %q: stderr %q, want a report: %v", tc.inherited, r.stderr, tc.report)
		}
	}
}

// TestEnvDropsMalformedSegments: lens env keeps the inherited segments the
// parse reads, byte for byte, and drops the blank and malformed ones before
// it appends, as the reference's set-slurm-resource-attrs does.
func TestEnvDropsMalformedSegments(t *testing.T) {
	t.Parallel()
	r := runIn(t, map[string]string{carrier.EnvVar: "a,=1, ,,k=%41 , x=1", "SLURM_JOB_ID": "7"}, "", "env", "--stage", "sbatch")
	if want := "export OTEL_RESOURCE_ATTRIBUTES='k=%41 , x=1,slurm.job.id=7"; r.code != 0 || !strings.HasPrefix(r.stdout, want) {
		t.Errorf("%v; want stdout starting %q", r, want)
	}
}
