package attr

import (
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a [Value].
type Kind uint8

// The kinds a [Value] can hold. The zero Kind is [KindNull], so the zero
// Value is the explicit null.
const (
	// KindNull is the explicit null (Python None). It is distinct from the
	// empty string: in composition it is a real value that hides a key, and
	// formatting omits it silently.
	KindNull Kind = iota
	// KindString is a string value; it may hold bytes that are not valid UTF-8.
	KindString
	// KindBool is a boolean value.
	KindBool
	// KindInt64 is a signed 64-bit integer value.
	KindInt64
	// KindFloat64 is a 64-bit floating-point value.
	KindFloat64
)

// String returns the kind's name: "null", "string", "bool", "int64" or "float64".
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindString:
		return "string"
	case KindBool:
		return "bool"
	case KindInt64:
		return "int64"
	case KindFloat64:
		return "float64"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is a typed attribute value: null, string, bool, int64 or float64.
// Values are small, comparable with [Value.Equal], and immutable.
// The zero Value is null.
type Value struct {
	kind Kind
	s    string
	n    uint64 // bool (0/1), int64 bits or float64 bits
}

// Null returns the explicit null value. It equals the zero Value.
func Null() Value { return Value{} }

// String returns a string value.
func String(s string) Value { return Value{kind: KindString, s: s} }

// Bool returns a boolean value.
func Bool(b bool) Value {
	v := Value{kind: KindBool}
	if b {
		v.n = 1
	}
	return v
}

// Int64 returns an integer value.
func Int64(i int64) Value { return Value{kind: KindInt64, n: uint64(i)} }

// Int returns an integer value from an int.
func Int(i int) Value { return Int64(int64(i)) }

// Float64 returns a floating-point value.
func Float64(f float64) Value { return Value{kind: KindFloat64, n: math.Float64bits(f)} }

// Kind reports the value's kind.
func (v Value) Kind() Kind { return v.kind }

// IsNull reports whether v is the explicit null.
func (v Value) IsNull() bool { return v.kind == KindNull }

// AsString returns the string of a [KindString] value and "" otherwise.
func (v Value) AsString() string {
	if v.kind != KindString {
		return ""
	}
	return v.s
}

// AsBool returns the boolean of a [KindBool] value and false otherwise.
func (v Value) AsBool() bool { return v.kind == KindBool && v.n == 1 }

// AsInt64 returns the integer of a [KindInt64] value and 0 otherwise.
func (v Value) AsInt64() int64 {
	if v.kind != KindInt64 {
		return 0
	}
	return int64(v.n)
}

// AsFloat64 returns the number of a [KindFloat64] value and 0 otherwise.
func (v Value) AsFloat64() float64 {
	if v.kind != KindFloat64 {
		return 0
	}
	return math.Float64frombits(v.n)
}

// Equal reports whether v and w have the same kind and the same value.
// Floats compare by bits: NaN equals NaN and -0.0 differs from 0.0, which is
// what carrier round trips need.
func (v Value) Equal(w Value) bool {
	return v.kind == w.kind && v.s == w.s && v.n == w.n
}

// Text returns the value's carrier stringification (docs/compatibility.md#value-stringification), the text that
// is percent-encoded into OTEL_RESOURCE_ATTRIBUTES: strings as they are,
// booleans as "True"/"False" (Python style), integers in base 10, floats in
// Python repr form ("1.0", "1e+16", "nan", "-0.0"). ok is false for null,
// which has no text.
func (v Value) Text() (text string, ok bool) {
	switch v.kind {
	case KindString:
		return v.s, true
	case KindBool:
		if v.n == 1 {
			return "True", true
		}
		return "False", true
	case KindInt64:
		return strconv.FormatInt(int64(v.n), 10), true
	case KindFloat64:
		return FormatFloat(math.Float64frombits(v.n)), true
	}
	return "", false
}

// String implements fmt.Stringer. It returns [Value.Text], or "null" for the
// null value.
func (v Value) String() string {
	if t, ok := v.Text(); ok {
		return t
	}
	return "null"
}

// FormatFloat renders f as Python's repr(float) does: the shortest digits that
// round-trip, in fixed notation when the decimal exponent of those digits is
// in [-4, 15] (always with a fractional part, "1.0"), otherwise in scientific
// notation with a signed exponent of at least two digits ("1e+16", "1e-05").
// NaN, ±Inf and negative zero render as "nan", "inf", "-inf" and "-0.0".
func FormatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // e.g. "-1.2345e+08"
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	if exp < -4 || exp > 15 {
		return e // Go's layout (1e+16, 1e-05, 1.5e+300) matches Python's
	}
	neg := strings.HasPrefix(mant, "-")
	if neg {
		mant = mant[1:]
	}
	digits := strings.Replace(mant, ".", "", 1)
	var b strings.Builder
	b.Grow(len(digits) + 8)
	if neg {
		b.WriteByte('-')
	}
	if exp < 0 {
		b.WriteString("0.")
		for i := 0; i < -exp-1; i++ {
			b.WriteByte('0')
		}
		b.WriteString(digits)
		return b.String()
	}
	intLen := exp + 1
	if len(digits) <= intLen {
		b.WriteString(digits)
		for i := len(digits); i < intLen; i++ {
			b.WriteByte('0')
		}
		b.WriteString(".0")
		return b.String()
	}
	b.WriteString(digits[:intLen])
	b.WriteByte('.')
	b.WriteString(digits[intLen:])
	return b.String()
}
