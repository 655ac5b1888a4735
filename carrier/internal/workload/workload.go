// Package workload generates the inputs of the carrier scale benchmarks
// (carrier/bench_test.go) and of the linearity driver
// (carrier/internal/lineardriver): carrier texts and attribute maps with a
// given number of entries, value size and value shape.
//
// The generators do not use the carrier package, so a bug in its encoder
// cannot change the inputs it is measured on. Everything is deterministic.
package workload

import (
	"strconv"
	"strings"

	"github.com/nemolens/lens-go/attr"
)

// Shape is the kind of value text a generator produces.
type Shape string

// The value shapes. Sizes are those of the decoded value (what Parse returns,
// what Format is given); the carrier text of an escaped value is longer.
const (
	// Plain values hold only unreserved characters (A-Z a-z 0-9 _ . - ~):
	// nothing to encode, nothing to decode.
	Plain Shape = "plain"
	// Escaped values repeat an 18-byte pattern in which 3 bytes need
	// escaping: "run.01-é/seed_784" ('é' is two bytes), carried as
	// "run.01-%C3%A9%2Fseed_784".
	Escaped Shape = "escaped"
	// BadEscape is Escaped with the %2F of every pattern replaced by the
	// invalid escape %zz, which decoding keeps as it is. The OpenTelemetry
	// Go SDK's parser gives up on such a value at its first invalid escape
	// and keeps it raw.
	BadEscape Shape = "badescape"
	// BadTail is Escaped followed by a lone '%' (a value such as "50%"): the
	// only invalid escape is at the very end.
	BadTail Shape = "badtail"
	// RawBytes is Escaped with a raw 0xFF byte (not UTF-8, possible in a Go
	// environment) after every '-'; decoding copies it verbatim.
	RawBytes Shape = "rawbytes"
)

// Shapes lists every shape, in a fixed order.
var Shapes = []Shape{Plain, Escaped, BadEscape, BadTail, RawBytes}

const (
	plainPattern   = "run.01-ea_seed_784"
	escapedPattern = "run.01-é/seed_784"
)

// Value returns a decoded value of exactly size bytes (at least 1) of the
// given shape: Plain gives unreserved characters only, every other shape the
// Escaped pattern (3 bytes of 18 need escaping). The value never ends inside
// a multi-byte character.
func Value(size int, shape Shape) string {
	size = max(size, 1)
	pattern := escapedPattern
	if shape == Plain {
		pattern = plainPattern
	}
	s := strings.Repeat(pattern, size/len(pattern)+1)[:size]
	if s[len(s)-1] == "é"[0] { // cut between the two bytes of 'é'
		s = s[:len(s)-1] + "e"
	}
	return s
}

// Encode percent-encodes every byte of s except A-Z a-z 0-9 _ . - ~ with
// uppercase hex digits (Python's quote(s, safe="")). It is an independent,
// deliberately simple copy of the rule the carrier package implements.
func Encode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// Encoded returns the carrier text of a value of the given size and shape:
// Encode(Value(size, shape)), then the shape's alteration.
func Encoded(size int, shape Shape) string {
	e := Encode(Value(size, shape))
	switch shape {
	case BadEscape:
		e = strings.ReplaceAll(e, "%2F", "%zz")
	case BadTail:
		e += "%"
	case RawBytes:
		e = strings.ReplaceAll(e, "-", "-\xff")
	}
	return e
}

// Key returns the i-th generated key, "nv.dl.key.NNNNNN".
func Key(i int) string {
	s := strconv.Itoa(i)
	if len(s) < 6 {
		s = strings.Repeat("0", 6-len(s)) + s
	}
	return "nv.dl.key." + s
}

// Text returns a carrier of n entries Key(i)=Encoded(size, shape).
func Text(n, size int, shape Shape) string {
	v := Encoded(size, shape)
	var b strings.Builder
	b.Grow(n * (len(v) + 18))
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(Key(i))
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String()
}

// Map returns a map of n string entries Key(i): Value(size, shape).
func Map(n, size int, shape Shape) *attr.Map {
	v := attr.String(Value(size, shape))
	m := attr.WithCapacity(n)
	for i := range n {
		m.Set(Key(i), v)
	}
	return m
}

// TrimmedMap returns a map of n entries in which every fourth key is padded
// with spaces and trims to the key of an earlier entry, so that Format must
// merge names: " Key(i-1) " for i%4 == 3, Key(i) otherwise. Values as in Map.
func TrimmedMap(n, size int, shape Shape) *attr.Map {
	v := attr.String(Value(size, shape))
	m := attr.WithCapacity(n)
	for i := range n {
		if i%4 == 3 {
			m.Set(" "+Key(i-1)+"\t", v)
		} else {
			m.Set(Key(i), v)
		}
	}
	return m
}

// DupText returns a carrier of n segments in which every key occurs twice:
// the keys of the first half in order, then again in reverse order, and one
// malformed segment (no '=') in every eight.
func DupText(n, size int, shape Shape) string {
	v := Encoded(size, shape)
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if i%8 == 7 {
			b.WriteString("malformed segment")
			continue
		}
		k := i
		if half := n / 2; i >= half {
			k = n - 1 - i
		}
		b.WriteString(Key(k))
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String()
}

// Keys returns Key(from) … Key(from+n-1).
func Keys(from, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = Key(from + i)
	}
	return keys
}
