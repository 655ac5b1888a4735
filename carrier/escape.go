package carrier

import (
	"strings"
	"unicode/utf8"
)

// The percent-encoding rules below follow Python's urllib.parse (the
// reference formats with quote(value, safe="") and parses with unquote(value),
// which is unquote(value, encoding="utf-8", errors="replace")). The unreserved
// set is RFC 3986 §2.3's; see also https://docs.python.org/3/library/urllib.parse.html#urllib.parse.quote.

const upperhex = "0123456789ABCDEF"

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

func encodedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if shouldEscape(s[i]) {
			n += 2
		}
	}
	return n
}

func appendEncoded(b *strings.Builder, s string) {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !shouldEscape(c) {
			continue
		}
		b.WriteString(s[start:i])
		b.WriteByte('%')
		b.WriteByte(upperhex[c>>4])
		b.WriteByte(upperhex[c&15])
		start = i + 1
	}
	b.WriteString(s[start:])
}

// Encode percent-encodes every byte of s except A-Z a-z 0-9 _ . - ~, with
// uppercase hex digits: Python's quote(s, safe="") on the UTF-8 bytes of s.
// A space becomes %20 and '+' becomes %2B.
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

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Decode percent-decodes s exactly as Python's urllib.parse.unquote does
// (UTF-8, errors="replace"; SPEC §2.2):
//
//   - s is split into maximal runs of ASCII bytes and of non-ASCII bytes; a
//     non-ASCII run is copied verbatim, even when it is not valid UTF-8;
//   - in each ASCII run on its own, every %XY with two hex digits becomes the
//     byte 0xXY, and every other byte (a lone '%', '+') is kept;
//   - the bytes of the run are then read as UTF-8, and each maximal invalid
//     subpart (Unicode §3.9, "U+FFFD substitution of maximal subparts", the
//     practice Python follows) becomes one U+FFFD.
//
// '+' never becomes a space. net/url's PathUnescape and QueryUnescape are not
// equivalent: they reject a malformed '%' and decode nothing.
func Decode(s string) string {
	pct := strings.IndexByte(s, '%')
	if pct < 0 {
		return s
	}
	var (
		b   strings.Builder
		buf [64]byte
	)
	b.Grow(len(s))
	i := 0
	for i < len(s) {
		if s[i] >= utf8.RuneSelf { // a non-ASCII run: verbatim
			j := i + 1
			for j < len(s) && s[j] >= utf8.RuneSelf {
				j++
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		j := i + 1
		for j < len(s) && s[j] < utf8.RuneSelf {
			j++
		}
		run := s[i:j]
		i = j
		if strings.IndexByte(run, '%') < 0 {
			b.WriteString(run)
			continue
		}
		raw := buf[:0]
		for k := 0; k < len(run); k++ {
			c := run[k]
			if c == '%' && k+2 < len(run) {
				hi, ok1 := unhex(run[k+1])
				lo, ok2 := unhex(run[k+2])
				if ok1 && ok2 {
					raw = append(raw, hi<<4|lo)
					k += 2
					continue
				}
			}
			raw = append(raw, c)
		}
		writeUTF8Replace(&b, raw)
	}
	return b.String()
}

// writeUTF8Replace writes p as UTF-8, replacing each maximal invalid subpart
// with one U+FFFD (the Unicode Standard §3.9 / W3C Encoding practice that
// Python's "replace" error handler follows). utf8.DecodeRune would report a
// truncated sequence such as E2 82 as two errors instead of one.
func writeUTF8Replace(b *strings.Builder, p []byte) {
	for len(p) > 0 {
		c := p[0]
		if c < utf8.RuneSelf {
			b.WriteByte(c)
			p = p[1:]
			continue
		}
		n := validPrefix(p)
		if n > 0 {
			b.Write(p[:n])
			p = p[n:]
			continue
		}
		b.WriteRune(utf8.RuneError)
		p = p[maximalSubpart(p):]
	}
}

// validPrefix returns the length of the complete, valid multi-byte sequence
// at the start of p, or 0.
func validPrefix(p []byte) int {
	r, size := utf8.DecodeRune(p)
	if r == utf8.RuneError && size <= 1 {
		return 0
	}
	return size
}

// maximalSubpart returns the length (≥ 1) of the maximal invalid subpart at
// the start of p, which starts with an invalid or incomplete sequence: the
// longest prefix that is the start of some valid sequence, or one byte.
func maximalSubpart(p []byte) int {
	c := p[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF) // range of the second byte
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
	default: // 0x80–0xC1, 0xF5–0xFF never start a sequence
		return 1
	}
	n := 1
	for k := 1; k <= need && k < len(p); k++ {
		if k == 1 {
			if p[k] < lo || p[k] > hi {
				break
			}
		} else if p[k] < 0x80 || p[k] > 0xBF {
			break
		}
		n++
	}
	return n
}
