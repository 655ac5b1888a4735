package carrier_test

import (
	"strings"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/pytext"
)

// appendCases: the inherited segments that Parse reads are kept byte for
// byte, the others (blank, without '=', with a blank key) dropped, as the
// reference's set-slurm-resource-attrs drops them, and only the keys the
// text does not hold are appended (docs/compatibility.md#lens-env); the
// rows seed FuzzAppend. On edd0320 the malformed segments were kept.
var appendCases = []struct {
	text     string
	defaults *attr.Map
	want     string
	dropped  int
}{
	{"", attr.NewMap(attr.Entry{Key: "a", Value: attr.Int(1)}), "a=1", 0},
	{"a=%41", attr.NewMap(attr.Entry{Key: "b", Value: attr.String("x y")}), "a=%41,b=x%20y", 0},
	{"a=1", attr.NewMap(attr.Entry{Key: "a", Value: attr.Int(2)}), "a=1", 0},
	{"a=", attr.NewMap(attr.Entry{Key: "a", Value: attr.Int(2)}), "a=", 0},
	{" a = 1 ", attr.NewMap(attr.Entry{Key: "a", Value: attr.Int(2)}), " a = 1 ", 0},
	{"odd=%2Fpre%2Dencoded, malformed ", attr.NewMap(attr.Entry{Key: "slurm.job.id", Value: attr.String("12345")}), "odd=%2Fpre%2Dencoded,slurm.job.id=12345", 0},
	{"a=1,a=2,", attr.NewMap(attr.Entry{Key: "b", Value: attr.Int(3)}, attr.Entry{Key: "a", Value: attr.Int(9)}), "a=1,a=2,b=3", 0},
	{"a,=1, ,,b= x ,", attr.NewMap(attr.Entry{Key: "c", Value: attr.Int(3)}), "b= x ,c=3", 0},
	{"a,=1, ,,", attr.NewMap(attr.Entry{Key: "c", Value: attr.Int(3)}), "c=3", 0},
	{" = 1,\t=2,x", nil, "", 0},
	{"a=1,x\ny", attr.NewMap(attr.Entry{Key: "slurm.job.id", Value: attr.String("7")}), "a=1,slurm.job.id=7", 0},
	{"a=1\n2,b", attr.NewMap(attr.Entry{Key: "c", Value: attr.Int(3)}), "a=1\n2,c=3", 0},
	{"raw=\xc3", attr.NewMap(attr.Entry{Key: "k", Value: attr.String("v")}), "raw=\xc3,k=v", 0},
	{"a=1", nil, "a=1", 0},
	{"a=1", attr.NewMap(attr.Entry{Key: " a ", Value: attr.Int(2)}), "a=1", 0},
	{"a=1", attr.NewMap(attr.Entry{Key: "bad,key", Value: attr.Int(1)}), "a=1", 1},
}

func TestAppend(t *testing.T) {
	t.Parallel()
	for _, tc := range appendCases {
		got, dropped := carrier.Append(tc.text, tc.defaults)
		if got != tc.want || len(dropped) != tc.dropped {
			t.Errorf("Append(%q, %v) = %q, %d dropped; want %q, %d", tc.text, tc.defaults, got, len(dropped), tc.want, tc.dropped)
		}
	}
}

// FuzzAppend: Append keeps the inherited segments that Parse reads as its
// prefix, and its parse
// holds every key of the text with the text's value and every carriable
// default the text does not hold.
func FuzzAppend(f *testing.F) {
	for _, tc := range appendCases {
		k, v := "k", "v"
		if tc.defaults.Len() > 0 {
			e := tc.defaults.Entries()[0]
			k, v = e.Key, e.Value.AsString()
		}
		f.Add(tc.text, k, v)
	}
	f.Fuzz(func(t *testing.T, text, key, value string) {
		got, dropped := carrier.Append(text, attr.NewMap(attr.Entry{Key: key, Value: attr.String(value)}))
		// The prefix: the segments Parse reads, written again here.
		var kept []string
		for _, seg := range strings.Split(text, ",") {
			if k, _, ok := strings.Cut(seg, "="); ok && pytext.TrimSpace(k) != "" {
				kept = append(kept, seg)
			}
		}
		if prefix := strings.Join(kept, ","); !strings.HasPrefix(got, prefix) || (len(got) > len(prefix) && len(kept) > 0 && got[len(prefix)] != ',') {
			t.Fatalf("Append(%q) = %q: the inherited valid segments %q are not its prefix", text, got, prefix)
		}
		held, out := carrier.Parse(text), carrier.Parse(got)
		for k, v := range held.All() {
			if w, _ := out.Get(k); !w.Equal(v) {
				t.Errorf("Append(%q) = %q: %q is %v, want the inherited %v", text, got, k, w, v)
			}
		}
		if len(dropped) == 0 && out.Len() < held.Len() {
			t.Errorf("Append(%q, %q) = %q: entries lost", text, key, got)
		}
		if trimmed := pytext.TrimSpace(key); len(dropped) == 0 && trimmed == key && !out.Has(key) {
			t.Errorf("Append(%q, %q) = %q: the default is missing", text, key, got)
		}
	})
}
