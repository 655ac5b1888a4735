package carrier_test

import (
	"strings"
	"testing"

	"github.com/nemolens/lens-go/carrier"
)

const rep = "\uFFFD"

// decodeTests: every row of docs/compatibility.md#percent-decoding plus the maximal-subpart cases. The
// expectations of the ASCII inputs were checked with CPython 3.11
// urllib.parse.unquote. The rows also seed FuzzDecode and FuzzParse.
var decodeTests = []struct {
	in, want string
}{
	// docs/compatibility.md#percent-decoding table.
	{"%zz%4", "%zz%4"},
	{"%", "%"},
	{"%2C%3D%25", ",=%"},
	{"%41%4a%4A", "AJJ"},
	{"%ff", rep},
	{"%E2%82", rep},                // truncated sequence: one U+FFFD
	{"%80%80", rep + rep},          // lone continuation bytes: one each
	{"%ED%A0%80", rep + rep + rep}, // encoded surrogate: ED then A0 and 80
	{"%C3%28", rep + "("},
	{"x+y", "x+y"},
	{"%20x%20", " x "},
	{"h%C3%A9llo", "héllo"},
	// Each ASCII run is decoded on its own: a raw non-ASCII character
	// between the escapes of one sequence is not rejoined with them.
	{"%C3é%A9", rep + "é" + rep},
	{"%C3%A9é%C3%A9", "ééé"},
	// Maximal subparts (Unicode §3.9, Table 3-7 and the W3C practice).
	{"%F0%9F%98", rep},                      // truncated 4-byte sequence
	{"%F0%9F%98x", rep + "x"},               // interrupted by ASCII
	{"%F0%9F%98%41", rep + "A"},             // interrupted by an escaped ASCII byte
	{"%F0%9F%98%80", "😀"},                   // complete
	{"%F4%90%80%80", rep + rep + rep + rep}, // above U+10FFFF: F4 alone, then three continuations
	{"%F4%8F%BF%BF", "\U0010FFFF"},
	{"%C0%80", rep + rep}, // overlong: C0 never starts a sequence
	{"%C1%BF", rep + rep},
	{"%E0%80%80", rep + rep + rep}, // overlong: E0 needs A0..BF next
	{"%E0%A0", rep},                // truncated but valid so far
	{"%E0%A0x", rep + "x"},
	{"%F5%80", rep + rep}, // F5..FF never start a sequence
	{"%C2", rep},
	{"%EF%BF%BF", "\uFFFF"}, // a noncharacter is valid UTF-8
	{"%e2%82%ac", "€"},      // lowercase hex
	{"%E2%82%AC%E2%82", "€" + rep},
	// Malformed escapes are kept and the rest is still decoded.
	{"a%2", "a%2"},
	{"%%41", "%A"},
	{"%4%41", "%4A"},
	{"%g1%41", "%g1A"},
	{"100%", "100%"},
	{"%+41", "%+41"},
	// Raw bytes (not valid UTF-8) are copied verbatim, even next to escapes.
	{"\xff%41", "\xffA"},
	{"%C3\xa9", rep + "\xa9"},
	{"\xc3%A9", "\xc3" + rep},
	{"%41\xff\xfe%42", "A\xff\xfeB"},
	// No '%': unchanged.
	{"", ""},
	{"plain value é", "plain value é"},
	{"\xff\xfe", "\xff\xfe"},
	// Longer than the decoder's stack buffer.
	{strings.Repeat("%41", 100), strings.Repeat("A", 100)},
	{strings.Repeat("%E2%82%AC", 40) + "%E2", strings.Repeat("€", 40) + rep},
	{strings.Repeat("x", 70) + "%2C" + strings.Repeat("é", 30) + "%2C", strings.Repeat("x", 70) + "," + strings.Repeat("é", 30) + ","},
}

func TestDecode(t *testing.T) {
	t.Parallel()
	for _, tt := range decodeTests {
		if got := carrier.Decode(tt.in); got != tt.want {
			t.Errorf("Decode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// encodeTests: Python quote(s, safe="") results (CPython 3.11). They also
// seed the round-trip fuzz tests.
var encodeTests = []struct {
	in, want string
}{
	{"", ""},
	{"abcXYZ019", "abcXYZ019"},
	{"x y~_.-", "x%20y~_.-"},
	{"+", "%2B"},
	{"/", "%2F"},
	{"%", "%25"},
	{"%20", "%2520"},
	{",=", "%2C%3D"},
	{"exp/1,seed=7", "exp%2F1%2Cseed%3D7"},
	{"image=name:tag", "image%3Dname%3Atag"},
	{"é", "%C3%A9"},
	{"😀", "%F0%9F%98%80"},
	{"\x00\x7f", "%00%7F"},
	{"!*'();:@&$?#[]", "%21%2A%27%28%29%3B%3A%40%26%24%3F%23%5B%5D"},
	{"\"<>\\^`{|}", "%22%3C%3E%5C%5E%60%7B%7C%7D"},
	{"\t\n", "%09%0A"},
}

func TestEncode(t *testing.T) {
	t.Parallel()
	for _, tt := range encodeTests {
		if got := carrier.Encode(tt.in); got != tt.want {
			t.Errorf("Encode(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := carrier.Decode(tt.want); got != tt.in {
			t.Errorf("Decode(Encode(%q)) = %q", tt.in, got)
		}
	}
}

// TestEncodeEveryByte checks the safe set byte by byte: only RFC 3986
// unreserved characters pass; everything else is %XX in uppercase hex.
func TestEncodeEveryByte(t *testing.T) {
	t.Parallel()
	const hexdigits = "0123456789ABCDEF"
	for c := range 256 {
		b := byte(c)
		unreserved := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte("_.-~", b) >= 0
		want := string([]byte{'%', hexdigits[b>>4], hexdigits[b&15]})
		if unreserved {
			want = string([]byte{b})
		}
		if got := carrier.Encode(string([]byte{b})); got != want {
			t.Errorf("Encode(%#02x) = %q, want %q", b, got, want)
		}
	}
}
