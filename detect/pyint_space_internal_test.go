package detect

import (
	"context"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/nemolens/lens-go/environ"
)

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

func TestIsPyIntSpace(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if got, want := isPyIntSpace(r), pythonIntSpace[r]; got != want {
			t.Errorf("isPyIntSpace(%U) = %v, want %v", r, got, want)
		}
	}
}

func TestTrimPyIntSpace(t *testing.T) {
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
		if got := trimPyIntSpace(c.in); got != c.want {
			t.Errorf("trimPyIntSpace(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestPyIntText: every row is what CPython 3.11's int(s) does (str(int(s))
// for the accepted ones).
func TestPyIntText(t *testing.T) {
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
		got, ok := pyIntText(c.in)
		if c.want == "" {
			if ok {
				t.Errorf("pyIntText(%q) = %q, true; want a rejection", c.in, got)
			}
			continue
		}
		if !ok || got != c.want {
			t.Errorf("pyIntText(%q) = %q, %v; want %q, true", c.in, got, ok, c.want)
		}
	}
}

// TestPyIntWhitespace: pyInt ignores int()'s whitespace, not str.strip's.
func TestPyIntWhitespace(t *testing.T) {
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
		got, ok := pyInt(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("pyInt(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// oneGPUPerIndex is an NVML whose every index is a GPU named after it.
type oneGPUPerIndex struct{}

type indexGPU int

func (oneGPUPerIndex) DeviceByIndex(i int) (NVMLDevice, error) {
	if i < 0 || i > 9 {
		return nil, errors.New("no such device")
	}
	return indexGPU(i), nil
}
func (oneGPUPerIndex) DriverVersion() (string, error) { return "550.54.15", nil }

func (d indexGPU) Name() (string, error)                    { return "NVIDIA H100", nil }
func (d indexGPU) UUID() (string, error)                    { return "GPU-" + string(rune('0'+d)), nil }
func (d indexGPU) Serial() (string, error)                  { return "", errors.New("n/a") }
func (d indexGPU) PCIBusID() (string, error)                { return "", errors.New("n/a") }
func (d indexGPU) CUDAComputeCapability() (int, int, error) { return 0, 0, errors.New("n/a") }
func (d indexGPU) MemoryTotal() (uint64, error)             { return 0, errors.New("n/a") }

// TestGPULocalRankPythonInt: the reference reads LOCAL_RANK with int(s)
// (failure → rank 0), so U+001C–U+001F around it make the rank 0 while
// non-ASCII whitespace is ignored.
func TestGPULocalRankPythonInt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		localRank string
		index     int64
	}{
		{"2", 2}, {" 2 ", 2}, {"\u00a02\u3000", 2}, {"\v2\f", 2}, {"0_2", 2}, {"٢", 2},
		{"\x1c2", 0}, {"2\x1f", 0}, {"2.0", 0},
	}
	for _, c := range cases {
		got := GPU(context.Background(), WithEnv(environ.Map{"LOCAL_RANK": c.localRank}), WithNVML(oneGPUPerIndex{}))
		v, ok := got.Get("nv.gpu.index")
		if !ok || v.AsInt64() != c.index {
			t.Errorf("LOCAL_RANK=%q: nv.gpu.index = %v (present %v), want %d", c.localRank, v, ok, c.index)
		}
	}
}
