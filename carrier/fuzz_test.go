package carrier_test

import (
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/testvectors"
)

// The fuzz tests are seeded from the conformance vectors, from the unit
// test tables of this package (decodeTests, encodeTests, parseTests,
// formatTests) and from trimSeeds. Run one with, e.g.,
//
//	go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 60s -parallel 1 ./carrier/

// vectorTexts returns the carrier texts of the vectors of the given ops.
func vectorTexts(f *testing.F, ops ...string) []string {
	f.Helper()
	var out []string
	for _, op := range ops {
		vs, err := testvectors.ByOp(op)
		if err != nil {
			f.Fatal(err)
		}
		for _, v := range vs {
			if text, isNull, err := v.Text(); err == nil && !isNull {
				out = append(out, text)
			}
		}
	}
	return out
}

// vectorFormatEntries returns the entries of the format vectors' inputs.
func vectorFormatEntries(f *testing.F) []attr.Entry {
	f.Helper()
	vs, err := testvectors.ByOp("format")
	if err != nil {
		f.Fatal(err)
	}
	var out []attr.Entry
	for _, v := range vs {
		m, err := v.InputMap()
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, m.Entries()...)
	}
	return out
}

// refTrim is an independent form of the docs/compatibility.md#whitespace trim, from the written
// out set of space_test.go (internal/pytext implements it).
func refTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return slices.Contains(pythonSpace, r) })
}

func FuzzParse(f *testing.F) {
	for _, s := range vectorTexts(f, "parse", "extend", "duplicate_keys") {
		f.Add(s)
	}
	for _, tt := range parseTests {
		f.Add(tt.in)
	}
	for _, tt := range decodeTests {
		f.Add("a=" + tt.in + ",b=" + tt.want)
	}
	for _, sp := range trimSeeds() {
		f.Add(sp + "k" + sp + "=" + sp + "v" + sp + "," + sp + "=x")
	}
	for _, tt := range formatTests {
		f.Add(tt.want)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := carrier.Parse(s)
		for k, v := range m.All() {
			if k == "" || k != refTrim(k) || strings.Contains(k, ",") {
				t.Fatalf("Parse(%q): bad key %q", s, k)
			}
			if v.Kind() != attr.KindString {
				t.Fatalf("Parse(%q): %q is %v, want a string", s, k, v.Kind())
			}
		}

		// The rewritten parser returns what the original one did.
		if old := carrier.OldParse(s); !m.Equal(old) {
			t.Fatalf("Parse(%q) = %v, the original implementation %v", s, m, old)
		}

		// Format(Parse(s)) is a fixed point after one round, and that round
		// loses exactly the keys that contain NUL and the values that are
		// not valid UTF-8.
		t1, dropped := carrier.Format(m)
		m1 := carrier.Parse(t1)
		if t2, d2 := carrier.Format(m1); t2 != t1 || d2 != nil {
			t.Fatalf("not a fixed point: Parse(%q) formats as %q, which re-formats as %q (dropped %v)", s, t1, t2, d2)
		}
		want := &attr.Map{}
		var wantDropped []dropWant
		for k, v := range m.All() {
			switch {
			case strings.IndexByte(k, 0) >= 0: // a parsed key holds no ',' or '='
				wantDropped = append(wantDropped, dropWant{k, carrier.ErrKeyHasNUL})
			case !utf8.ValidString(v.AsString()):
				wantDropped = append(wantDropped, dropWant{k, carrier.ErrInvalidUTF8})
			default:
				want.Set(k, v)
			}
		}
		if !m1.Equal(want) {
			t.Fatalf("Parse(Format(Parse(%q))) = %v, want %v", s, m1, want)
		}
		checkDropped(t, dropped, wantDropped)

		// Extend is Format(Compose(Parse(s), …)), here with the original
		// implementations.
		defaults := attr.FromStrings("a", "default", "nv.dl.rank", "0")
		overrides := attr.NewMap(attr.Entry{Key: "b", Value: attr.Null()}, attr.Entry{Key: "c", Value: attr.Int(-1)})
		got, gotDropped := carrier.Extend(s, defaults, overrides)
		wantText, wantDroppedOld := carrier.OldFormat(carrier.Compose(carrier.OldParse(s), defaults, overrides))
		if got != wantText || !slices.Equal(droppedKeys(gotDropped), droppedKeys(wantDroppedOld)) {
			t.Fatalf("Extend(%q) = %q, %v; the original implementation %q, %v", s, got, gotDropped, wantText, wantDroppedOld)
		}

		// The checks read segments as Parse does.
		dups := carrier.DuplicateKeys(s)
		if old := carrier.OldDuplicateKeys(s); !slices.Equal(dups, old) {
			t.Fatalf("DuplicateKeys(%q) = %q, the original implementation %q", s, dups, old)
		}
		for _, k := range dups {
			if !m.Has(k) {
				t.Fatalf("DuplicateKeys(%q) reports %q, which Parse does not return", s, k)
			}
		}
		for _, seg := range carrier.Malformed(s) {
			k, _, ok := strings.Cut(seg, "=")
			if ok && refTrim(k) != "" || refTrim(seg) == "" {
				t.Fatalf("Malformed(%q) reports %q", s, seg)
			}
		}
	})
}

