package attr_test

import (
	"fmt"
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

// FuzzMapOps runs operation sequences read from the fuzzer's input (two
// bytes each: the operation and the key, from a universe of 120 keys, so
// that the map crosses its index threshold of 48 both ways) against the
// naive model of map_test.go.
func FuzzMapOps(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 1, 1, 2, 1})
	up := make([]byte, 0, 400)
	for i := range 120 {
		up = append(up, 0, byte(i))
	}
	for i := range 80 {
		up = append(up, 2, byte(i*3))
	}
	f.Add(up)
	f.Fuzz(func(t *testing.T, ops []byte) {
		const universe = 120
		m := attr.WithCapacity(len(ops) - 100) // negative capacities too
		want := &model{vals: map[string]attr.Value{}}
		for i := 0; i+1 < len(ops); i += 2 {
			k := fmt.Sprint("key-", int(ops[i+1])%universe)
			switch ops[i] % 6 {
			case 0, 1:
				v := attr.Int(i)
				m.Set(k, v)
				want.set(k, v)
			case 2:
				if m.Delete(k) != want.del(k) {
					t.Fatalf("step %d: Delete(%s) result differs", i, k)
				}
			case 3:
				_, had := want.vals[k]
				if m.SetDefault(k, attr.String(k)) == had {
					t.Fatalf("step %d: SetDefault(%s) result wrong", i, k)
				}
				if !had {
					want.set(k, attr.String(k))
				}
			case 4:
				c := m.Clone() // changing the clone must not change m
				c.SetString(k, "changed in the clone")
				c.Delete("key-0")
				m = m.Clone() // and a clone must carry a working index
			case 5:
				other := attr.FromStrings(k, "other", "key-0", "zero")
				m.Update(other)
				want.set(k, attr.String("other"))
				want.set("key-0", attr.String("zero"))
			}
		}
		check(t, "end", m, want, universe)
	})
}
