package completed_test

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nemolens/lens-go/internal/callgrind"
)

// maxGrowth is the largest growth exponent allowed between the small and the
// large set: instructions grow as spans^k (docs/performance.md#batch-export).
// Linear work measures about 1 (less with fixed costs); the chain on 85caa10
// measured 1.83 per ×10 spans.
const maxGrowth = 1.1

// TestEmitLinear fails when exporting a set of completed spans (flat or a
// chain, through Lens's batch pipeline) or reckoning a job becomes
// super-linear. It counts instructions instead of timing:
// completed/internal/emitdriver runs each operation once, under Valgrind's
// callgrind, with 500 and 8,000 spans (steps); for each operation the
// exponent k = log(instructions ratio) / log(16) must be at most maxGrowth.
// Valgrind is required when CI=true; elsewhere the test is skipped without
// it, and with -short.
func TestEmitLinear(t *testing.T) {
	ci := os.Getenv("CI") == "true"
	valgrind, err := exec.LookPath("valgrind")
	if err != nil {
		if ci {
			t.Fatal("valgrind is not installed, and CI=true requires it: install the Debian package valgrind")
		}
		t.Skip("valgrind is not installed (Debian package valgrind): instruction-count check skipped")
	}
	if testing.Short() && !ci {
		t.Skip("-short: instruction-count check skipped")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is needed to build the driver: %v", err)
	}
	dir := t.TempDir()
	driver := filepath.Join(dir, "emitdriver")
	if out, err := exec.Command(goTool, "build", "-race=false", "-o", driver, "./internal/emitdriver").CombinedOutput(); err != nil {
		t.Fatalf("building the driver: %v\n%s", err, out)
	}
	// A corrupted profile is measured again (callgrind.Measure).
	callgrind.Measure(t, dir, func(dir string) ([]string, []string) { return measureEmit(t, valgrind, driver, dir) })
}

// measureEmit runs the driver under callgrind with 500 and 8,000 spans in
// dir and returns what breaks the linear bound (empty: none) and a line
// per operation.
func measureEmit(t *testing.T, valgrind, driver, dir string) (problems, notes []string) {
	t.Helper()
	const small, large = 500, 8000
	costs := map[int]map[string]int64{}
	for _, n := range []int{small, large} {
		c, err := callgrind.Run(valgrind, driver, filepath.Join(dir, "cg."+strconv.Itoa(n)), "-spans", strconv.Itoa(n))
		if err != nil {
			t.Fatal(err)
		}
		costs[n] = c
	}
	for _, name := range []string{"main.measureLensFlat", "main.measureLensChained", "main.measureReckon"} {
		s, l := costs[small][name], costs[large][name]
		if s <= 0 || l <= 0 {
			problems = append(problems, fmt.Sprintf("%s has no cost (%d, %d)", name, s, l))
			continue
		}
		k := math.Log(float64(l)/float64(s)) / math.Log(float64(large)/small)
		notes = append(notes, fmt.Sprintf("%-24s %12d → %13d instructions: k = %.3f", name, s, l, k))
		if k > maxGrowth {
			problems = append(problems, fmt.Sprintf("%s grows as spans^%.2f (%d → %d instructions for ×16 spans), more than spans^%g", name, k, s, l, maxGrowth))
		}
	}
	return problems, notes
}