func FuzzFormatRoundTrip(f *testing.F) {
	type seed struct{ k, v string }
	var seeds []seed
	for _, tt := range formatTests {
		for _, e := range tt.in {
			seeds = append(seeds, seed{e.Key, e.Value.String()})
		}
	}
	for _, e := range vectorFormatEntries(f) {
		seeds = append(seeds, seed{e.Key, e.Value.String()})
	}
	for _, tt := range encodeTests {
		seeds = append(seeds, seed{tt.want, tt.in})
	}
	for _, sp := range trimSeeds() {
		seeds = append(seeds, seed{sp + "k" + sp, sp + "v" + sp})
	}
	for i, s := range seeds {
		next := seeds[(i+1)%len(seeds)]
		// The third key repeats the first after trimming every other time.
		k3 := next.k + "3"
		if i%2 == 0 {
			k3 = " " + s.k + "\u3000"
		}
		f.Add(s.k, s.v, next.k, next.v, k3, int64(i-7), formatFloatSeeds[i%len(formatFloatSeeds)], i%3 == 0)
	}
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3 string, n int64, x float64, b bool) {
		m := attr.NewMap(
			attr.Entry{Key: k1, Value: attr.String(v1)},
			attr.Entry{Key: k2, Value: attr.String(v2)},
			attr.Entry{Key: k3, Value: attr.Int64(n)},
			attr.Entry{Key: k3 + ".f", Value: attr.Float64(x)},
			attr.Entry{Key: k1 + ".b", Value: attr.Bool(b)},
			attr.Entry{Key: k2 + ".null", Value: attr.Null()},
		)
		// The expected result, from the rules of docs/compatibility.md#carrier-format: keys trimmed,
		// bad keys and invalid UTF-8 dropped, last value at first position.
		want := &attr.Map{}
		var wantDropped []dropWant
		for k, v := range m.All() {
			if v.IsNull() {
				continue
			}
			name := refTrim(k)
			text, _ := v.Text()
			switch {
			case name == "" || strings.ContainsAny(name, ",="):
				wantDropped = append(wantDropped, dropWant{k, carrier.ErrKeyNotCarried})
			case strings.IndexByte(name, 0) >= 0:
				wantDropped = append(wantDropped, dropWant{k, carrier.ErrKeyHasNUL})
			case !utf8.ValidString(text):
				wantDropped = append(wantDropped, dropWant{k, carrier.ErrInvalidUTF8})
			default:
				want.Set(name, attr.String(text))
			}
		}
		got, dropped := carrier.Format(m)
		if back := carrier.Parse(got); !back.Equal(want) {
			t.Fatalf("Parse(Format(%v)) = %v, want %v (text %q)", m, back, want, got)
		}
		if strings.IndexByte(got, 0) >= 0 {
			t.Fatalf("Format(%v) = %q contains NUL, which no environment variable can hold", m, got)
		}
		if old, oldDropped := carrier.OldFormat(m); got != old || !slices.Equal(droppedKeys(dropped), droppedKeys(oldDropped)) {
			t.Fatalf("Format(%v) = %q, %v; the original implementation %q, %v", m, got, dropped, old, oldDropped)
		}
		if want.Len() > 0 && strings.Count(got, ",") != want.Len()-1 {
			t.Fatalf("Format(%v) = %q: %d entries expected", m, got, want.Len())
		}
		checkDropped(t, dropped, wantDropped)
	})
}

