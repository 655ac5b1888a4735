package carrier_test

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/logx"
)

// parseTests: docs/compatibility.md#carrier-parse and further cases. want holds key/value pairs in
// order. The inputs also seed FuzzParse.
var parseTests = []struct {
	in   string
	want []string
}{
	{"", nil},
	{"a=1,b=2", []string{"a", "1", "b", "2"}},
	{" a = 1 , b=2 ", []string{"a", "1", "b", "2"}},
	{"a=1,,b=2,", []string{"a", "1", "b", "2"}},
	{" , a=1 ,  ", []string{"a", "1"}},
	{"novalue,a=1", []string{"a", "1"}},
	{"=v,a=1", []string{"a", "1"}},
	{" =v, \u3000=v", nil},
	{"a=", []string{"a", ""}},
	{"a=1=2", []string{"a", "1=2"}},
	{"a==", []string{"a", "="}},
	{"key%2Cpart=value%2Cpart", []string{"key%2Cpart", "value,part"}}, // keys are never decoded
	{"a=1,b=2,a=3", []string{"a", "3", "b", "2"}},
	{"a=1,b=2,a=", []string{"a", "", "b", "2"}},
	{"a=\u00a01\u00a0", []string{"a", "1"}},
	{"a=\x1f1", []string{"a", "1"}},
	{"\u3000k\u3000=\u2003v\u2003", []string{"k", "v"}},
	{"a b=v", []string{"a b", "v"}},
	{"a= %20x%20 ", []string{"a", " x "}}, // trimmed before decoding
	{"a=%2C%3D%25", []string{"a", ",=%"}},
	{"a=%zz%4", []string{"a", "%zz%4"}},
	{"a=x+y", []string{"a", "x+y"}},
	{"a=%ED%A0%80", []string{"a", rep + rep + rep}},
	{"a=%C3é%A9", []string{"a", rep + "é" + rep}},
	{"a=\xff,\xfe=b", []string{"a", "\xff", "\xfe", "b"}}, // raw bytes pass through
	{"a=%C3\xa9", []string{"a", rep + "\xa9"}},
	{"\u200bk=v", []string{"\u200bk", "v"}},
	{"a\x00=1, \x00 =2", []string{"a\x00", "1", "\x00", "2"}}, // Parse keeps NUL; Format drops it
	{"nemo.run.id=exp%2F1%2Cseed%3D7", []string{"nemo.run.id", "exp/1,seed=7"}},
	{"odd=%2Fpre%2Dencoded, malformed ", []string{"odd", "/pre-encoded"}},
}

func pairs(kv []string) *attr.Map { return attr.FromStrings(kv...) }

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range parseTests {
		want := pairs(tt.want)
		if got := carrier.Parse(tt.in); !got.Equal(want) {
			t.Errorf("Parse(%q)\n got %v\nwant %v", tt.in, got, want)
		}
	}
}

// TestParseManyKeys crosses the attribute map's index threshold.
func TestParseManyKeys(t *testing.T) {
	t.Parallel()
	var segs, want []string
	for i := range 120 {
		segs = append(segs, fmt.Sprintf("k%d=%d", i%100, i))
	}
	for i := range 100 {
		v := i
		if i < 20 {
			v = i + 100
		}
		want = append(want, fmt.Sprint("k", i), fmt.Sprint(v))
	}
	if got := carrier.Parse(strings.Join(segs, ",")); !got.Equal(pairs(want)) {
		t.Errorf("Parse of 120 segments = %v", got)
	}
}

type dropWant struct {
	key string
	err error
}

