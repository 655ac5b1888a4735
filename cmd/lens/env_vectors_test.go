package main

import (
	"strings"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/shellquote"
	"github.com/nemolens/lens-go/internal/testvectors"
	"github.com/nemolens/lens-go/lensconv"
)

// referenceEnvLine is the line the reference's launcher command
// (nemo-lens set-slurm-resource-attrs --stage sbatch) prints for an
// environment whose carrier is inherited (had: set) and whose Slurm
// attributes, as the reference detects them, are slurm
// (docs/compatibility.md#lens-env): the inherited segments that the parse
// reads (see referenceSegments) byte for byte, then a comma and the
// formatted attributes whose keys the inherited carrier does not hold,
// slurm.topology.* left out. The appended part uses the codec the parse and
// format vectors pin; the rest is spelled out here.
func referenceEnvLine(inherited string, slurm *attr.Map) string {
	inherited = referenceSegments(inherited)
	held := carrier.Parse(inherited)
	add := &attr.Map{}
	for k, v := range slurm.All() {
		if held.Has(k) || k == lensconv.SlurmTopologyAddr || k == lensconv.SlurmTopologyAddrPattern {
			continue
		}
		add.Set(k, v)
	}
	tail, _ := carrier.Format(add)
	value := inherited
	switch {
	case tail == "":
	case value == "":
		value = tail
	default:
		value += "," + tail
	}
	return "export OTEL_RESOURCE_ATTRIBUTES=" + shellquote.Quote(value) + "\n"
}

// referenceSegments is the inherited carrier as the reference keeps it
// before appending: the segments with '=' and a key that is not blank
// (Python's str.strip), byte for byte, joined by ','; blank and malformed
// segments ("a", "=1", " ", ",,") are dropped.
func referenceSegments(text string) string {
	var kept []string
	for _, seg := range strings.Split(text, ",") {
		if k, _, ok := strings.Cut(seg, "="); ok && strings.Trim(k, " \t\n\r\v\f\x1c\x1d\x1e\x1f\u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000") != "" {
			kept = append(kept, seg)
		}
	}
	return strings.Join(kept, ",")
}

// TestEnvVectors: lens env --stage sbatch in the environment of every
// detect_slurm conformance vector (the captured Slurm jobs among them, some
// with an inherited carrier), and in environments whose inherited carrier
// re-formatting would change (escapes, duplicate segments) or holds
// malformed and blank segments, prints the reference's line: the valid
// inherited segments kept byte for byte, the others dropped (on edd0320
// they were kept).
func TestEnvVectors(t *testing.T) {
	t.Parallel()
	type row struct {
		id    string
		env   map[string]string
		slurm *attr.Map // the reference's detected Slurm attributes
	}
	var rows []row
	for _, v := range testvectors.ForOp(t, "detect_slurm") {
		want, err := v.ExpectedMap()
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row{v.ID, v.Env, want})
	}
	// Inherited carriers that Extend would re-format, in a job whose Slurm
	// attributes the first captured vector gives.
	base := rows[0]
	inherited := 0
	for _, c := range []string{
		"a=%41",                            // the escape stays as written
		"odd=%2Fpre%2Dencoded, malformed ", // a malformed segment is dropped
		"a=1,a=2,,b= x ",                   // duplicates and spaces stay, an empty segment goes
		"slurm.job.id=launch,z=%7a",        // an inherited Slurm key wins
		"raw=\xc3",                         // bytes that are not UTF-8 pass through
		"a",                                // no '=': dropped
		"=1,b=2",                           // a blank key: dropped
		" ",                                // blank: dropped
		",,",                               // empty segments: dropped
		"a=1,x\ny",                         // a malformed segment holding a newline: dropped
		"\u00a0=1,c=3,",                    // Python's str.strip blanks: dropped
	} {
		env := map[string]string{carrier.EnvVar: c}
		for k, v := range base.env {
			if k != carrier.EnvVar {
				env[k] = v
			}
		}
		// The reference's detected map: the inherited keys first, then the
		// derived ones the carrier does not hold (detect_slurm's order).
		slurm := carrier.Parse(c)
		for k, v := range base.slurm.All() {
			if !slurm.Has(k) {
				slurm.Set(k, v)
			}
		}
		rows = append(rows, row{"inherited " + c, env, slurm})
	}
	for _, r := range rows {
		if _, ok := r.env[carrier.EnvVar]; ok {
			inherited++
		}
		t.Run(r.id, func(t *testing.T) {
			t.Parallel()
			got := runIn(t, environ.Map(r.env), "", "env", "--stage", "sbatch")
			want := referenceEnvLine(r.env[carrier.EnvVar], r.slurm)
			if got.code != 0 || got.stdout != want {
				t.Errorf("lens env --stage sbatch: %v\nwant stdout %q", got, want)
			}
			if c, ok := r.env[carrier.EnvVar]; ok && !strings.HasPrefix(strings.Trim(strings.TrimPrefix(got.stdout, "export OTEL_RESOURCE_ATTRIBUTES="), "'\n"), strings.ReplaceAll(referenceSegments(c), "'", `'"'"'`)) {
				t.Errorf("the inherited carrier's valid segments %q are not the export's prefix: %q", referenceSegments(c), got.stdout)
			}
		})
	}
	if inherited < 8 {
		t.Errorf("only %d environments with an inherited carrier", inherited)
	}
}