var formatFloatSeeds = []float64{0, 1, 0.1, 1e16, 1e-5, 1e15, 1e-4, 5e-324, math.MaxFloat64, -2.5, math.NaN(), math.Inf(1), math.Copysign(0, -1)}

// refDecode is an independent form of docs/compatibility.md#percent-decoding: ASCII runs unescaped with a
// regular expression, then decoded by the WHATWG Encoding Standard's UTF-8
// decoder (which replaces maximal subparts, as Python does).
func refDecode(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexFunc(s, func(r rune) bool { return r >= utf8.RuneSelf })
		if i < 0 {
			i = len(s)
		}
		// The bytes before i are ASCII; IndexFunc also stops at invalid
		// bytes (RuneError), which are all ≥ 0x80.
		raw := escape.ReplaceAllFunc([]byte(s[:i]), func(m []byte) []byte {
			n, _ := strconv.ParseUint(string(m[1:]), 16, 8)
			return []byte{byte(n)}
		})
		b.WriteString(whatwgUTF8(raw))
		s = s[i:]
		j := 0
		for j < len(s) && s[j] >= utf8.RuneSelf {
			j++
		}
		b.WriteString(s[:j])
		s = s[j:]
	}
	return b.String()
}

var escape = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)

// whatwgUTF8 is the UTF-8 decoder of https://encoding.spec.whatwg.org/#utf-8-decoder.
func whatwgUTF8(p []byte) string {
	var (
		b            strings.Builder
		cp           rune
		needed, seen int
		lower, upper = byte(0x80), byte(0xBF)
	)
	for i := 0; i < len(p); i++ {
		c := p[i]
		if needed == 0 {
			switch {
			case c <= 0x7F:
				b.WriteByte(c)
			case c >= 0xC2 && c <= 0xDF:
				needed, cp = 1, rune(c&0x1F)
			case c >= 0xE0 && c <= 0xEF:
				if c == 0xE0 {
					lower = 0xA0
				}
				if c == 0xED {
					upper = 0x9F
				}
				needed, cp = 2, rune(c&0xF)
			case c >= 0xF0 && c <= 0xF4:
				if c == 0xF0 {
					lower = 0x90
				}
				if c == 0xF4 {
					upper = 0x8F
				}
				needed, cp = 3, rune(c&0x7)
			default:
				b.WriteRune(utf8.RuneError)
			}
			continue
		}
		if c < lower || c > upper {
			cp, needed, seen, lower, upper = 0, 0, 0, 0x80, 0xBF
			b.WriteRune(utf8.RuneError)
			i-- // prepend c to the stream
			continue
		}
		lower, upper = 0x80, 0xBF
		cp = cp<<6 | rune(c&0x3F)
		seen++
		if seen == needed {
			b.WriteRune(cp)
			cp, needed, seen = 0, 0, 0
		}
	}
	if needed != 0 {
		b.WriteRune(utf8.RuneError)
	}
	return b.String()
}

