package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nemolens/lens-go/carrier"
)

// cliCmd is a lens command of the size table.
type cliCmd struct {
	name  string
	args  []string
	stdin string // "text", "json" or "" (the carrier is in the environment)
	desc  string
}

var cliCmds = []cliCmd{
	{"carrier-parse", []string{"carrier", "parse"}, "text", "`lens carrier parse`"},
	{"carrier-format", []string{"carrier", "format"}, "json", "`lens carrier format`"},
	{"carrier-check", []string{"carrier", "check"}, "text", "`lens carrier check`"},
	{"exec", []string{"exec", "--", "true"}, "", "`lens exec -- true`"},
	{"env-task", []string{"env", "--stage", "task"}, "", "`lens env --stage task`"},
	{"resource-env", []string{"resource", "--format", "env"}, "", "`lens resource --format env`"},
}

// cliResult is one lens command on one input.
type cliResult struct {
	MinNS    int64
	CPUNS    int64 // first run
	MaxRSS   int64
	Exit     int
	StartErr string // the command could not start (E2BIG)
	Stderr   string // the first line of its stderr (first run)
}

// gnuTime is GNU time (Debian package time), which gives the peak RSS of
// the lens commands.
const gnuTime = "/usr/bin/time"

// runCLI runs a lens command on an input: once under GNU time for its peak
// RSS, then repeat times directly for its wall and CPU time. The peak RSS
// cannot be read from wait4 here: Go starts a child with vfork, and Linux
// carries the high-water mark of the forking process (this one, which holds
// the inputs) into the child at execve; GNU time is small and forks its
// own child.
func runCLI(lensBin string, c cliCmd, text, dir string, repeat int) (cliResult, error) {
	env := []string{"PATH=/usr/bin:/bin", "CUDA_VISIBLE_DEVICES=0,1,2,3"}
	stdinPath := os.DevNull
	switch c.stdin {
	case "text":
		stdinPath = filepath.Join(dir, "carrier.txt")
	case "json":
		stdinPath = filepath.Join(dir, "carrier.json")
	default:
		env = append(env, carrier.EnvVar+"="+text)
	}
	run := func(argv []string) (time.Duration, *os.ProcessState, string, error) {
		in, err := os.Open(stdinPath)
		if err != nil {
			return 0, nil, "", err
		}
		defer in.Close()
		var stderr bytes.Buffer
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		cmd.Stdin = in
		cmd.Stderr = &stderr
		t0 := time.Now()
		err = cmd.Run()
		wall := time.Since(t0)
		var exitErr *exec.ExitError
		if err != nil && !errors.As(err, &exitErr) {
			return 0, nil, "", err
		}
		return wall, cmd.ProcessState, stderr.String(), nil
	}
	var r cliResult
	argv := append([]string{lensBin}, c.args...)
	if _, err := os.Stat(gnuTime); err == nil {
		out := filepath.Join(dir, "time.out")
		_, _, _, err := run(append([]string{gnuTime, "-f", "%M", "-o", out}, argv...))
		if errors.Is(err, syscall.E2BIG) {
			return cliResult{StartErr: "E2BIG"}, nil
		}
		if err != nil {
			return r, err
		}
		b, err := os.ReadFile(out)
		if err != nil {
			return r, err
		}
		// The last line: GNU time writes "Command exited with non-zero
		// status N" first when the status is not 0.
		lines := strings.Fields(strings.TrimSpace(string(b)))
		if len(lines) == 0 {
			return r, fmt.Errorf("%s wrote nothing", gnuTime)
		}
		kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
		if err != nil {
			return r, fmt.Errorf("%s: %q: %v", gnuTime, b, err)
		}
		r.MaxRSS = kib << 10
	}
	for i := range max(1, repeat) {
		wall, ps, stderr, err := run(argv)
		if errors.Is(err, syscall.E2BIG) {
			return cliResult{StartErr: "E2BIG"}, nil
		}
		if err != nil {
			return r, err
		}
		if i == 0 {
			_, cpu := childUsage(ps)
			r.MinNS, r.CPUNS, r.Exit = int64(wall), int64(cpu), ps.ExitCode()
			line, _, _ := strings.Cut(stderr, "\n")
			if len(line) > 120 {
				line = line[:117] + "..."
			}
			r.Stderr = line
		} else {
			r.MinNS = min(r.MinNS, int64(wall))
		}
	}
	return r, nil
}

