// Command mutreport prints the per-package table of a mutation run from the
// JSON reports that gremlins writes (one per package, `gremlins unleash -o`).
// scripts/mutation.sh runs it; docs/testing.md ("Mutation testing") explains
// the columns.
//
// Usage:
//
//	mutreport [-survivors] [-min PERCENT] [-root DIR] DIR=REPORT.json...
//
// DIR is the package's directory relative to the module root (the directory
// gremlins was run on; the file names in its report are relative to it).
// REPORT may also be gremlins' output (a file whose name ends in .log): the
// figures of a run stopped before its end (scripts/mutation.sh's bound),
// from the line it prints per mutant tested; the row is marked partial. The
// kill rate is killed / (killed + survived); mutants that timed out, that no
// test covers and that do not compile are counted in their own columns and
// left out of the rate. -survivors lists every surviving mutant with its
// source line (read from -root). -min makes it exit 1 when a package with
// mutants run has a kill rate below PERCENT. A report that is missing or
// unreadable is an error (exit 2) naming the file.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// report is the part of gremlins' JSON output (internal/report/internal in
// github.com/go-gremlins/gremlins v0.6.0) that the table needs.
type report struct {
	Files []reportFile `json:"files"`
}

type reportFile struct {
	Name      string     `json:"file_name"`
	Mutations []mutation `json:"mutations"`
}

type mutation struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// counts is one row of the table.
type counts struct {
	pkg                                                   string
	killed, lived, timedOut, notCovered, notViable, other int
}

func (c counts) total() int {
	return c.killed + c.lived + c.timedOut + c.notCovered + c.notViable + c.other
}

// rate is the kill rate in percent; ok is false when no mutant ran.
func (c counts) rate() (pct float64, ok bool) {
	if c.killed+c.lived == 0 {
		return 0, false
	}
	return 100 * float64(c.killed) / float64(c.killed+c.lived), true
}

func (c *counts) add(o counts) {
	c.killed += o.killed
	c.lived += o.lived
	c.timedOut += o.timedOut
	c.notCovered += o.notCovered
	c.notViable += o.notViable
	c.other += o.other
}

// survivor is one mutant that lived.
type survivor struct {
	file         string // relative to the module root
	line, column int
	kind         string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutreport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	survivors := fs.Bool("survivors", false, "list the surviving mutants with their source lines")
	minRate := fs.Float64("min", 0, "exit 1 when a package's kill rate is below this percentage")
	root := fs.String("root", ".", "the module root, to read source lines from")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "mutreport: no DIR=REPORT.json argument")
		return 2
	}
	var rows []counts
	var lived []survivor
	var errs []error
	for _, arg := range fs.Args() {
		dir, file, ok := strings.Cut(arg, "=")
		if !ok {
			errs = append(errs, fmt.Errorf("argument %q: want DIR=REPORT.json", arg))
			continue
		}
		row, s, err := load(dir, file)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rows = append(rows, row)
		lived = append(lived, s...)
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(stderr, "mutreport:", err)
		return 2
	}
	below := table(stdout, rows, *minRate)
	if *survivors && len(lived) > 0 {
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, "surviving mutants (a test that fails on each would kill it):")
		for _, s := range lived {
			fmt.Fprintf(stdout, "  %s:%d:%d %s\n", s.file, s.line, s.column, s.kind)
			if src := sourceLine(filepath.Join(*root, s.file), s.line); src != "" {
				fmt.Fprintf(stdout, "      %s\n", src)
			}
		}
	}
	if len(below) > 0 {
		fmt.Fprintf(stderr, "mutreport: kill rate below %.0f %%: %s\n", *minRate, strings.Join(below, ", "))
		return 1
	}
	return 0
}

// mutantLine is the line gremlins prints per mutant, as "  KILLED
// CONDITIONALS_BOUNDARY at file.go:12:5".
var mutantLine = regexp.MustCompile(`^\s*(KILLED|LIVED|TIMED OUT|NOT COVERED|NOT VIABLE|SKIPPED|RUNNABLE) ([A-Z_]+) at (.+):(\d+):(\d+)\s*$`)

// fromLog rebuilds a report from gremlins' output.
func fromLog(data []byte) report {
	var r report
	index := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		m := mutantLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		i, ok := index[m[3]]
		if !ok {
			i = len(r.Files)
			index[m[3]] = i
			r.Files = append(r.Files, reportFile{Name: m[3]})
		}
		ln, _ := strconv.Atoi(m[4])
		col, _ := strconv.Atoi(m[5])
		r.Files[i].Mutations = append(r.Files[i].Mutations, mutation{Type: m[2], Status: m[1], Line: ln, Column: col})
	}
	return r
}

// load reads one gremlins report of the package in dir.
func load(dir, file string) (counts, []survivor, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return counts{}, nil, fmt.Errorf("report of %s: %w", dir, err)
	}
	var r report
	name := dir
	if strings.HasSuffix(file, ".log") {
		r = fromLog(data)
		name += " (partial)"
	} else if err := json.Unmarshal(data, &r); err != nil {
		return counts{}, nil, fmt.Errorf("report of %s: %s: %w", dir, file, err)
	}
	c := counts{pkg: name}
	var lived []survivor
	for _, f := range r.Files {
		name := path.Join(dir, filepath.ToSlash(f.Name))
		for _, m := range f.Mutations {
			switch m.Status {
			case "KILLED":
				c.killed++
			case "LIVED":
				c.lived++
				lived = append(lived, survivor{name, m.Line, m.Column, m.Type})
			case "TIMED OUT":
				c.timedOut++
			case "NOT COVERED":
				c.notCovered++
			case "NOT VIABLE":
				c.notViable++
			default:
				c.other++
			}
		}
	}
	sort.Slice(lived, func(i, j int) bool {
		if lived[i].file != lived[j].file {
			return lived[i].file < lived[j].file
		}
		if lived[i].line != lived[j].line {
			return lived[i].line < lived[j].line
		}
		return lived[i].column < lived[j].column
	})
	return c, lived, nil
}

// table prints the rows and their sum; it returns the packages whose kill
// rate is below minRate.
func table(w io.Writer, rows []counts, minRate float64) (below []string) {
	const format = "%-28s %7s %6s %8s %9s %11s %10s %9s\n"
	fmt.Fprintf(w, format, "package", "mutants", "killed", "survived", "timed out", "not covered", "not viable", "kill rate")
	var sum counts
	sum.pkg = "all of the above"
	for _, r := range rows {
		fmt.Fprint(w, line(format, r))
		sum.add(r)
		if pct, ok := r.rate(); ok && pct < minRate {
			below = append(below, fmt.Sprintf("%s (%.1f %%)", r.pkg, pct))
		}
	}
	if len(rows) > 1 {
		fmt.Fprint(w, line(format, sum))
	}
	if sum.other > 0 {
		fmt.Fprintf(w, "(%d mutants not run: skipped, or a dry run)\n", sum.other)
	}
	return below
}

func line(format string, c counts) string {
	rate := "-"
	if pct, ok := c.rate(); ok {
		rate = fmt.Sprintf("%.1f %%", pct)
	}
	return fmt.Sprintf(format, c.pkg, itoa(c.total()), itoa(c.killed), itoa(c.lived),
		itoa(c.timedOut), itoa(c.notCovered), itoa(c.notViable), rate)
}

func itoa(n int) string { return fmt.Sprint(n) }

// sourceLine is line n of the file, trimmed; "" when it cannot be read.
func sourceLine(file string, n int) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for i := 1; sc.Scan(); i++ {
		if i == n {
			return strings.TrimSpace(sc.Text())
		}
	}
	return ""
}
