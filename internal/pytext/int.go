package pytext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The lenient integer rule of Python's int(s), which the reference uses
// where the strict integer rule ([ParseInt]) does not apply: the local rank
// of detect_gpu, and the CUDA_VISIBLE_DEVICES item it selects after
// str.strip() (docs/compatibility.md#python-int). The Slurm detector uses it
// only to say, in its notes, what the reference's local derivation would
// have read (docs/compatibility.md#divergence-slurm-local-integers).

// IsIntSpace reports whether r is whitespace for Python's int(): the ASCII
// characters space, \t, \n, \v, \f and \r, and every non-ASCII character
// for which str.isspace() is true (U+0085, U+00A0, U+1680, U+2000–U+200A,
// U+2028, U+2029, U+202F, U+205F, U+3000). It is the str.strip set
// ([IsSpace]) without the ASCII separators U+001C–U+001F: int()
// keeps those and then rejects the string, so int("5\x1f") fails although
// "5\x1f".strip() is "5".
func IsIntSpace(r rune) bool {
	if r >= 0x1c && r <= 0x1f {
		return false
	}
	return IsSpace(r)
}

// TrimIntSpace removes leading and trailing [IsIntSpace] characters, as
// int() ignores them. Bytes that are not valid UTF-8 are never trimmed.
func TrimIntSpace(s string) string {
	return strings.TrimFunc(s, IsIntSpace)
}

// IntText reports whether Python's int(s) accepts s and returns the
// decimal text of the value it reads ("10" for "1_0" and for "١٠", "-5" for
// " -0_5 ", "0" for "-0"), of any size: the surrounding [IsIntSpace]
// whitespace is ignored, then an optional sign, then decimal digits of any
// script (Unicode category Nd) with single underscores allowed between
// digits. Nothing else is accepted: no inner whitespace, no prefix, no
// fraction.
func IntText(s string) (string, bool) {
	s = TrimIntSpace(s)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return "", false
	}
	digits := make([]byte, 0, len(s)+1)
	if neg {
		digits = append(digits, '-')
	}
	start := len(digits) // the first significant digit goes here
	prevDigit := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == '_' {
			if !prevDigit || i >= len(s) {
				return "", false
			}
			prevDigit = false
			continue
		}
		d, ok := digitValue(r)
		if !ok {
			return "", false
		}
		prevDigit = true
		if d == 0 && len(digits) == start {
			continue // a leading zero
		}
		digits = append(digits, byte('0'+d))
	}
	if !prevDigit {
		return "", false
	}
	if len(digits) == start {
		return "0", true // zero has no sign
	}
	return string(digits), true
}

// Int parses s as Python's int(s) does ([IntText]) and returns the value
// when it fits in int64. Values outside int64 fail (Python's int is
// unbounded; these values are device indices).
func Int(s string) (int64, bool) {
	text, ok := IntText(s)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// digitValue returns the value of a decimal digit of any script. Unicode
// assigns Nd digits in contiguous runs of ten starting at zero, and the
// unicode.Nd table stores merged runs with stride 1, so the value is the
// offset from the start of the table range modulo 10.
func digitValue(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if r < utf8.RuneSelf || !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	return 0, false
}
