package cli_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/internal/cli"
)

// stringCases are AppendString rows; they also seed FuzzAppendString.
var stringCases = []struct {
	in    string
	want  string
	valid bool
}{
	{"", `""`, true},
	{"plain", `"plain"`, true},
	{`"\`, `"\"\\"`, true},
	{"\n\r\t\b\f", `"\n\r\t\b\f"`, true},
	{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f" + `"`, true},
	{"<&>", `"<&>"`, true},
	{"héllo 日本", `"héllo 日本"`, true},
	{"\u2028\u2029", `"\u2028\u2029"`, true},
	{"\xff", `"\ufffd"`, false},
	{"a\xe2\x82b", `"a\ufffd\ufffdb"`, false},
	{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`, false},
}

func TestAppendString(t *testing.T) {
	for _, tc := range stringCases {
		got, valid := cli.AppendString(nil, tc.in)
		if string(got) != tc.want || valid != tc.valid {
			t.Errorf("AppendString(%q) = %s, %v; want %s, %v", tc.in, got, valid, tc.want, tc.valid)
		}
	}
}

// perByte replaces each byte of an invalid UTF-8 sequence with U+FFFD.
func perByte(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func FuzzAppendString(f *testing.F) {
	for _, tc := range stringCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, valid := cli.AppendString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("AppendString(%q) = %s: not JSON: %v", s, out, err)
		}
		if valid != utf8.ValidString(s) {
			t.Errorf("AppendString(%q) valid = %v", s, valid)
		}
		if back != perByte(s) {
			t.Errorf("AppendString(%q) reads back as %q", s, back)
		}
	})
}

func TestAppendValue(t *testing.T) {
	for _, tc := range []struct {
		v    attr.Value
		want string
	}{
		{attr.String("x"), `"x"`},
		{attr.Int64(-42), `-42`},
		{attr.Int64(math.MaxInt64), `9223372036854775807`},
		{attr.Bool(true), `true`},
		{attr.Bool(false), `false`},
		{attr.Null(), `null`},
		{attr.Float64(1), `1.0`},
		{attr.Float64(0.1), `0.1`},
		{attr.Float64(1e16), `1e+16`},
		{attr.Float64(1e-5), `1e-05`},
		{attr.Float64(math.Copysign(0, -1)), `-0.0`},
		{attr.Float64(math.NaN()), `"nan"`},
		{attr.Float64(math.Inf(1)), `"inf"`},
		{attr.Float64(math.Inf(-1)), `"-inf"`},
	} {
		got, _ := cli.AppendValue(nil, tc.v)
		if string(got) != tc.want {
			t.Errorf("AppendValue(%v) = %s, want %s", tc.v, got, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("AppendValue(%v) = %s is not JSON", tc.v, got)
		}
	}
}

func TestAppendObject(t *testing.T) {
	m := attr.NewMap(
		attr.Entry{Key: "b", Value: attr.Int64(1)},
		attr.Entry{Key: "a", Value: attr.String("\xff")},
		attr.Entry{Key: "\xfe", Value: attr.Bool(true)},
	)
	got, invalid := cli.AppendObject(nil, m)
	if want := `{"b":1,"a":"\ufffd","\ufffd":true}`; string(got) != want {
		t.Errorf("AppendObject = %s, want %s", got, want)
	}
	if strings.Join(invalid, ",") != "a,\xfe" {
		t.Errorf("invalid = %q", invalid)
	}
	if got, _ := cli.AppendObject(nil, nil); string(got) != "{}" {
		t.Errorf("AppendObject(nil) = %s", got)
	}
}

// decodeCases are DecodeObject rows; they also seed FuzzDecodeObject.
var decodeCases = []struct {
	in          string
	want        *attr.Map
	unsupported map[string]string
	err         string // substring of the error
}{
	{in: `{}`, want: &attr.Map{}},
	{in: ` {"b":"x","a":1} `, want: attr.NewMap(attr.Entry{Key: "b", Value: attr.String("x")}, attr.Entry{Key: "a", Value: attr.Int64(1)})},
	{in: `{"f":1.0,"e":2E3,"n":null,"t":true,"z":-0}`, want: attr.NewMap(
		attr.Entry{Key: "f", Value: attr.Float64(1)}, attr.Entry{Key: "e", Value: attr.Float64(2000)},
		attr.Entry{Key: "n", Value: attr.Null()}, attr.Entry{Key: "t", Value: attr.Bool(true)},
		attr.Entry{Key: "z", Value: attr.Int64(0)})},
	{in: `{"big":99999999999999999999}`, want: attr.FromStrings("big", "99999999999999999999")},
	{in: `{"inf":1e999}`, want: attr.NewMap(attr.Entry{Key: "inf", Value: attr.Float64(math.Inf(1))})},
	{in: `{"a":1,"b":2,"a":3}`, want: attr.NewMap(attr.Entry{Key: "a", Value: attr.Int64(3)}, attr.Entry{Key: "b", Value: attr.Int64(2)})},
	{in: `{"a":[1,[2]],"b":{"c":{}}}`, want: attr.NewMap(attr.Entry{Key: "a", Value: attr.Null()}, attr.Entry{Key: "b", Value: attr.Null()}),
		unsupported: map[string]string{"a": cli.KindArray, "b": cli.KindObject}},
	{in: `{"a":[],"a":"x"}`, want: attr.FromStrings("a", "x")},
	{in: `{"k":"\ud800\u00e9"}`, want: attr.FromStrings("k", "\ufffdé")},
	{in: ``, err: "line 1, column 1 (byte offset 0): unexpected end of JSON input"},
	{in: `{"a":1`, err: "line 1, column 7 (byte offset 6): unexpected end of JSON input"},
	{in: "{\n\"a\":x}", err: "line 2, column 5 (byte offset 6): invalid character 'x'"},
	{in: `{"a":1}}`, err: "line 1, column 8 (byte offset 7): invalid character '}' after top-level value"},
	{in: `[]`, err: "line 1, column 1 (byte offset 0): expected a JSON object, found an array"},
	{in: "\n 3", err: "line 2, column 2 (byte offset 2): expected a JSON object, found a number"},
	{in: `null`, err: "expected a JSON object, found null"},
	{in: `true`, err: "expected a JSON object, found a boolean"},
}

func TestDecodeObject(t *testing.T) {
	for _, tc := range decodeCases {
		m, unsupported, err := cli.DecodeObject([]byte(tc.in))
		if tc.err != "" {
			var se *cli.SyntaxError
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &se) {
				t.Errorf("DecodeObject(%q) error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("DecodeObject(%q): %v", tc.in, err)
			continue
		}
		if !m.Equal(tc.want) {
			t.Errorf("DecodeObject(%q) = %v, want %v", tc.in, m, tc.want)
		}
		if fmt.Sprint(unsupported) != fmt.Sprint(tc.unsupported) {
			t.Errorf("DecodeObject(%q) unsupported %v, want %v", tc.in, unsupported, tc.unsupported)
		}
	}
}

func TestDecodeObjectNotObject(t *testing.T) {
	_, _, err := cli.DecodeObject([]byte(`[1]`))
	if !errors.Is(err, cli.ErrNotObject) {
		t.Errorf("error %v does not wrap ErrNotObject", err)
	}
	var se *cli.SyntaxError
	if _, _, err := cli.DecodeObject([]byte(`{,}`)); !errors.As(err, &se) || se.Offset != 1 || se.Line != 1 || se.Column != 2 {
		t.Errorf("error %#v", err)
	}
}

// FuzzDecodeObject: decoding never panics; a decoded map encodes to JSON
// that decodes to the same map (arrays and objects become null).
func FuzzDecodeObject(f *testing.F) {
	for _, tc := range decodeCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		m, unsupported, err := cli.DecodeObject([]byte(in))
		if err != nil {
			var se *cli.SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(in) {
				t.Fatalf("DecodeObject(%q): %#v", in, err)
			}
			return
		}
		if json.Valid([]byte(in)) != true {
			t.Fatalf("DecodeObject accepted invalid JSON %q", in)
		}
		for k := range unsupported {
			if v, ok := m.Get(k); !ok || !v.IsNull() {
				t.Errorf("unsupported key %q is %v in the map", k, v)
			}
		}
		out, invalid := cli.AppendObject(nil, m)
		if len(invalid) > 0 {
			t.Fatalf("decoded map of %q holds invalid UTF-8 %q", in, invalid)
		}
		back, _, err := cli.DecodeObject(out)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		// NaN and ±Inf are written as the strings "nan", "inf", "-inf".
		want := m.Clone()
		for k, v := range m.All() {
			if f := v.AsFloat64(); v.Kind() == attr.KindFloat64 && (math.IsInf(f, 0) || math.IsNaN(f)) {
				want.Set(k, attr.String(attr.FormatFloat(f)))
			}
		}
		if !back.Equal(want) {
			t.Errorf("round trip of %q: %v, then %v", in, m, back)
		}
	})
}

func benchMap() *attr.Map {
	m := &attr.Map{}
	for i := range 24 {
		m.Set(fmt.Sprintf("slurm.key.%02d", i), attr.String(fmt.Sprintf("value-%d,with \"quotes\"", i)))
	}
	m.Set("slurm.nnodes", attr.Int64(64))
	m.Set("nv.dl.rank", attr.Int64(7))
	return m
}

// BenchmarkAppendObject compares the ordered encoder with encoding/json on
// the same data as an (unordered) map[string]any.
func BenchmarkAppendObject(b *testing.B) {
	m := benchMap()
	b.Run("cli.AppendObject", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = cli.AppendObject(buf[:0], m)
		}
	})
	b.Run("encoding/json.Marshal", func(b *testing.B) {
		plain := map[string]any{}
		for k, v := range m.All() {
			if v.Kind() == attr.KindInt64 {
				plain[k] = v.AsInt64()
			} else {
				plain[k] = v.AsString()
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(plain)
		}
	})
}

func BenchmarkDecodeObject(b *testing.B) {
	data, _ := cli.AppendObject(nil, benchMap())
	b.Run("cli.DecodeObject", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _, _ = cli.DecodeObject(data)
		}
	})
	b.Run("encoding/json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			_ = json.Unmarshal(data, &m)
		}
	})
}

func ExampleDecodeObject() {
	m, unsupported, err := cli.DecodeObject([]byte(`{"rank": 3, "rate": 1.0, "tags": ["a"], "name": "x,y"}`))
	fmt.Println(m, unsupported, err)
	out, _ := cli.AppendObject(nil, m)
	fmt.Println(string(out))
	// Output:
	// {rank=3, rate=1.0, tags=null, name="x,y"} map[tags:array] <nil>
	// {"rank":3,"rate":1.0,"tags":null,"name":"x,y"}
}
