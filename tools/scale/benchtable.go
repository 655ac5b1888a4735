package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// benchData holds the measurements of `go test -bench` output by
// benchmark, case and implementation, in order of first appearance.
type benchData struct {
	bases []string
	cases map[string][]string                                   // base → cases
	impls map[string][]string                                   // base → implementations
	vals  map[string]map[string]map[string]map[string][]float64 // base → case → impl → unit → values
}

func newBenchData() *benchData {
	return &benchData{cases: map[string][]string{}, impls: map[string][]string{},
		vals: map[string]map[string]map[string]map[string][]float64{}}
}

// add records one result line; names are
// Benchmark<Base>/<case…>/<impl>[-GOMAXPROCS].
func (d *benchData) add(line string) {
	fields := strings.Fields(line)
	if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
		return
	}
	name := fields[0]
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			name = name[:i]
		}
	}
	parts := strings.Split(name, "/")
	if len(parts) < 3 {
		return
	}
	base, impl := parts[0], parts[len(parts)-1]
	c := strings.Join(parts[1:len(parts)-1], "/")
	if _, ok := d.vals[base]; !ok {
		d.bases = append(d.bases, base)
		d.vals[base] = map[string]map[string]map[string][]float64{}
	}
	if _, ok := d.vals[base][c]; !ok {
		d.cases[base] = append(d.cases[base], c)
		d.vals[base][c] = map[string]map[string][]float64{}
	}
	if _, ok := d.vals[base][c][impl]; !ok {
		d.vals[base][c][impl] = map[string][]float64{}
		if !slices.Contains(d.impls[base], impl) {
			d.impls[base] = append(d.impls[base], impl)
		}
	}
	for i := 2; i+1 < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			continue
		}
		u := fields[i+1]
		d.vals[base][c][impl][u] = append(d.vals[base][c][impl][u], v)
	}
}

// median returns the median of a unit, NaN when absent.
func (d *benchData) median(base, c, impl, unit string) float64 {
	vs := slices.Clone(d.vals[base][c][impl][unit])
	if len(vs) == 0 {
		return math.NaN()
	}
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

// inputBytes is the carrier size of a case: from MB/s when reported, else
// entries × value size.
func (d *benchData) inputBytes(base, c, impl string) float64 {
	if mbs := d.median(base, c, impl, "MB/s"); !math.IsNaN(mbs) && mbs > 0 {
		return mbs * d.median(base, c, impl, "ns/op") / 1e3
	}
	e, v := caseFields(c)
	return float64(e * v)
}

// caseFields returns the entries and the value size of a case name.
func caseFields(c string) (entries, value int) {
	entries, value = 1, 1
	for p := range strings.SplitSeq(c, "/") {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "entries":
			entries, _ = strconv.Atoi(v)
		case "value":
			mult := 1
			switch {
			case strings.HasSuffix(v, "KiB"):
				mult, v = 1<<10, strings.TrimSuffix(v, "KiB")
			case strings.HasSuffix(v, "MiB"):
				mult, v = 1<<20, strings.TrimSuffix(v, "MiB")
			default:
				v = strings.TrimSuffix(v, "B")
			}
			n, _ := strconv.Atoi(v)
			value = n * mult
		}
	}
	return entries, value
}

