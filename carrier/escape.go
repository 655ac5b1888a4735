package carrier

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"
)

// The percent-encoding rules below follow Python's urllib.parse (the
// reference formats with quote(value, safe="") and parses with unquote(value),
// which is unquote(value, encoding="utf-8", errors="replace")). The unreserved
// set is RFC 3986 §2.3's; see also https://docs.python.org/3/library/urllib.parse.html#urllib.parse.quote.

const upperhex = "0123456789ABCDEF"

// replacement is U+FFFD REPLACEMENT CHARACTER in UTF-8.
const replacement = "\uFFFD"

// shouldEscape reports whether Format percent-encodes byte c: every byte
// except the RFC 3986 unreserved characters A-Z a-z 0-9 _ . - ~.
func shouldEscape(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return false
	case c == '_', c == '.', c == '-', c == '~':
		return false
	}
	return true
}

// escapeExtra[c] is the number of bytes that encoding adds for byte c: 2 for
// a byte that becomes %XX, 0 for an unreserved one.
var escapeExtra = func() (t [256]uint8) {
	for c := range 256 {
		if shouldEscape(byte(c)) {
			t[c] = 2
		}
	}
	return t
}()

// encodedLen returns len(Encode(s)).
func encodedLen(s string) int {
	n := len(s)
	for len(s) >= 4 {
		n += int(escapeExtra[s[0]]) + int(escapeExtra[s[1]]) + int(escapeExtra[s[2]]) + int(escapeExtra[s[3]])
		s = s[4:]
	}
	for i := 0; i < len(s); i++ {
		n += int(escapeExtra[s[i]])
	}
	return n
}

// percentEscape[c] is the escape %XY of byte c (uppercase hex) in the low
// three bytes of a little-endian word, so that it is stored at once.
var percentEscape = func() (t [256]uint32) {
	for c := range 256 {
		t[c] = '%' | uint32(upperhex[c>>4])<<8 | uint32(upperhex[c&15])<<16
	}
	return t
}()

// appendEncoded writes Encode(s) to b: the runs of unreserved bytes as they
// are, each other byte as %XX. The output goes through a buffer on the stack,
// so that b is not written piece by piece; a run of up to 8 bytes and an
// escape are each stored as one word (which may write beyond them into the
// buffer's free space: that is overwritten next).
func appendEncoded(b *strings.Builder, s string) {
	var (
		buf [codecBuffer]byte
		n   int // bytes in buf
	)
	for {
		i := escapeIndex(s)
		if i == len(s) {
			b.Write(buf[:n])
			b.WriteString(s)
			return
		}
		if len(buf)-n < max(i, 8)+4 {
			b.Write(buf[:n])
			n = 0
			if i+4 > len(buf) {
				b.WriteString(s[:i])
				s = s[i:]
				i = 0
			}
		}
		switch {
		case i == 0:
		case i <= 8 && len(s) >= 8:
			binary.LittleEndian.PutUint64(buf[n:], load64(s))
		default:
			copy(buf[n:], s[:i])
		}
		n += i
		binary.LittleEndian.PutUint32(buf[n:], percentEscape[s[i]])
		n += 3
		s = s[i+1:]
	}
}

// escapeIndex returns the index of the first byte of s that Encode
// percent-encodes, or len(s). It is kept out of appendEncoded so that its
// loop stays in registers.
//
//go:noinline
func escapeIndex(s string) int {
	for i := 0; i < len(s); i++ {
		if escapeExtra[s[i]] != 0 {
			return i
		}
	}
	return len(s)
}

// load64 returns the first 8 bytes of s (at least 8 long) as a
// little-endian word; the compiler reads them with one load.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// validUTF8 is utf8.ValidString, but checks the ASCII between multi-byte
// characters eight bytes at a time. (utf8.ValidString does so only up to the
// first non-ASCII byte, and then goes on byte by byte: an escape-heavy value
// in which one byte in twenty is not ASCII took it ten times longer.)
func validUTF8(s string) bool {
	for {
		for len(s) >= 8 {
			if load64(s)&0x8080808080808080 != 0 {
				break
			}
			s = s[8:]
		}
		i := 0
		for i < len(s) && s[i] < utf8.RuneSelf {
			i++
		}
		if i == len(s) {
			return true
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		s = s[i+size:]
	}
}

// Encode percent-encodes every byte of s except A-Z a-z 0-9 _ . - ~, with
// uppercase hex digits: Python's quote(s, safe="") on the UTF-8 bytes of s.
// A space becomes %20 and '+' becomes %2B. Encode takes one pass to size its
// result and one to write it, and allocates once (not at all when nothing
// needs encoding).
func Encode(s string) string {
	n := encodedLen(s)
	if n == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(n)
	appendEncoded(&b, s)
	return b.String()
}

// hexValue[c] is the value of the hex digit c (0-9, a-f, A-F), or 0xFF.
var hexValue = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case '0' <= c && c <= '9':
			t[c] = uint8(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = uint8(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			t[c] = uint8(c - 'A' + 10)
		default:
			t[c] = 0xFF
		}
	}
	return t
}()

// escapedByte decodes the escape %XY at s[i:], if there is one: a '%' and two
// hex digits.
func escapedByte(s string, i int) (byte, bool) {
	if i+2 >= len(s) || s[i] != '%' {
		return 0, false
	}
	hi, lo := hexValue[s[i+1]], hexValue[s[i+2]]
	return hi<<4 | lo, hi|lo < 16
}

