package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// initLine is one "init PKG @T ms, C ms clock, B bytes, A allocs" line of
// GODEBUG=inittrace=1.
type initLine struct {
	pkg           string
	clockMS       float64
	bytes, allocs int64
}

func parseInitLine(line string) (initLine, bool) {
	f := strings.Fields(line)
	// init PKG @0.53 ms, 0.007 ms clock, 0 bytes, 0 allocs
	if len(f) < 11 || f[0] != "init" || f[6] != "clock," {
		return initLine{}, false
	}
	clock, err1 := strconv.ParseFloat(f[4], 64)
	bytes, err2 := strconv.ParseInt(f[7], 10, 64)
	allocs, err3 := strconv.ParseInt(f[9], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return initLine{}, false
	}
	return initLine{f[1], clock, bytes, allocs}, true
}

func medianOf(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	vs = slices.Clone(vs)
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

// initTraceCommand summarises GODEBUG=inittrace=1 output, one file per run:
// the packages whose initialisation takes the longest (median over the
// runs) and the totals.
func initTraceCommand(args []string) error {
	fs := flag.NewFlagSet("inittrace", flag.ContinueOnError)
	top := fs.Int("top", 8, "packages to list")
	label := fs.String("label", "", "what ran, for the caption")
	if err := fs.Parse(args); err != nil {
		return err
	}
	clocks := map[string][]float64{}
	bytesOf := map[string]int64{}
	allocsOf := map[string]int64{}
	var totals, totalBytes, totalAllocs, counts []float64
	for _, name := range fs.Args() {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		var t, b, a, n float64
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			l, ok := parseInitLine(sc.Text())
			if !ok {
				continue
			}
			clocks[l.pkg] = append(clocks[l.pkg], l.clockMS)
			bytesOf[l.pkg], allocsOf[l.pkg] = l.bytes, l.allocs
			t, b, a, n = t+l.clockMS, b+float64(l.bytes), a+float64(l.allocs), n+1
		}
		f.Close()
		totals, totalBytes, totalAllocs, counts = append(totals, t), append(totalBytes, b), append(totalAllocs, a), append(counts, n)
	}
	if len(clocks) == 0 {
		return fmt.Errorf("no inittrace lines")
	}
	pkgs := make([]string, 0, len(clocks))
	for p := range clocks {
		pkgs = append(pkgs, p)
	}
	slices.SortFunc(pkgs, func(a, b string) int {
		ma, mb := medianOf(clocks[a]), medianOf(clocks[b])
		switch {
		case ma > mb:
			return -1
		case ma < mb:
			return 1
		}
		return strings.Compare(a, b)
	})
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "%s: %.0f package initialisers, %.2f ms of clock in all (median of %d runs), %s and %.0f allocations.\n\n",
		*label, medianOf(counts), medianOf(totals), len(totals), fmtBytes(medianOf(totalBytes)), medianOf(totalAllocs))
	fmt.Fprintf(w, "| package | clock (median) | bytes | allocs |\n|---|---|---|---|\n")
	for _, p := range pkgs[:min(*top, len(pkgs))] {
		fmt.Fprintf(w, "| `%s` | %.3f ms | %s | %d |\n", p, medianOf(clocks[p]), fmtBytes(float64(bytesOf[p])), allocsOf[p])
	}
	fmt.Fprintln(w)
	return nil
}
