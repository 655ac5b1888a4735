package attr_test

import (
	"math"
	"testing"

	"github.com/nemolens/lens-go/attr"
)

var negZero = math.Copysign(0, -1)

func TestValueKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    attr.Value
		kind attr.Kind
		s    string
		b    bool
		i    int64
		f    float64
	}{
		{name: "zero", v: attr.Value{}, kind: attr.KindNull},
		{name: "null", v: attr.Null(), kind: attr.KindNull},
		{name: "string", v: attr.String("x"), kind: attr.KindString, s: "x"},
		{name: "empty string", v: attr.String(""), kind: attr.KindString},
		{name: "invalid utf8 string", v: attr.String("\xff"), kind: attr.KindString, s: "\xff"},
		{name: "true", v: attr.Bool(true), kind: attr.KindBool, b: true},
		{name: "false", v: attr.Bool(false), kind: attr.KindBool},
		{name: "int64", v: attr.Int64(-42), kind: attr.KindInt64, i: -42},
		{name: "int64 min", v: attr.Int64(math.MinInt64), kind: attr.KindInt64, i: math.MinInt64},
		{name: "int", v: attr.Int(7), kind: attr.KindInt64, i: 7},
		{name: "float", v: attr.Float64(0.5), kind: attr.KindFloat64, f: 0.5},
		{name: "float -0", v: attr.Float64(negZero), kind: attr.KindFloat64, f: negZero},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.v
			if v.Kind() != tt.kind {
				t.Errorf("Kind() = %v, want %v", v.Kind(), tt.kind)
			}
			if v.IsNull() != (tt.kind == attr.KindNull) {
				t.Errorf("IsNull() = %v", v.IsNull())
			}
			// Accessors return the zero value for any other kind.
			if got := v.AsString(); got != tt.s {
				t.Errorf("AsString() = %q, want %q", got, tt.s)
			}
			if got := v.AsBool(); got != tt.b {
				t.Errorf("AsBool() = %v, want %v", got, tt.b)
			}
			if got := v.AsInt64(); got != tt.i {
				t.Errorf("AsInt64() = %d, want %d", got, tt.i)
			}
			if got := v.AsFloat64(); math.Float64bits(got) != math.Float64bits(tt.f) {
				t.Errorf("AsFloat64() = %v, want %v", got, tt.f)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	t.Parallel()
	for k, want := range map[attr.Kind]string{
		attr.KindNull: "null", attr.KindString: "string", attr.KindBool: "bool",
		attr.KindInt64: "int64", attr.KindFloat64: "float64", attr.Kind(9): "Kind(9)",
	} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

func TestValueEqual(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	tenth, fifth := 0.1, 0.2 // variables: constant arithmetic would be exact
	tests := []struct {
		a, b attr.Value
		want bool
	}{
		{attr.Null(), attr.Value{}, true},
		{attr.Null(), attr.String(""), false},
		{attr.String(""), attr.String(""), true},
		{attr.String("1"), attr.Int64(1), false},
		{attr.Int64(1), attr.Float64(1), false},
		{attr.Int64(1), attr.Bool(true), false},
		{attr.Int64(0), attr.Bool(false), false},
		{attr.Int64(0), attr.Null(), false},
		{attr.Bool(false), attr.Null(), false},
		{attr.Float64(0), attr.Null(), false},
		{attr.Bool(true), attr.Bool(true), true},
		{attr.Int(5), attr.Int64(5), true},
		{attr.Float64(nan), attr.Float64(nan), true},    // bits compare: NaN equals NaN
		{attr.Float64(0), attr.Float64(negZero), false}, // and -0.0 differs from 0.0
		{attr.Float64(negZero), attr.Float64(negZero), true},
		{attr.Float64(tenth + fifth), attr.Float64(0.3), false},
		{attr.Float64(math.Inf(1)), attr.Float64(math.Inf(-1)), false},
	}
	for _, tt := range tests {
		if got := tt.a.Equal(tt.b); got != tt.want {
			t.Errorf("%#v.Equal(%#v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if tt.b.Equal(tt.a) != tt.a.Equal(tt.b) {
			t.Errorf("Equal is not symmetric for %#v, %#v", tt.a, tt.b)
		}
	}
}

func TestValueText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    attr.Value
		text string
		ok   bool
	}{
		{attr.Null(), "", false},
		{attr.String(""), "", true},
		{attr.String("a b,c"), "a b,c", true},
		{attr.Bool(true), "True", true},
		{attr.Bool(false), "False", true},
		{attr.Int64(0), "0", true},
		{attr.Int64(-5), "-5", true},
		{attr.Int64(math.MaxInt64), "9223372036854775807", true},
		{attr.Int64(math.MinInt64), "-9223372036854775808", true},
		{attr.Float64(1), "1.0", true},
		{attr.Float64(1e16), "1e+16", true},
		{attr.Float64(math.NaN()), "nan", true},
	}
	for _, tt := range tests {
		text, ok := tt.v.Text()
		if text != tt.text || ok != tt.ok {
			t.Errorf("%#v.Text() = %q, %v; want %q, %v", tt.v, text, ok, tt.text, tt.ok)
		}
		wantString := tt.text
		if !tt.ok {
			wantString = "null"
		}
		if got := tt.v.String(); got != wantString {
			t.Errorf("%#v.String() = %q, want %q", tt.v, got, wantString)
		}
	}
}

// formatFloatTests are Python repr(float) results (checked with CPython
// 3.11). They also seed FuzzFormatFloat.
var formatFloatTests = []struct {
	f    float64
	want string
}{
	{1.0, "1.0"},
	{0.1, "0.1"},
	{1e16, "1e+16"},
	{1e-5, "1e-05"},
	{1e15, "1000000000000000.0"},
	{123456789.123, "123456789.123"},
	{1e-4, "0.0001"},
	{9.9999e-05, "9.9999e-05"}, // just below 1e-4: scientific
	{0.00012345, "0.00012345"},
	{1.5e300, "1.5e+300"},
	{5e-324, "5e-324"},
	{2.2250738585072014e-308, "2.2250738585072014e-308"},
	{1.7976931348623157e308, "1.7976931348623157e+308"},
	{0.5, "0.5"},
	{-2.5, "-2.5"},
	{100.0, "100.0"},
	{1e6, "1000000.0"},
	{0.001, "0.001"},
	{1e22, "1e+22"},
	{12345678901234567.0, "1.2345678901234568e+16"},
	{9999999999999998.0, "9999999999999998.0"}, // largest exponent kept in fixed notation
	{1e15 + 0.3, "1000000000000000.2"},
	{9007199254740992.0, "9007199254740992.0"},
	{-1e-7, "-1e-07"},
	{1.0 / 3, "0.3333333333333333"},
	{1.23e-18, "1.23e-18"},
	{math.NaN(), "nan"},
	{math.Inf(1), "inf"},
	{math.Inf(-1), "-inf"},
	{negZero, "-0.0"},
	{0, "0.0"},
}

func TestFormatFloat(t *testing.T) {
	t.Parallel()
	for _, tt := range formatFloatTests {
		if got := attr.FormatFloat(tt.f); got != tt.want {
			t.Errorf("FormatFloat(%v) = %q, want %q", tt.f, got, tt.want)
		}
		if got, _ := attr.Float64(tt.f).Text(); got != tt.want {
			t.Errorf("Float64(%v).Text() = %q, want %q", tt.f, got, tt.want)
		}
	}
}