// formatTests also seed FuzzFormatRoundTrip (their keys and string values).
var formatTests = []struct {
	name    string
	in      []attr.Entry
	want    string
	dropped []dropWant
}{
	{name: "empty", in: nil, want: ""},
	{name: "null only", in: []attr.Entry{{Key: "a", Value: attr.Null()}}, want: ""},
	{name: "empty value", in: []attr.Entry{{Key: "a", Value: attr.String("")}}, want: "a="},
	{name: "types", in: []attr.Entry{
		{Key: "backend", Value: attr.String("nccl")},
		{Key: "size", Value: attr.Int(5)},
		{Key: "rate", Value: attr.Float64(0.5)},
		{Key: "active", Value: attr.Bool(true)},
		{Key: "off", Value: attr.Bool(false)},
		{Key: "neg", Value: attr.Int64(math.MinInt64)},
	}, want: "backend=nccl,size=5,rate=0.5,active=True,off=False,neg=-9223372036854775808"},
	{name: "floats", in: []attr.Entry{
		{Key: "a", Value: attr.Float64(1)},
		{Key: "b", Value: attr.Float64(0.1)},
		{Key: "c", Value: attr.Float64(1e16)},
		{Key: "d", Value: attr.Float64(1e-5)},
		{Key: "e", Value: attr.Float64(math.NaN())},
		{Key: "f", Value: attr.Float64(math.Inf(-1))},
		{Key: "g", Value: attr.Float64(math.Copysign(0, -1))},
	}, want: "a=1.0,b=0.1,c=1e%2B16,d=1e-05,e=nan,f=-inf,g=-0.0"},
	{name: "escapes", in: []attr.Entry{
		{Key: "nemo.run.id", Value: attr.String("exp/1,seed=7")},
		{Key: "sp", Value: attr.String("x y~_.-")},
		{Key: "u", Value: attr.String("é")},
		{Key: "pct", Value: attr.String("%20")},
		{Key: "plus", Value: attr.String("a+b")},
	}, want: "nemo.run.id=exp%2F1%2Cseed%3D7,sp=x%20y~_.-,u=%C3%A9,pct=%2520,plus=a%2Bb"},
	{name: "keys verbatim", in: []attr.Entry{
		{Key: " a b ", Value: attr.String("v")},
		{Key: "k%2C", Value: attr.String("v")},
		{Key: "é\tx", Value: attr.String("v")},
	}, want: "a b=v,k%2C=v,é\tx=v"},
	{name: "trimmed collision", in: []attr.Entry{
		{Key: "a", Value: attr.Int(1)},
		{Key: "b", Value: attr.Int(2)},
		{Key: " a ", Value: attr.Int(3)},
	}, want: "a=3,b=2"},
	{name: "collision with null", in: []attr.Entry{
		{Key: "a", Value: attr.Int(1)},
		{Key: " a", Value: attr.Null()}, // null is skipped; it does not hide "a"
	}, want: "a=1"},
	{name: "bad keys", in: []attr.Entry{
		{Key: "bad,key", Value: attr.String("v")},
		{Key: "bad=key", Value: attr.String("v")},
		{Key: "", Value: attr.String("v")},
		{Key: " \u3000", Value: attr.Int(1)},
		{Key: "nul", Value: attr.Null()},
		{Key: "=", Value: attr.Null()}, // null first: no report
		{Key: "good", Value: attr.Int(3)},
	}, want: "good=3", dropped: []dropWant{
		{"bad,key", carrier.ErrKeyNotCarried},
		{"bad=key", carrier.ErrKeyNotCarried},
		{"", carrier.ErrKeyNotCarried},
		{" \u3000", carrier.ErrKeyNotCarried},
	}},
	{name: "NUL in keys", in: []attr.Entry{
		{Key: "a\x00b", Value: attr.String("v")},
		{Key: " \x00 ", Value: attr.Int(1)},      // trims to "\x00"
		{Key: "\x00", Value: attr.Null()},        // null first: no report
		{Key: "nul", Value: attr.String("\x00")}, // a NUL value is encoded
		{Key: "\x00bad,", Value: attr.String("v")},
	}, want: "nul=%00", dropped: []dropWant{
		{"a\x00b", carrier.ErrKeyHasNUL},
		{" \x00 ", carrier.ErrKeyHasNUL},
		{"\x00bad,", carrier.ErrKeyNotCarried}, // the ',' is the reason
	}},
	{name: "invalid utf8", in: []attr.Entry{
		{Key: "bad", Value: attr.String("\xff")},
		{Key: "half", Value: attr.String("ok\xc3")},
		{Key: "surrogate", Value: attr.String("\xed\xa0\x80")},
		{Key: "good", Value: attr.Int(1)},
		{Key: "bad,both", Value: attr.String("\xff")}, // the key is checked first
	}, want: "good=1", dropped: []dropWant{
		{"bad", carrier.ErrInvalidUTF8},
		{"half", carrier.ErrInvalidUTF8},
		{"surrogate", carrier.ErrInvalidUTF8},
		{"bad,both", carrier.ErrKeyNotCarried},
	}},
	{name: "reference 8.21", in: []attr.Entry{
		{Key: "service.name", Value: attr.String("nv.dl.launch")},
		{Key: "slurm.job.name", Value: attr.String("train,comma")},
		{Key: "nv.dl.launch.container.image", Value: attr.String("image=name:tag")},
		{Key: "slurm.array.count", Value: attr.Int(4)},
	}, want: "service.name=nv.dl.launch,slurm.job.name=train%2Ccomma,nv.dl.launch.container.image=image%3Dname%3Atag,slurm.array.count=4"},
}

