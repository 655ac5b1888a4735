package detect

import (
	"math"
	"unicode"
	"unicode/utf8"

	"github.com/nemolens/lens-go/carrier"
)

// pyInt parses s as Python's int(s) does (the lenient rule that detect_gpu
// uses for the local rank and the CUDA_VISIBLE_DEVICES item, SPEC §4 last
// paragraph): surrounding whitespace is ignored, an optional sign, then
// decimal digits of any script (Unicode category Nd) with single
// underscores allowed between digits. Values outside int64 fail (Python's
// int is unbounded; these values are device indices).
func pyInt(s string) (int64, bool) {
	s = carrier.TrimSpace(s)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	var n uint64
	prevDigit := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == '_' {
			if !prevDigit || i >= len(s) {
				return 0, false
			}
			prevDigit = false
			continue
		}
		d, ok := digitValue(r)
		if !ok {
			return 0, false
		}
		if n > (math.MaxUint64-uint64(d))/10 {
			return 0, false
		}
		n = n*10 + uint64(d)
		prevDigit = true
	}
	if !prevDigit {
		return 0, false
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true // n ≤ 2^63: int64(2^63) wraps to MinInt64, whose negation is itself
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
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