func TestRefDecode(t *testing.T) {
	t.Parallel()
	for _, tt := range decodeTests {
		if got := refDecode(tt.in); got != tt.want {
			t.Errorf("refDecode(%q) = %q, want %q (the fuzz reference is wrong)", tt.in, got, tt.want)
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

var encoded = regexp.MustCompile(`^([A-Za-z0-9_.~-]|%[0-9A-F]{2})*$`)

func FuzzDecode(f *testing.F) {
	for _, tt := range decodeTests {
		f.Add(tt.in)
		f.Add(tt.want)
	}
	for _, tt := range encodeTests {
		f.Add(tt.in)
		f.Add(tt.want)
	}
	for _, s := range vectorTexts(f, "parse", "extend") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := carrier.Decode(s)
		if !strings.Contains(s, "%") && got != s {
			t.Fatalf("Decode(%q) = %q, want it unchanged (no %%)", s, got)
		}
		if want := refDecode(s); got != want {
			t.Fatalf("Decode(%q) = %q, reference %q", s, got, want)
		}
		if old := carrier.OldDecode(s); got != old {
			t.Fatalf("Decode(%q) = %q, the original implementation %q", s, got, old)
		}
		if isASCII(s) && !utf8.ValidString(got) {
			t.Fatalf("Decode(%q) = %q is not valid UTF-8", s, got)
		}
		if utf8.ValidString(s) {
			e := carrier.Encode(s)
			if !encoded.MatchString(e) {
				t.Fatalf("Encode(%q) = %q has unsafe characters", s, e)
			}
			if back := carrier.Decode(e); back != s {
				t.Fatalf("Decode(Encode(%q)) = %q", s, back)
			}
		}
	})
}

// FuzzManyEntries builds carriers and maps of 40 to 300 entries from the
// fuzzer's input, so that the paths that only large inputs take are
// exercised: Format's list of entries beyond its stack and its index of
// names, the attribute map's hash index (above 48 keys), keys that repeat
// and keys that collide after trimming. Parse, DuplicateKeys, Format,
// Extend and Compose must return exactly what the original implementations
// (export_test.go) return.
func FuzzManyEntries(f *testing.F) {
	for _, s := range vectorTexts(f, "parse", "extend", "duplicate_keys") {
		f.Add(s, uint16(len(s)))
	}
	for i, tt := range parseTests {
		f.Add(tt.in, uint16(i*997))
	}
	f.Add("a=1,b=%2C, c =x,novalue,=v,k\x00=nul,u=%C3%A9%E2%82", uint16(0))
	f.Add("k=v", uint16(0xffff))
	f.Fuzz(func(t *testing.T, s string, n uint16) {
		count := 40 + int(n%261)
		mod := 1 + int(n>>9) // keys repeat every mod segments of one piece
		pieces := strings.Split(s, ",")
		var b strings.Builder
		for i := range count {
			if i > 0 {
				b.WriteByte(',')
			}
			p := pieces[i%len(pieces)]
			k, v, ok := strings.Cut(p, "=")
			if !ok {
				b.WriteString(p)
				continue
			}
			if i%5 == 0 {
				k = " " + k + "\t"
			}
			b.WriteString(k + strconv.Itoa(i/len(pieces)%mod) + "=" + v)
		}
		text := b.String()

		parsed := carrier.Parse(text)
		if old := carrier.OldParse(text); !parsed.Equal(old) {
			t.Fatalf("Parse(%q) = %v, the original implementation %v", text, parsed, old)
		}
		if got, old := carrier.DuplicateKeys(text), carrier.OldDuplicateKeys(text); !slices.Equal(got, old) {
			t.Fatalf("DuplicateKeys(%q) = %q, the original implementation %q", text, got, old)
		}

		// A map with every kind of value and keys that trim to the same
		// name, contain NUL or cannot be carried.
		m := &attr.Map{}
		i := 0
		for k, v := range parsed.All() {
			switch i % 6 {
			case 1:
				k = " " + k
			case 2:
				k += "\u3000"
			case 3:
				k += "\x00"
			case 4:
				k = "\u2003" + k + ","
			}
			switch i % 7 {
			case 0:
				v = attr.Null()
			case 1:
				v = attr.Int(i - 100)
			case 2:
				v = attr.Float64(float64(i) / 7)
			case 3:
				v = attr.Bool(i%2 == 0)
			}
			m.Set(k, v)
			i++
		}
		got, dropped := carrier.Format(m)
		old, oldDropped := carrier.OldFormat(m)
		if got != old || !slices.Equal(droppedKeys(dropped), droppedKeys(oldDropped)) {
			t.Fatalf("Format(%v) = %q, %v; the original implementation %q, %v", m, got, dropped, old, oldDropped)
		}
		for j, d := range dropped {
			if !errors.Is(d.Err, carrier.ErrKeyNotCarried) && !errors.Is(d.Err, carrier.ErrInvalidUTF8) ||
				errors.Is(d.Err, carrier.ErrKeyNotCarried) != errors.Is(oldDropped[j].Err, carrier.ErrKeyNotCarried) {
				t.Fatalf("Format(%v) dropped %v, the original implementation %v", m, d, oldDropped[j])
			}
		}

		// Defaults and overrides taken from the map: every third entry, and
		// every fourth.
		defaults, overrides := &attr.Map{}, &attr.Map{}
		i = 0
		for k, v := range m.All() {
			if i%3 == 0 {
				defaults.Set(k, v)
			}
			if i%4 == 0 {
				overrides.Set(k, attr.String(strconv.Itoa(i)))
			}
			i++
		}
		got, dropped = carrier.Extend(text, defaults, overrides)
		old, oldDropped = carrier.OldFormat(carrier.Compose(carrier.OldParse(text), defaults, overrides))
		if got != old || !slices.Equal(droppedKeys(dropped), droppedKeys(oldDropped)) {
			t.Fatalf("Extend(%q) = %q, %v; the original implementation %q, %v", text, got, dropped, old, oldDropped)
		}
		composed := carrier.Compose(parsed, defaults, overrides)
		want := attr.NewMap(slices.Concat(defaults.Entries(), parsed.Entries(), overrides.Entries())...)
		if !composed.Equal(want) {
			t.Fatalf("Compose = %v, want %v", composed, want)
		}
	})
}

// FuzzValidUTF8 checks Format's UTF-8 validator against the standard one.
func FuzzValidUTF8(f *testing.F) {
	for _, tt := range decodeTests {
		f.Add(tt.in)
		f.Add(tt.want + tt.in + tt.want)
	}
	f.Add(strings.Repeat("abcdefg\u00e9", 10) + "\xff")
	f.Add(strings.Repeat("\U0010FFFF12345678", 3) + "\xed\xa0\x80")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := carrier.ValidUTF8(s), utf8.ValidString(s); got != want {
			t.Fatalf("validUTF8(%q) = %v, utf8.ValidString %v", s, got, want)
		}
	})
}

// FuzzCheckName checks Format's key test (eight bytes at a time) against the
// rule written plainly.
func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"", "a", "a,b", "abcdefgh=", "abcdefghijklmnop\x00", ",", "\x00,", "abcdefg,\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := carrier.CheckName(name)
		switch {
		case name == "" || strings.ContainsAny(name, ",="):
			if err != carrier.ErrKeyNotCarried {
				t.Fatalf("checkName(%q) = %v, want ErrKeyNotCarried", name, err)
			}
		case strings.IndexByte(name, 0) >= 0:
			if err != carrier.ErrKeyHasNUL || !errors.Is(err, carrier.ErrKeyNotCarried) {
				t.Fatalf("checkName(%q) = %v, want the NUL error", name, err)
			}
		case err != nil:
			t.Fatalf("checkName(%q) = %v, want nil", name, err)
		}
	})
}
