package detect

import "testing"

func TestPyInt(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"7", 7, true}, {" +007 ", 7, true}, {"-0", 0, true}, {"1_000", 1000, true}, {"1_0_0", 100, true},
		{"٣", 3, true}, {"１２", 12, true}, {"\U0001D7D8\U0001D7E1", 9, true}, {"-5", -5, true},
		{"\u00a05\u2003", 5, true}, {"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"99999999999999999999999", 0, false},
		{"", 0, false}, {" ", 0, false}, {"+", 0, false}, {"_1", 0, false}, {"1_", 0, false},
		{"1__0", 0, false}, {"0x10", 0, false}, {"3.5", 0, false}, {"--5", 0, false}, {"GPU-1", 0, false},
		{"\xff", 0, false}, {"1e3", 0, false},
	}
	for _, c := range cases {
		got, ok := pyInt(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("pyInt(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestMergeOverwrite(t *testing.T) {
	base := mapOf("a", "1", "b", "", "c", "3")
	add := mapOf("a", "x", "b", "y", "d", "", "e", "5")
	if got, want := merge(base, add, true), mapOf("a", "x", "c", "3", "b", "y", "e", "5"); !got.Equal(want) {
		t.Errorf("overwrite: got %v, want %v", got, want)
	}
	if got, want := merge(base, add, false), mapOf("a", "1", "c", "3", "b", "y", "e", "5"); !got.Equal(want) {
		t.Errorf("no overwrite: got %v, want %v", got, want)
	}
	if got := merge(nil, nil, false); got.Len() != 0 {
		t.Errorf("nil inputs: %v", got)
	}
}
