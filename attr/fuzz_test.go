package attr_test

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/attr"
)

var (
	pyFixed = regexp.MustCompile(`^-?(0|[1-9][0-9]*)\.[0-9]+$`)
	pySci   = regexp.MustCompile(`^-?[1-9](\.[0-9]*[1-9])?e[+-][0-9]{2,3}$`)
)

// FuzzFormatFloat checks the Python repr layout on any float: the text parses
// back to the same bits, uses the shortest round-trip digits, and is in fixed
// notation exactly when the decimal exponent of those digits is in [-4, 15].
func FuzzFormatFloat(f *testing.F) {
	for _, tt := range formatFloatTests {
		f.Add(tt.f)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		got := attr.FormatFloat(x)
		switch {
		case math.IsNaN(x):
			if got != "nan" {
				t.Fatalf("FormatFloat(NaN) = %q", got)
			}
			return
		case math.IsInf(x, 0):
			if got != "inf" && got != "-inf" {
				t.Fatalf("FormatFloat(%v) = %q", x, got)
			}
			return
		}
		back, err := strconv.ParseFloat(got, 64)
		if err != nil || math.Float64bits(back) != math.Float64bits(x) {
			t.Fatalf("FormatFloat(%v) = %q does not round-trip (%v, %v)", x, got, back, err)
		}
		if x == 0 {
			return
		}
		e := strconv.FormatFloat(x, 'e', -1, 64)
		mant, expText, _ := strings.Cut(e, "e")
		exp, _ := strconv.Atoi(expText)
		if exp >= -4 && exp <= 15 {
			if !pyFixed.MatchString(got) {
				t.Fatalf("FormatFloat(%v) = %q, want fixed notation", x, got)
			}
		} else if !pySci.MatchString(got) {
			t.Fatalf("FormatFloat(%v) = %q, want scientific notation", x, got)
		}
		// Same significant digits as the shortest form.
		want := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(mant), "0")
		digits := got
		if i := strings.IndexByte(digits, 'e'); i >= 0 {
			digits = digits[:i]
		}
		digits = strings.Trim(strings.NewReplacer("-", "", ".", "").Replace(digits), "0")
		if digits != strings.TrimRight(want, "0") {
			t.Fatalf("FormatFloat(%v) = %q: digits %q, shortest %q", x, got, digits, want)
		}
	})
}