func TestFormat(t *testing.T) {
	t.Parallel()
	for _, tt := range formatTests {
		t.Run(tt.name, func(t *testing.T) {
			got, dropped := carrier.Format(attr.NewMap(tt.in...))
			if got != tt.want {
				t.Errorf("Format = %q, want %q", got, tt.want)
			}
			checkDropped(t, dropped, tt.dropped)
		})
	}
}

func checkDropped(t *testing.T, got []carrier.Dropped, want []dropWant) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("dropped %v, want %v", got, want)
	}
	for i, d := range got {
		if d.Key != want[i].key || !errors.Is(d.Err, want[i].err) {
			t.Errorf("dropped[%d] = %v, want key %q with %v", i, d, want[i].key, want[i].err)
		}
		other := carrier.ErrInvalidUTF8
		if want[i].err == carrier.ErrInvalidUTF8 {
			other = carrier.ErrKeyNotCarried
		}
		if errors.Is(d.Err, other) {
			t.Errorf("dropped[%d] also wraps %v", i, other)
		}
		if want[i].err != carrier.ErrKeyHasNUL && errors.Is(d.Err, carrier.ErrKeyHasNUL) {
			t.Errorf("dropped[%d] = %v gives NUL as the reason", i, d)
		}
		if s := d.String(); !strings.Contains(s, fmt.Sprintf("%q", d.Key)) || !strings.Contains(s, want[i].err.Error()) {
			t.Errorf("Dropped.String() = %q", s)
		}
	}
}

// TestFormatManyEntries crosses Format's stack buffer (32 parts) and the
// map's index threshold, with collisions after trimming.
func TestFormatManyEntries(t *testing.T) {
	t.Parallel()
	m := &attr.Map{}
	var want []string
	for i := range 60 {
		m.Set(fmt.Sprint("k", i), attr.Int(i))
		want = append(want, fmt.Sprintf("k%d=%d", i, i))
	}
	for i := 0; i < 60; i += 10 {
		m.Set(fmt.Sprintf(" k%d ", i), attr.String("x,y"))
		want[i] = fmt.Sprintf("k%d=x%%2Cy", i)
	}
	got, dropped := carrier.Format(m)
	if got != strings.Join(want, ",") || dropped != nil {
		t.Errorf("Format = %q, %v", got, dropped)
	}
}

// TestFormatLogs checks the warnings of dropped entries: level WARN, the
// reference's logger name, the key, and the message texts docs/compatibility.md#carrier-format quotes.
// Not parallel: it captures the default logger.
func TestFormatLogs(t *testing.T) {
	records := capture(t)
	_, dropped := carrier.Format(attr.NewMap(
		attr.Entry{Key: "bad,key", Value: attr.String("v")},
		attr.Entry{Key: "n", Value: attr.Null()},
		attr.Entry{Key: "bad", Value: attr.String("\xff")},
		attr.Entry{Key: "n\x00ul", Value: attr.Int(1)},
		attr.Entry{Key: "good", Value: attr.Int(1)},
	))
	rs := records()
	if len(rs) != 3 || len(dropped) != 3 {
		t.Fatalf("%d records, %d dropped; want 3 each", len(rs), len(dropped))
	}
	for i, want := range []struct{ key, text string }{{"bad,key", "cannot be carried"}, {"bad", "not valid UTF-8"}, {"n\x00ul", "contains NUL and cannot be carried"}} {
		r := rs[i]
		a := recordAttrs(r)
		if r.Level != slog.LevelWarn || !strings.Contains(r.Message, want.text) || a["key"] != want.key || a["logger"] != logx.Attributes {
			t.Errorf("record %d = %v %q %v; want WARN containing %q for key %q", i, r.Level, r.Message, a, want.text, want.key)
		}
	}
	if strings.Contains(rs[0].Message, "NUL") {
		t.Errorf("record 0 = %q names NUL for a key that holds ','", rs[0].Message)
	}
}

