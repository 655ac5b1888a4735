package pytext_test

import (
	"testing"
	"unicode/utf8"

	"github.com/nemolens/lens-go/internal/pytext"
)

// TestInt: Python int(s) within int64 (docs/compatibility.md#python-int).
func TestInt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"7", 7, true}, {" +007 ", 7, true}, {"-0", 0, true}, {"1_000", 1000, true}, {"1_0_0", 100, true},
		{"٣", 3, true}, {"１２", 12, true}, {"\U0001D7D8\U0001D7E1", 9, true}, {"-5", -5, true},
		{"\u00a05\u2003", 5, true}, {"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"99999999999999999999999", 0, false},
		{"", 0, false}, {" ", 0, false}, {"+", 0, false}, {"_1", 0, false}, {"1_", 0, false},
		{"1__0", 0, false}, {"0x10", 0, false}, {"3.5", 0, false}, {"--5", 0, false}, {"GPU-1", 0, false},
		{"\xff", 0, false}, {"1e3", 0, false},
	}
	for _, c := range cases {
		got, ok := pytext.Int(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Int(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// pythonIntSpace is the set of characters Python's int() ignores around a
// number, written out: the result of
//
//	[cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000
//	 and not chr(cp).isdigit() and int_accepts(chr(cp) + "5" + chr(cp))]
//
// in CPython 3.11: Py_ISSPACE's six ASCII characters, and the non-ASCII
// characters that str.isspace() accepts (int() maps them to ' ' first).
// U+001C–U+001F are whitespace for str.strip() but not for int().
var pythonIntSpace = map[rune]bool{
	'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true,
	0x85: true, 0xA0: true, 0x1680: true,
	0x2000: true, 0x2001: true, 0x2002: true, 0x2003: true, 0x2004: true, 0x2005: true,
	0x2006: true, 0x2007: true, 0x2008: true, 0x2009: true, 0x200A: true,
	0x2028: true, 0x2029: true, 0x202F: true, 0x205F: true, 0x3000: true,
}

func TestIsIntSpace(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if got, want := pytext.IsIntSpace(r), pythonIntSpace[r]; got != want {
			t.Errorf("IsIntSpace(%U) = %v, want %v", r, got, want)
		}
	}
}

func TestTrimIntSpace(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{" 5 ", "5"},
		{"\t\n\v\f\r5\r\f\v\n\t", "5"},
		{"\u00a05\u3000", "5"},
		{"\u20285\u2029", "5"},
		{"\x1c5", "\x1c5"}, // str.strip removes it, int() does not
		{"5\x1f", "5\x1f"},
		{" \x1e5 ", "\x1e5"},
		{"\xff 5", "\xff 5"}, // bytes that are not UTF-8 are never trimmed
		{"", ""},
	}
	for _, c := range cases {
		if got := pytext.TrimIntSpace(c.in); got != c.want {
			t.Errorf("TrimIntSpace(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestIntText: every row is what CPython 3.11's int(s) does (str(int(s))
// for the accepted ones).
func TestIntText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want string // "" = int() raises ValueError
	}{
		{"7", "7"}, {" +007 ", "7"}, {"-0", "0"}, {"+0", "0"}, {"0_0", "0"}, {"007", "7"},
		{"1_0", "10"}, {"1_000", "1000"}, {"-0_5", "-5"},
		{"١٠", "10"}, {"٣", "3"}, {"１２", "12"}, {"\U0001D7D85", "5"},
		{" 5 ", "5"}, {"\t5\n", "5"}, {"\v5\f", "5"}, {"\r5", "5"},
		{"\u00a05", "5"}, {"\u00855", "5"}, {"5\u3000", "5"}, {"\u20285", "5"},
		{"9223372036854775808", "9223372036854775808"},
		{"-99999999999999999999", "-99999999999999999999"},
		{"5\x1f", ""}, {"\x1c5", ""}, {"\x1d5\x1e", ""},
		{"", ""}, {" ", ""}, {"+", ""}, {"-", ""}, {"_1", ""}, {"1_", ""}, {"1__0", ""}, {"+_1", ""},
		{"0x10", ""}, {"0b1", ""}, {"3.5", ""}, {"1e3", ""}, {"--5", ""}, {"+-5", ""}, {"5-", ""},
		{"5\x00", ""}, {"5 5", ""}, {"- 5", ""}, {"+\u00a05", ""}, {"GPU-1", ""}, {"\xff", ""}, {"5\xff", ""},
	}
	for _, c := range cases {
		got, ok := pytext.IntText(c.in)
		if c.want == "" {
			if ok {
				t.Errorf("IntText(%q) = %q, true; want a rejection", c.in, got)
			}
			continue
		}
		if !ok || got != c.want {
			t.Errorf("IntText(%q) = %q, %v; want %q, true", c.in, got, ok, c.want)
		}
	}
}

// TestIntWhitespace: Int ignores int()'s whitespace, not str.strip's.
func TestIntWhitespace(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"\u00a05\u2003", 5, true}, {"\v5\f", 5, true},
		{"\x1c5", 0, false}, {"5\x1f", 0, false}, {"\x1d5\x1e", 0, false},
	}
	for _, c := range cases {
		got, ok := pytext.Int(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Int(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
