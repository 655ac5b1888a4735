// Package callgrind reads the instruction counts of the scale measurements
// from valgrind's callgrind profiles (carrier/linear_test.go,
// completed/linear_test.go and tools/scale), and measures again when a
// profile comes out corrupted (Measure). Counting instructions instead of
// timing makes the measurements repeatable on a loaded machine. Nothing
// shipped imports it.
package callgrind

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// InclusiveCosts reads a callgrind profile written with uncompressed names
// and positions. A call is recorded under its caller (fn=) as
//
//	cfn=<callee>
//	calls=<count> <target position>
//	<call-site position> <inclusive cost>
//
// and the costs of the calls to each main.measure* function from outside the
// measure functions are summed. When a goroutine's stack grows, callgrind
// can take the function for one that calls itself and records a nested
// "main.measureX'2", whose cost is already part of the outer call's; such
// names are skipped.
func InclusiveCosts(r io.Reader) (map[string]int64, error) {
	costs := make(map[string]int64)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	caller, callee, inCall := "", "", false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "fn="):
			caller = strings.TrimPrefix(line, "fn=")
		case strings.HasPrefix(line, "cfn="):
			callee = strings.TrimPrefix(line, "cfn=")
		case strings.HasPrefix(line, "calls="):
			inCall = true
		case inCall:
			inCall = false
			if !strings.HasPrefix(callee, "main.measure") || strings.Contains(callee, "'") ||
				strings.HasPrefix(caller, "main.measure") {
				continue
			}
			fields := strings.Fields(line)
			if len(fields) < 2 {
				return nil, fmt.Errorf("unexpected call cost line %q", line)
			}
			n, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("call cost line %q: %v", line, err)
			}
			costs[callee] += n
		}
	}
	return costs, sc.Err()
}

// Run runs driver with args under valgrind's callgrind tool, writing its
// profile to out, and returns the inclusive costs of the main.measure*
// functions (see InclusiveCosts). Asynchronous preemption and extra threads
// would make the counts vary from run to run, and the runtime's cycle
// counter uses RDTSCP, which Valgrind 3.19 cannot run: all three are
// switched off.
func Run(valgrind, driver, out string, args ...string) (map[string]int64, error) {
	cmd := exec.Command(valgrind, append([]string{"--tool=callgrind", "--callgrind-out-file=" + out,
		"--compress-strings=no", "--compress-pos=no", driver}, args...)...)
	cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off", "GOMAXPROCS=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, stderr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return InclusiveCosts(f)
}

// Attempts is how many times Measure measures before it reports.
const Attempts = 3

// TB is the part of testing.TB that Measure uses.
type TB interface {
	Helper()
	Logf(format string, args ...any)
	Error(args ...any)
}

// Measure runs measure in dir/1, dir/2, ... until an attempt returns no
// problem, at most Attempts times, logging each attempt's notes and
// problems, and reports the last attempt's problems with t.Error.
//
// A profile can come out corrupted: callgrind follows calls by the stack,
// and the Go scheduler switches stacks; on a loaded machine a run once gave
// carrier's FormatEscaped 891 instructions for 16,000 entries. Instruction
// counts are deterministic, so real super-linear work fails every attempt
// the same way; only a clean attempt passes.
func Measure(t TB, dir string, measure func(dir string) (problems, notes []string)) {
	t.Helper()
	var problems []string
	for attempt := 1; attempt <= Attempts; attempt++ {
		var notes []string
		d := fmt.Sprintf("%s/%d", dir, attempt)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Error(err)
			return
		}
		problems, notes = measure(d)
		for _, n := range notes {
			t.Logf("attempt %d: %s", attempt, n)
		}
		if len(problems) == 0 {
			return
		}
		t.Logf("attempt %d of %d: %s", attempt, Attempts, strings.Join(problems, "; "))
	}
	for _, p := range problems {
		t.Error(p)
	}
}