func caseField(c, key string) string {
	for p := range strings.SplitSeq(c, "/") {
		if k, v, ok := strings.Cut(p, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// series returns the growth series of a case and its position in it: the
// entries series (10-byte values, by entries) or the value series (10
// entries, by value size; entries=10/value=10B starts both).
func series(c string) (name string, pos int) {
	e, v := caseFields(c)
	shape := caseField(c, "shape")
	if v <= 10 {
		return "entries/" + shape, e
	}
	return "value/" + shape, v
}

// growth returns, for each case, the growth exponent of impl against the
// previous case of its series among cases: k with time ∝ size^k (1 is
// linear, 2 quadratic; fixed costs make small sizes less than 1). NaN for
// the first of a series.
func (d *benchData) growth(base, impl string, cases []string) map[string]float64 {
	out := map[string]float64{}
	prev := map[string]string{}
	visit := func(c, s string) {
		if p, ok := prev[s]; ok {
			t0, t1 := d.median(base, p, impl, "ns/op"), d.median(base, c, impl, "ns/op")
			b0, b1 := d.inputBytes(base, p, impl), d.inputBytes(base, c, impl)
			if t0 > 0 && t1 > 0 && b1 > b0 && b0 > 0 {
				out[c] = math.Log(t1/t0) / math.Log(b1/b0)
			}
		}
		prev[s] = c
	}
	for _, c := range cases {
		out[c] = math.NaN()
		s, _ := series(c)
		visit(c, s)
		// entries=10/value=10B also starts the value series.
		if e, v := caseFields(c); e == 10 && v == 10 {
			visit(c, "value/"+caseField(c, "shape"))
		}
	}
	return out
}

func fmtK(k float64) string {
	if math.IsNaN(k) {
		return ""
	}
	return fmt.Sprintf("%.2f", k)
}

func fmtMedian(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmtCount(v)
}

func benchTableCommand(args []string) error {
	fs := flag.NewFlagSet("benchtable", flag.ContinueOnError)
	summary := fs.Bool("summary", false, "one table: the escaped shape, 1, 100 and 10,000 entries and 10 × 100 KiB values, and every Setup case")
	if err := fs.Parse(args); err != nil {
		return err
	}
	d := newBenchData()
	read := func(r io.Reader) error {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			d.add(sc.Text())
		}
		return sc.Err()
	}
	if fs.NArg() == 0 {
		if err := read(os.Stdin); err != nil {
			return err
		}
	}
	for _, name := range fs.Args() {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		err = read(f)
		f.Close()
		if err != nil {
			return err
		}
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	if *summary {
		writeSummary(w, d)
		return nil
	}
	for _, base := range d.bases {
		impls := d.impls[base]
		primary := impls[0]
		fmt.Fprintf(w, "**%s** (medians of %d runs; k: growth exponent against the next smaller case of the same shape, 1 = linear)\n\n",
			strings.TrimPrefix(base, "Benchmark"), len(d.vals[base][d.cases[base][0]][primary]["ns/op"]))
		fmt.Fprintf(w, "| case | %s | B/op | allocs | k |", primary)
		for _, impl := range impls[1:] {
			fmt.Fprintf(w, " %s | allocs | k |", impl)
		}
		for _, impl := range impls[1:] {
			fmt.Fprintf(w, " %s ÷ %s |", primary, impl)
		}
		fmt.Fprintf(w, "\n|---|---|---|---|---|%s%s\n", strings.Repeat("---|---|---|", len(impls)-1), strings.Repeat("---|", len(impls)-1))
		ks := map[string]map[string]float64{}
		for _, impl := range impls {
			ks[impl] = d.growth(base, impl, d.cases[base])
		}
		for _, c := range d.cases[base] {
			t := d.median(base, c, primary, "ns/op")
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |", c, fmtNS(t), fmtBytes(d.median(base, c, primary, "B/op")),
				fmtMedian(d.median(base, c, primary, "allocs/op")), fmtK(ks[primary][c]))
			for _, impl := range impls[1:] {
				fmt.Fprintf(w, " %s | %s | %s |", fmtNS(d.median(base, c, impl, "ns/op")),
					fmtMedian(d.median(base, c, impl, "allocs/op")), fmtK(ks[impl][c]))
			}
			for _, impl := range impls[1:] {
				fmt.Fprintf(w, " %s |", fmtRatio(ratio(t, d.median(base, c, impl, "ns/op"))))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// writeSummary writes one table over every operation.
func writeSummary(w io.Writer, d *benchData) {
	fmt.Fprintf(w, "| operation | case | lens-go | allocs | OpenTelemetry SDK | floor | lens ÷ SDK | lens ÷ floor | k |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|\n")
	type row struct{ op, base, impl, sdk, floor string }
	var rows []row
	for _, base := range d.bases {
		op := strings.TrimPrefix(base, "BenchmarkScale")
		impls := d.impls[base]
		pick := func(names ...string) string {
			for _, n := range names {
				if slices.Contains(impls, n) {
					return n
				}
			}
			return ""
		}
		if base == "BenchmarkScaleSetup" {
			rows = append(rows,
				row{"Setup (WithEnv)", base, "lens-setup", "otel-sdk", "carrier-parse"},
				row{"Setup (process env)", base, "lens-setup-osenv", "otel-sdk", "carrier-parse"})
			continue
		}
		rows = append(rows, row{op, base, pick("lens"), pick("otel-sdk"), pick("floor")})
	}
	for _, r := range rows {
		var cases []string
		for _, c := range d.cases[r.base] {
			e, v := caseFields(c)
			shape := caseField(c, "shape")
			if r.base != "BenchmarkScaleSetup" && (shape != "escaped" || !(v == 10 && (e == 1 || e == 100 || e == 10000) || v == 100<<10)) {
				continue
			}
			cases = append(cases, c)
		}
		// Growth against the previous size of every case, shown or not.
		ks := d.growth(r.base, r.impl, d.cases[r.base])
		for _, c := range cases {
			t := d.median(r.base, c, r.impl, "ns/op")
			sdk, floor := math.NaN(), math.NaN()
			if r.sdk != "" {
				sdk = d.median(r.base, c, r.sdk, "ns/op")
			}
			if r.floor != "" {
				floor = d.median(r.base, c, r.floor, "ns/op")
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.op, shortCase(c), fmtNS(t),
				fmtMedian(d.median(r.base, c, r.impl, "allocs/op")), fmtNS(sdk), fmtNS(floor),
				fmtRatio(ratio(t, sdk)), fmtRatio(ratio(t, floor)), fmtK(ks[c]))
		}
	}
}

// shortCase drops the shape from a case name.
func shortCase(c string) string {
	e, v := caseFields(c)
	if v <= 10 {
		return fmt.Sprintf("%s × 10 B", groupDigits(e))
	}
	return fmt.Sprintf("%d × %s", e, caseField(c, "value"))
}

func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
