package pytext_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/internal/pytext"
)

// pythonSpace is the docs/compatibility.md#whitespace set, written out: the characters for which
// CPython's str.isspace() is true (and which str.strip() removes).
var pythonSpace = []rune{
	0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680,
	0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
	0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
}

// notSpace are neighbours of the set that Python does not strip.
var notSpace = []rune{
	0x00, 0x08, 0x0E, 0x1B, 0x21, 0x7F, 0x84, 0x86, 0x9F, 0xA1, 0xAD, 0x167F, 0x1681,
	0x180E, // Mongolian vowel separator: no longer a space since Unicode 6.3
	0x1FFF, 0x200B, 0x200C, 0x200D, 0x2027, 0x202A, 0x202E, 0x2030, 0x205E, 0x2060,
	0x2FFF, 0x3001, 0xFEFF, 0xFFFD, 0x10FFFF,
}

func TestIsSpaceExhaustive(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= 0x10FFFF; r++ {
		want := slices.Contains(pythonSpace, r)
		if got := pytext.IsSpace(r); got != want {
			t.Errorf("IsSpace(%U) = %v, want %v", r, got, want)
		}
	}
	for _, r := range []rune{-1, 0x110000, math.MaxInt32} {
		if pytext.IsSpace(r) {
			t.Errorf("IsSpace(%d) = true", r)
		}
	}
}

// trimTests also seed FuzzParseInt.
var trimTests = []struct {
	in, want string
}{
	{"", ""},
	{" ", ""},
	{"x", "x"},
	{" a b ", "a b"},
	{"\t\n\v\f\r x \r\n", "x"},
	{"\x1c\x1d\x1e\x1fx\x1f", "x"},
	{"\u00a01\u00a0", "1"},
	{"\u3000\u2003x\u205f\u202f", "x"},
	{"\u0085x\u1680", "x"},
	{"\u200bx\u200b", "\u200bx\u200b"}, // zero width space stays
	{"\ufeffx\ufeff", "\ufeffx\ufeff"}, // BOM stays
	{"\u180ex", "\u180ex"},
	{"\x00x\x00", "\x00x\x00"},
	{"\xff x \xff", "\xff x \xff"}, // invalid UTF-8 is never trimmed
	{" \xff ", "\xff"},
	{" \xc2", "\xc2"},         // truncated U+0085
	{"\xe3\x80 ", "\xe3\x80"}, // truncated U+3000
	{"\xa0x", "\xa0x"},        // a raw 0xA0 byte is not U+00A0
}

func TestTrimSpace(t *testing.T) {
	t.Parallel()
	for _, tt := range trimTests {
		if got := pytext.TrimSpace(tt.in); got != tt.want {
			t.Errorf("TrimSpace(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, r := range pythonSpace {
		s := string(r)
		if got := pytext.TrimSpace(s + s + "x" + s + "y" + s); got != "x"+s+"y" {
			t.Errorf("TrimSpace around %U = %q", r, got)
		}
		// Why strings.TrimSpace is not enough: it misses U+001C–U+001F only.
		if stdTrims, separator := strings.TrimSpace(s) == "", r >= 0x1c && r <= 0x1f; stdTrims == separator {
			t.Errorf("strings.TrimSpace(%U) trims = %v", r, stdTrims)
		}
	}
	for _, r := range notSpace {
		s := string(r) + "x" + string(r)
		if got := pytext.TrimSpace(s); got != s {
			t.Errorf("TrimSpace(%q) = %q, want it unchanged", s, got)
		}
	}
}

// parseIntTests: the docs/compatibility.md#integer-rule table plus the int64 bounds. ok false means
// rejected. They also seed FuzzParseInt.
var parseIntTests = []struct {
	in   string
	want int64
	ok   bool
}{
	{"7", 7, true},
	{" +007 ", 7, true},
	{"-0", 0, true},
	{"+5", 5, true},
	{" 5", 5, true},
	{"5 ", 5, true},
	{"\t5\n", 5, true},
	{"\u00a05\u2003", 5, true},
	{"\x1c5\x1f", 5, true},
	{"007", 7, true},
	{"-1", -1, true},
	{"9007199254740993", 9007199254740993, true},
	{"9223372036854775807", math.MaxInt64, true},
	{"-9223372036854775808", math.MinInt64, true},
	{"+0009223372036854775807", math.MaxInt64, true},
	{"9223372036854775808", 0, false}, // divergence: Python accepts any size
	{"-9223372036854775809", 0, false},
	{"99999999999999999999999", 0, false},
	{"٣", 0, false},
	{"１２", 0, false},
	{"0x10", 0, false},
	{"0b1", 0, false},
	{"1_000", 0, false},
	{"1_0", 0, false},
	{"", 0, false},
	{" ", 0, false},
	{"+", 0, false},
	{"-", 0, false},
	{"3.5", 0, false},
	{"1e3", 0, false},
	{"--5", 0, false},
	{"+-5", 0, false},
	{"5-", 0, false},
	{"5\x00", 0, false},
	{"5 5", 0, false},
	{"\u200b5", 0, false},
	{"5\xff", 0, false},
	{"True", 0, false},
}

func TestParseInt(t *testing.T) {
	t.Parallel()
	for _, tt := range parseIntTests {
		got, err := pytext.ParseInt(tt.in)
		switch {
		case tt.ok && (err != nil || got != tt.want):
			t.Errorf("ParseInt(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		case !tt.ok && !errors.Is(err, pytext.ErrNotInteger):
			t.Errorf("ParseInt(%q) = %d, %v; want an error wrapping ErrNotInteger", tt.in, got, err)
		case !tt.ok && got != 0:
			t.Errorf("ParseInt(%q) returned %d with its error", tt.in, got)
		}
	}
}
