package carrier_test

import (
	"slices"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
)

func TestMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a=1,b=2", nil},
		{"a=1,,b=2,", nil},     // blank segments are not reported
		{" , \u3000 ,\t", nil}, // neither are whitespace-only ones
		{"a=1,novalue,=v, = x ,b=2", []string{"novalue", "=v", " = x "}},
		{"\u3000=v", []string{"\u3000=v"}},
		{"a", []string{"a"}},
		{"a=", nil},
	}
	for _, tt := range tests {
		if got := carrier.Malformed(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Malformed(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDuplicateKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a=1,b=2", nil},
		{"a=1,b=2,a=3,b=4", []string{"a", "b"}},
		{"b=1,a=2,a=3,b=4", []string{"a", "b"}}, // order of first repetition
		{"a=1,a=2,a=3", []string{"a"}},
		{" a =1,a=2", []string{"a"}}, // keys trimmed
		{"a,a=1", nil},               // malformed segments ignored
		{"=1,=2", nil},
		{"k%41=1,kA=2", nil}, // keys not decoded
		{"k%41=1,k%41=2", []string{"k%41"}},
	}
	for _, tt := range tests {
		if got := carrier.DuplicateKeys(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("DuplicateKeys(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	attrs := attr.NewMap(
		attr.Entry{Key: "null", Value: attr.Null()},
		attr.Entry{Key: "empty", Value: attr.String("")},
		attr.Entry{Key: "zero", Value: attr.Int(0)},
		attr.Entry{Key: "false", Value: attr.Bool(false)},
		attr.Entry{Key: "blank", Value: attr.String(" ")},
	)
	r := carrier.Check(attrs, []string{"missing", "null", "empty", "zero", "false", "blank"}, []string{"absent", "null"}, "a=1,a=2")
	want := carrier.CheckResult{
		Missing:    []string{"missing"},
		Empty:      []string{"null", "empty"}, // 0, false and " " are values
		Forbidden:  []string{"null"},          // a present null is present
		Duplicates: []string{"a"},
	}
	if !slices.Equal(r.Missing, want.Missing) || !slices.Equal(r.Empty, want.Empty) ||
		!slices.Equal(r.Forbidden, want.Forbidden) || !slices.Equal(r.Duplicates, want.Duplicates) || r.OK() {
		t.Errorf("Check = %+v, want %+v (not ok)", r, want)
	}
	if r := carrier.Check(nil, nil, []string{"x"}, ""); !r.OK() {
		t.Errorf("Check on nothing = %+v, want ok", r)
	}
	if r := carrier.Check(nil, []string{"x"}, nil, ""); r.OK() || !slices.Equal(r.Missing, []string{"x"}) {
		t.Errorf("Check with a nil map = %+v", r)
	}
}