// Decode percent-decodes s exactly as Python's urllib.parse.unquote does
// (UTF-8, errors="replace"):
//
//   - a string without '%' is returned unchanged;
//   - s is split into maximal runs of ASCII bytes and of non-ASCII bytes; a
//     non-ASCII run is copied verbatim, even when it is not valid UTF-8;
//   - in each ASCII run on its own, every %XY with two hex digits becomes the
//     byte 0xXY, and every other byte (a lone '%', '+') is kept;
//   - the bytes of the run are then read as UTF-8, and each maximal invalid
//     subpart (Unicode §3.9, "U+FFFD substitution of maximal subparts", the
//     practice Python follows) becomes one U+FFFD: a byte that cannot start
//     a sequence, or the longest prefix of a sequence that is valid so far
//     but incomplete (E2 82 gives one U+FFFD, not two).
//
// '+' never becomes a space. net/url's PathUnescape and QueryUnescape are not
// equivalent: they reject a malformed '%' and decode nothing.
//
// Decode makes one pass over s and allocates once (not at all without '%'):
// bytes other than escapes are copied as they are, in runs, because a byte
// that did not come from an escape is either ASCII, which is valid UTF-8 on
// its own, or non-ASCII, which Python copies verbatim. Only the bytes of
// escapes can form, or break, a multi-byte sequence, so a sequence is
// decoded from consecutive escapes alone, which is also why an escaped
// sequence interrupted by a raw non-ASCII byte is not rejoined (%C3é%A9 gives
// U+FFFD é U+FFFD).
func Decode(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	var (
		b   strings.Builder
		buf [codecBuffer]byte // output not yet written to b
		n   int               // bytes in buf
	)
	// Decoding never lengthens the text: an escape (3 bytes) gives at most
	// one byte, or one U+FFFD (3 bytes) for one or more escapes.
	b.Grow(len(s))
	b.WriteString(s[:i])
	s = s[i:]
	for len(s) > 0 {
		// s starts with '%': decode the escapes that follow one another.
		for len(s) > 2 && s[0] == '%' {
			hi, lo := hexValue[s[1]], hexValue[s[2]]
			if hi|lo > 15 {
				break // not followed by two hex digits
			}
			if n > len(buf)-utf8.UTFMax {
				b.Write(buf[:n])
				n = 0
			}
			if c := hi<<4 | lo; c < utf8.RuneSelf {
				buf[n] = c
				n++
				s = s[3:]
			} else {
				var used int
				n, used = decodeSequence(&buf, n, c, s)
				s = s[used:]
			}
		}
		k := 0
		if len(s) > 0 && s[0] == '%' {
			k = 1 // a '%' that is not an escape: kept
		}
		// Then copy the bytes up to the next '%' as they are: a short run
		// through buf, a long one directly.
		if j := strings.IndexByte(s[k:], '%'); j < 0 {
			k = len(s)
		} else {
			k += j
		}
		if k > directRun || k > len(buf)-n {
			b.Write(buf[:n])
			n = 0
			b.WriteString(s[:k])
		} else {
			n += copy(buf[n:], s[:k])
		}
		s = s[k:]
	}
	b.Write(buf[:n])
	return b.String()
}

// codecBuffer is the size of the output buffers of Encode and Decode, and
// directRun the length above which Decode writes a run of bytes other than
// escapes to the result directly instead of through the buffer: writing many
// short pieces to a strings.Builder costs more than copying them twice.
const (
	codecBuffer = 512
	directRun   = 64
)

// decodeSequence decodes the escaped multi-byte sequence that s starts with,
// whose first byte c (≥ 0x80) is the value of the escape s[:3]: the
// complete, valid sequence of escapes if there is one, otherwise its maximal
// invalid subpart (the lead byte and the continuation bytes that are valid
// so far), which becomes one U+FFFD. It writes to buf[n:], which must have
// room for utf8.UTFMax bytes, and returns the new n and the number of bytes
// of s consumed.
func decodeSequence(buf *[codecBuffer]byte, n int, c byte, s string) (int, int) {
	l := leads[c]
	if l.need == 0 { // c never starts a sequence
		return n + copy(buf[n:], replacement), 3
	}
	buf[n] = c
	lo, hi := l.lo, l.hi
	k := 1 // bytes of the sequence so far
	for ; k <= int(l.need); k++ {
		x, ok := escapedByte(s, 3*k)
		if !ok || x < lo || x > hi {
			return n + copy(buf[n:], replacement), 3 * k
		}
		buf[n+k] = x
		lo, hi = 0x80, 0xBF
	}
	return n + k, 3 * k
}

// lead describes the UTF-8 sequences that start with a byte ≥ 0x80: the
// number of continuation bytes that follow (0: the byte never starts a
// sequence), and the range of the first of them; the others are 80..BF.
type lead struct{ need, lo, hi byte }

var leads = func() (t [256]lead) {
	for c := 0x80; c < 256; c++ {
		need, lo, hi := sequence(byte(c))
		t[c] = lead{byte(need), lo, hi}
	}
	return t
}()

// sequence gives the lead entry of byte c ≥ 0x80, from Unicode Table 3-7,
// "Well-Formed UTF-8 Byte Sequences". need is 0 for the bytes that never
// start a sequence (80..C1, F5..FF).
func sequence(c byte) (need int, lo, hi byte) {
	lo, hi = 0x80, 0xBF
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	}
	return need, lo, hi
}