// runLib runs this program's "lib" command in a fresh process.
func runLib(op, input string, repeat int) (libResult, error) {
	self, err := os.Executable()
	if err != nil {
		return libResult{}, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(self, "lib", "-op", op, "-input", input, "-repeat", fmt.Sprint(repeat))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return libResult{}, fmt.Errorf("lib -op %s -input %s: %v\n%s", op, input, err, stderr.String())
	}
	var r libResult
	if err := json.Unmarshal(out, &r); err != nil {
		return r, fmt.Errorf("lib -op %s -input %s: %v: %q", op, input, err, out)
	}
	return r, nil
}

func splitList(s string, all []string) ([]string, error) {
	if s == "" || s == "all" {
		return all, nil
	}
	var out []string
	for v := range strings.SplitSeq(s, ",") {
		if !slices.Contains(all, v) {
			return nil, fmt.Errorf("unknown %q (want one of %s)", v, strings.Join(all, ","))
		}
		out = append(out, v)
	}
	return out, nil
}

func sizeTable(args []string) error {
	fs := flag.NewFlagSet("sizetable", flag.ContinueOnError)
	lensBin := fs.String("lens", "", "the lens binary (empty: library only)")
	repeat := fs.Int("repeat", 3, "runs per cell (the fastest gives the time)")
	opsFlag := fs.String("ops", "all", "library operations, comma-separated")
	cmdsFlag := fs.String("cmds", "all", "lens commands, comma-separated")
	inputsFlag := fs.String("inputs", "all", "inputs, comma-separated")
	progress := fs.Bool("progress", false, "report each cell on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ops, err := splitList(*opsFlag, libOps)
	if err != nil {
		return err
	}
	var cmdNames []string
	for _, c := range cliCmds {
		cmdNames = append(cmdNames, c.name)
	}
	cmdList, err := splitList(*cmdsFlag, cmdNames)
	if err != nil {
		return err
	}
	if *lensBin == "" {
		cmdList = nil
	}
	inputs, err := splitList(*inputsFlag, inputNames)
	if err != nil {
		return err
	}

	libs := map[[2]string]libResult{}
	clis := map[[2]string]cliResult{}
	sizes := map[string]int{}
	segs := map[string]int{}
	for _, in := range inputs {
		text, err := inputText(in)
		if err != nil {
			return err
		}
		sizes[in] = len(text)
		segs[in] = strings.Count(text, ",") + 1
		for _, op := range ops {
			t0 := time.Now()
			r, err := runLib(op, in, *repeat)
			if err != nil {
				return err
			}
			libs[[2]string{op, in}] = r
			if *progress {
				fmt.Fprintf(os.Stderr, "  library %-12s %-17s %9s  (%.1fs)\n", op, in, fmtNS(float64(r.MinNS)), time.Since(t0).Seconds())
			}
		}
		if len(cmdList) == 0 {
			continue
		}
		dir, err := os.MkdirTemp("", "scaledriver")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "carrier.txt"), []byte(text), 0o600); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "carrier.json"), inputJSON(text), 0o600); err != nil {
			return err
		}
		for _, c := range cliCmds {
			if !slices.Contains(cmdList, c.name) {
				continue
			}
			t0 := time.Now()
			r, err := runCLI(*lensBin, c, text, dir, *repeat)
			if err != nil {
				os.RemoveAll(dir)
				return fmt.Errorf("%s on %s: %v", c.name, in, err)
			}
			clis[[2]string{c.name, in}] = r
			if *progress {
				fmt.Fprintf(os.Stderr, "  lens    %-14s %-17s %9s  (%.1fs)\n", c.name, in, fmtNS(float64(r.MinNS)), time.Since(t0).Seconds())
			}
		}
		os.RemoveAll(dir)
	}

	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	// The inputs.
	fmt.Fprintf(w, "Inputs (escaped values: `run.01-é/seed_784` repeated, 3 bytes in 18 percent-encoded):\n\n")
	fmt.Fprintf(w, "| input | what | carrier text |\n|---|---|---|\n")
	for _, in := range inputs {
		fmt.Fprintf(w, "| `%s` | %s | %s |\n", in, inputDescriptions[in], fmtBytes(float64(sizes[in])))
	}
	fmt.Fprintln(w)

	if len(ops) > 0 {
		fmt.Fprintf(w, "**Library** — one fresh process per cell: time (fastest of %d runs) · peak RSS of the process (the input included):\n\n", *repeat)
		fmt.Fprintf(w, "| input |")
		for _, op := range ops {
			fmt.Fprintf(w, " %s |", op)
		}
		fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(ops)))
		for _, in := range inputs {
			fmt.Fprintf(w, "| `%s` |", in)
			for _, op := range ops {
				r := libs[[2]string{op, in}]
				fmt.Fprintf(w, " %s · %s |", fmtNS(float64(r.MinNS)), fmtBytes(float64(r.PeakRSS)))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Operations: ")
		for i, op := range ops {
			if i > 0 {
				fmt.Fprintf(w, "; ")
			}
			fmt.Fprintf(w, "%s: %s", op, libOpDescriptions[op])
		}
		fmt.Fprintf(w, ".\n\n")
	}
	if len(cmdList) > 0 {
		rss := "peak RSS (GNU time's %M)"
		if _, err := os.Stat(gnuTime); err != nil {
			rss = "peak RSS (not measured: " + gnuTime + ", Debian package time, is missing)"
		}
		fmt.Fprintf(w, "**lens** — time (fastest of %d runs) · %s; `parse`, `format` and `check` read stdin, "+
			"the others find the carrier in `%s` (E2BIG: a longer environment string cannot be passed to a process at all):\n\n", *repeat, rss, carrier.EnvVar)
		fmt.Fprintf(w, "| input |")
		for _, c := range cliCmds {
			if slices.Contains(cmdList, c.name) {
				fmt.Fprintf(w, " %s |", c.desc)
			}
		}
		fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(cmdList)))
		for _, in := range inputs {
			fmt.Fprintf(w, "| `%s` |", in)
			for _, c := range cliCmds {
				if !slices.Contains(cmdList, c.name) {
					continue
				}
				r := clis[[2]string{c.name, in}]
				if r.StartErr != "" {
					fmt.Fprintf(w, " %s |", r.StartErr)
				} else {
					fmt.Fprintf(w, " %s · %s |", fmtNS(float64(r.MinNS)), fmtRSS(r.MaxRSS))
				}
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}

	// Growth between sizes.
	type step struct{ from, to string }
	var steps []step
	for _, s := range []step{
		{"value=1MiB", "value=16MiB"}, {"value=16MiB", "value=64MiB"},
		{"segments=100000", "segments=1000000"}, {"launcher=516B", "env=128KiB"},
	} {
		if slices.Contains(inputs, s.from) && slices.Contains(inputs, s.to) {
			steps = append(steps, s)
		}
	}
	if len(steps) > 0 {
		// The input ratio of a step: the larger of the ratios of bytes and
		// of segments (the 128 KiB environment has far shorter entries than
		// the launcher's carrier).
		inRatio := func(s step) float64 {
			return max(float64(sizes[s.to])/float64(sizes[s.from]), float64(segs[s.to])/float64(segs[s.from]))
		}
		// A step is judged when both inputs have the same shape of entries;
		// the launcher's carrier and the 128 KiB environment do not, and
		// are compared only for the commands that read the environment
		// (they have no other step).
		judged := func(s step, envCommand bool) bool { return s.from != "launcher=516B" || envCommand }
		fmt.Fprintf(w, "**Growth** between input sizes: the ratio of the larger input's figure to the smaller one's, "+
			"beside the input ratio (of bytes, or of segments where that is larger). *Linear* means at most twice the input ratio, "+
			"judged on the allocated bytes for the library (exact; shown: time / allocated bytes / peak RSS above the resident input) "+
			"and on the peak RSS for lens (shown: time / peak RSS), over the steps between inputs of the same shape "+
			"(`launcher` → `env=128KiB` only for the commands that read the environment, which have no other step). "+
			"Times are wall-clock, and grow faster than the input where it outgrows the CPU caches "+
			"(1 → 16 MiB, 100,000 → 1,000,000 segments): the instruction counts (above) grow with the input, "+
			"so that is the memory hierarchy and the garbage collector, not more work per byte.\n\n")
		fmt.Fprintf(w, "| operation |")
		for _, s := range steps {
			b, g := float64(sizes[s.to])/float64(sizes[s.from]), float64(segs[s.to])/float64(segs[s.from])
			if g > b {
				fmt.Fprintf(w, " `%s` → `%s` (×%s bytes, ×%s segments) |", s.from, s.to, fmtRatio(b), fmtRatio(g))
			} else {
				fmt.Fprintf(w, " `%s` → `%s` (×%s) |", s.from, s.to, fmtRatio(b))
			}
		}
		fmt.Fprintf(w, " linear? |\n|---|%s---|\n", strings.Repeat("---|", len(steps)))
		for _, op := range ops {
			fmt.Fprintf(w, "| %s |", libOpDescriptions[op])
			linear := true
			for _, s := range steps {
				a, b := libs[[2]string{op, s.from}], libs[[2]string{op, s.to}]
				rt := ratio(float64(b.MinNS), float64(a.MinNS))
				ra := ratio(float64(b.AllocBytes), float64(a.AllocBytes))
				rm := ratio(float64(max(b.PeakRSS-b.RSSBefore, 1<<20)), float64(max(a.PeakRSS-a.RSSBefore, 1<<20)))
				fmt.Fprintf(w, " ×%s / ×%s / ×%s |", fmtRatio(rt), fmtRatio(ra), fmtRatio(rm))
				if judged(s, false) && ra > 2*inRatio(s) {
					linear = false
				}
			}
			fmt.Fprintf(w, " %s |\n", yesNo(linear))
		}
		for _, c := range cliCmds {
			if !slices.Contains(cmdList, c.name) {
				continue
			}
			fmt.Fprintf(w, "| %s |", c.desc)
			linear, measured := true, false
			for _, s := range steps {
				a, b := clis[[2]string{c.name, s.from}], clis[[2]string{c.name, s.to}]
				if a.StartErr != "" || b.StartErr != "" || a.MinNS == 0 || b.MinNS == 0 {
					fmt.Fprintf(w, " — |")
					continue
				}
				measured = true
				rt := ratio(float64(b.MinNS), float64(a.MinNS))
				rm := ratio(float64(b.MaxRSS), float64(a.MaxRSS))
				fmt.Fprintf(w, " ×%s / ×%s |", fmtRatio(rt), fmtRatio(rm))
				if a.MaxRSS == 0 { // no GNU time: judge the time
					rm = rt
				}
				if judged(s, c.stdin == "") && rm > 2*inRatio(s) {
					linear = false
				}
			}
			if measured {
				fmt.Fprintf(w, " %s |\n", yesNo(linear))
			} else {
				fmt.Fprintf(w, " — |\n")
			}
		}
		fmt.Fprintln(w)
	}

	// Details.
	if len(ops) > 0 {
		fmt.Fprintf(w, "<details><summary>Library details</summary>\n\n")
		fmt.Fprintf(w, "| operation | input | time (fastest) | first run | CPU (first run) | allocated | allocations | RSS before | peak RSS |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, op := range ops {
			for _, in := range inputs {
				r := libs[[2]string{op, in}]
				fmt.Fprintf(w, "| %s | `%s` | %s | %s | %s | %s | %d | %s | %s |\n", op, in, fmtNS(float64(r.MinNS)), fmtNS(float64(r.FirstNS)),
					fmtNS(float64(r.CPUNS)), fmtBytes(float64(r.AllocBytes)), r.Mallocs, fmtBytes(float64(r.RSSBefore)), fmtBytes(float64(r.PeakRSS)))
			}
		}
		fmt.Fprintf(w, "\n</details>\n\n")
	}
	if len(cmdList) > 0 {
		fmt.Fprintf(w, "<details><summary>lens details</summary>\n\n")
		fmt.Fprintf(w, "| command | input | time (fastest) | CPU (first run) | peak RSS | exit | stderr (first line) |\n|---|---|---|---|---|---|---|\n")
		for _, c := range cliCmds {
			if !slices.Contains(cmdList, c.name) {
				continue
			}
			for _, in := range inputs {
				r := clis[[2]string{c.name, in}]
				if r.StartErr != "" {
					fmt.Fprintf(w, "| %s | `%s` | %s | | | | cannot start: execve fails with E2BIG |\n", c.desc, in, r.StartErr)
					continue
				}
				fmt.Fprintf(w, "| %s | `%s` | %s | %s | %s | %d | %s |\n", c.desc, in, fmtNS(float64(r.MinNS)), fmtNS(float64(r.CPUNS)),
					fmtRSS(r.MaxRSS), r.Exit, mdEscape(r.Stderr))
			}
		}
		fmt.Fprintf(w, "\n</details>\n\n")
	}
	return nil
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}