func TestFormatDoesNotModifyInput(t *testing.T) {
	t.Parallel()
	m := attr.NewMap(attr.Entry{Key: " a ", Value: attr.String("x")}, attr.Entry{Key: "b,", Value: attr.Int(1)})
	before := m.Clone()
	carrier.Format(m)
	if !m.Equal(before) {
		t.Errorf("Format modified its input: %v", m)
	}
}

func TestCompose(t *testing.T) {
	t.Parallel()
	cur := attr.FromStrings("c", "cur", "b", "cur")
	def := attr.NewMap(attr.Entry{Key: "a", Value: attr.Int(1)}, attr.Entry{Key: "b", Value: attr.Int(2)})
	ovr := attr.NewMap(attr.Entry{Key: "d", Value: attr.Null()}, attr.Entry{Key: "a", Value: attr.String("")})
	got := carrier.Compose(cur, def, ovr)
	want := attr.NewMap(
		attr.Entry{Key: "a", Value: attr.String("")},
		attr.Entry{Key: "b", Value: attr.String("cur")},
		attr.Entry{Key: "c", Value: attr.String("cur")},
		attr.Entry{Key: "d", Value: attr.Null()},
	)
	if !got.Equal(want) {
		t.Errorf("Compose = %v, want %v", got, want)
	}
	for _, in := range []*attr.Map{nil, {}} {
		got := carrier.Compose(in, nil, nil)
		if got == nil || got == in || got.Len() != 0 {
			t.Errorf("Compose(%v, nil, nil) = %v", in, got)
		}
		got.SetString("x", "y") // always a new, writable map
	}
}

func TestExtend(t *testing.T) {
	t.Parallel()
	// The child's carrier collapses duplicates and hides keys with null.
	got, dropped := carrier.Extend("a=1,bad,a=2,b=%2f",
		attr.NewMap(attr.Entry{Key: "z", Value: attr.Int(0)}),
		attr.NewMap(attr.Entry{Key: "b", Value: attr.Null()}, attr.Entry{Key: "c,d", Value: attr.Int(1)}))
	if got != "z=0,a=2" {
		t.Errorf("Extend = %q", got)
	}
	checkDropped(t, dropped, []dropWant{{"c,d", carrier.ErrKeyNotCarried}})
	// Invalid UTF-8 that a parent passed through raw is dropped on format.
	got, dropped = carrier.Extend("a=\xff,b=1", nil, nil)
	if got != "b=1" {
		t.Errorf("Extend = %q", got)
	}
	checkDropped(t, dropped, []dropWant{{"a", carrier.ErrInvalidUTF8}})
}

// TestFormatDropsNULKey: no environment variable can hold NUL, so a carrier
// with a NUL in a key could never reach a child (exec rejects the
// environment). Format drops such a key, unlike the Python reference, whose
// carrier then fails on assignment to os.environ.
func TestFormatDropsNULKey(t *testing.T) {
	t.Parallel()
	text, dropped := carrier.Extend("a=1", nil, attr.FromStrings("k\x00", "v"))
	if text != "a=1" {
		t.Errorf("Extend = %q, want a=1", text)
	}
	checkDropped(t, dropped, []dropWant{{"k\x00", carrier.ErrKeyHasNUL}})
	if len(dropped) == 1 && !strings.Contains(dropped[0].Err.Error(), "NUL") {
		t.Errorf("the reason does not name NUL: %v", dropped[0].Err)
	}
	// What the rule prevents: exec refuses an environment with NUL in it,
	// and accepts the carrier Format returns.
	run := func(carrierText string) error {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = []string{carrier.EnvVar + "=" + carrierText}
		return cmd.Run()
	}
	if err := run("a=1,k\x00=v"); err == nil {
		t.Errorf("exec accepted an environment variable holding NUL")
	}
	if err := run(text); err != nil {
		t.Errorf("exec with the formatted carrier: %v", err)
	}
}
