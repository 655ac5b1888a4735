package pytext

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// IsSpace reports whether r is whitespace for Python's str.strip(): Go's
// unicode.IsSpace plus the separators U+001C–U+001F (docs/compatibility.md#whitespace). The set is
// U+0009–U+000D, U+001C–U+0020, U+0085, U+00A0, U+1680, U+2000–U+200A,
// U+2028, U+2029, U+202F, U+205F and U+3000.
func IsSpace(r rune) bool {
	switch {
	case r <= 0x20:
		return r == ' ' || (r >= '\t' && r <= '\r') || (r >= 0x1c && r <= 0x1f)
	case r < 0x85:
		return false
	case r == 0x85, r == 0xA0, r == 0x1680, r >= 0x2000 && r <= 0x200A,
		r == 0x2028, r == 0x2029, r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

// TrimSpace removes leading and trailing [IsSpace] characters, as Python's
// str.strip() does. strings.TrimSpace alone misses U+001C–U+001F. Bytes that
// are not valid UTF-8 are never trimmed.
func TrimSpace(s string) string {
	if len(s) > 0 && nonSpaceASCII(s[0]) && nonSpaceASCII(s[len(s)-1]) {
		return s // the common case, without decoding
	}
	start := 0
	for start < len(s) {
		c := s[start]
		if c < utf8.RuneSelf {
			if !IsSpace(rune(c)) {
				break
			}
			start++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[start:])
		if !IsSpace(r) {
			break
		}
		start += size
	}
	end := len(s)
	for end > start {
		c := s[end-1]
		if c < utf8.RuneSelf {
			if !IsSpace(rune(c)) {
				break
			}
			end--
			continue
		}
		r, size := utf8.DecodeLastRuneInString(s[start:end])
		if !IsSpace(r) {
			break
		}
		end -= size
	}
	return s[start:end]
}

// nonSpaceASCII reports whether c is an ASCII byte above ' ', which is never
// a space.
func nonSpaceASCII(c byte) bool { return '!' <= c && c < utf8.RuneSelf }

// ErrNotInteger is returned (wrapped) by [ParseInt] for text that is not a
// complete signed ASCII base-10 integer, or that does not fit in int64.
var ErrNotInteger = errors.New("expected a base-10 integer")

// ParseInt applies the strict integer rule (docs/compatibility.md#integer-rule): after [TrimSpace], s
// must fully match [+-]?[0-9]+ with ASCII digits only. Underscores, non-ASCII
// digits, hex or binary prefixes, fractions and exponents are rejected.
//
// Divergence from the Python reference (documented, docs/compatibility.md#integer-rule): values outside
// [-2^63, 2^63-1] are rejected, because OpenTelemetry integers are int64.
func ParseInt(s string) (int64, error) {
	t := TrimSpace(s)
	digits := t
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	if digits == "" {
		return 0, fmt.Errorf("%w: %q", ErrNotInteger, s)
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, fmt.Errorf("%w: %q", ErrNotInteger, s)
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is outside the int64 range", ErrNotInteger, s)
	}
	return n, nil
}
