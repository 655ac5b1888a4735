package carrier_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nemolens/lens-go/internal/callgrind"
)

// linearMaxExcess is how far the instruction ratio of an operation between
// the large and the small input may exceed the input ratio (16): a linear
// operation measures about 1 (0.9 to 1.0; fixed costs make it less), a
// quadratic one about 16 (the canary does), and anything between 1 and 2
// is within what amortised growth of slices and hash maps can add.
const linearMaxExcess = 2.0

// linearMeasures is the number of measure functions of the driver.
const linearMeasures = 18

// linearInputRatio is the ratio of the large input to the small one.
const linearInputRatio = 16.0

// linearRun is one run of the driver: its flags, and the run it is compared
// with.
type linearRun struct {
	name          string
	entries, size int
	baseline      string // name of the small run; "" for the small runs themselves
}

var linearRuns = []linearRun{
	{name: "entries=1000", entries: 1000, size: 10},
	{name: "entries=16000", entries: 16000, size: 10, baseline: "entries=1000"},
	{name: "value=1KiB", entries: 16, size: 1 << 10},
	{name: "value=16KiB", entries: 16, size: 16 << 10, baseline: "value=1KiB"},
}

// TestLinear fails when an operation of the package becomes super-linear in
// the number of entries or in the size of the values. It counts work instead
// of timing it: carrier/internal/lineardriver runs every operation (Parse on
// each value shape, Decode, Encode, Format, Compose, Extend, DuplicateKeys,
// Malformed, Check, the attr.Map operations) once on generated inputs, under
// Valgrind's callgrind tool, which counts the instructions executed inside
// each operation's wrapper function (inclusive of everything it calls, the
// allocator included; the garbage collector is off in the driver). The driver
// runs with 1,000 and 16,000 entries of 10-byte values, and with 16 entries
// of 1 KiB and of 16 KiB escape-heavy values; for each operation the
// instruction ratio between the large and the small input must be at most
// linearMaxExcess times the input ratio (16). Instruction counts do not
// depend on the machine's load, so the bound is not a timed assertion.
//
// The driver also measures a deliberately quadratic loop; the test checks
// that it exceeds the bound, so a broken measurement cannot pass silently.
//
// Valgrind (Debian package valgrind) is required when CI=true; elsewhere the
// test is skipped without it, and with -short.
func TestLinear(t *testing.T) {
	ci := os.Getenv("CI") == "true"
	valgrind, err := exec.LookPath("valgrind")
	if err != nil {
		if ci {
			t.Fatal("valgrind is not installed, and CI=true requires it: install the Debian package valgrind")
		}
		t.Skip("valgrind is not installed (Debian package valgrind): instruction-count linearity check skipped")
	}
	if testing.Short() && !ci {
		t.Skip("-short: instruction-count linearity check skipped")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
		if _, statErr := os.Stat(goTool); statErr != nil {
			if ci {
				t.Fatalf("the go command is needed to build the driver: %v", err)
			}
			t.Skipf("the go command is needed to build the driver: %v", err)
		}
	}

	dir := t.TempDir()
	driver := filepath.Join(dir, "lineardriver")
	build := exec.Command(goTool, "build", "-race=false", "-o", driver, "./internal/lineardriver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the driver: %v\n%s", err, out)
	}

	// A corrupted profile is measured again (callgrind.Measure).
	callgrind.Measure(t, dir, func(dir string) ([]string, []string) { return measureLinear(valgrind, driver, dir) })
}

// measureLinear runs every linearRun under callgrind (in dir) and returns
// what breaks the bounds (problems) and the figures (notes). A measure whose
// large run counts less than half its small run's is a corrupted profile,
// a problem too.
func measureLinear(valgrind, driver, dir string) (problems, notes []string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return []string{err.Error()}, nil
	}
	costs := make(map[string]map[string]int64)
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []string
		sem  = make(chan struct{}, max(1, runtime.NumCPU()))
	)
	for _, run := range linearRuns {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c, err := runCallgrind(valgrind, driver, dir, run)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", run.name, err))
				return
			}
			costs[run.name] = c
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs, nil
	}

	for _, run := range linearRuns {
		if run.baseline == "" {
			continue
		}
		small, large := costs[run.baseline], costs[run.name]
		names := make([]string, 0, len(small))
		for name := range small {
			names = append(names, name)
		}
		slices.Sort(names)
		if len(names) != linearMeasures || len(large) != linearMeasures {
			problems = append(problems, fmt.Sprintf("callgrind reported %d and %d measure functions, want %d: %v", len(names), len(large), linearMeasures, names))
		}
		inputRatio := linearInputRatio
		for _, name := range names {
			s, l := small[name], large[name]
			if s <= 0 || l <= 0 {
				problems = append(problems, fmt.Sprintf("%s: %s has no cost (%d, %d)", run.name, name, s, l))
				continue
			}
			ratio := float64(l) / float64(s)
			excess := ratio / inputRatio
			notes = append(notes, fmt.Sprintf("%-14s %-28s %13d → %13d instructions: ×%6.2f (%.2f of the input ratio)", run.name, name, s, l, ratio, excess))
			canary := name == "main.measureQuadraticCanary"
			switch {
			case ratio < 0.5:
				problems = append(problems, fmt.Sprintf("%s: %s counted %d → %d instructions for ×%g input: a corrupted profile", run.name, name, s, l, inputRatio))
			case canary && excess <= linearMaxExcess:
				problems = append(problems, fmt.Sprintf("%s: the quadratic canary grew only ×%.2f for ×%g input: the measurement cannot detect quadratic work", run.name, ratio, inputRatio))
			case !canary && excess > linearMaxExcess:
				problems = append(problems, fmt.Sprintf("%s: %s is super-linear: ×%.2f instructions for ×%g input (%d → %d), more than %g × the input ratio",
					run.name, strings.TrimPrefix(name, "main.measure"), ratio, inputRatio, s, l, linearMaxExcess))
			}
		}
	}
	return problems, notes
}

// callgrind runs the driver under callgrind and returns the inclusive
// instruction count of each main.measure* function.
func runCallgrind(valgrind, driver, dir string, run linearRun) (map[string]int64, error) {
	return callgrind.Run(valgrind, driver, filepath.Join(dir, "callgrind."+run.name),
		"-entries", strconv.Itoa(run.entries), "-size", strconv.Itoa(run.size))
}
