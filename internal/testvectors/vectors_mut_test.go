package testvectors

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/attr"
)

// TestModuleOf: only a `module` directive followed by a space or a tab
// names the module. Mutants (vectors.go:68 of 3b87dea): the first `&&` as
// `||` (a bare "module" line indexed past its end), the second `&&` as `||`
// and `rest[0] == '\t'` as `!=` (a "modules ..." line taken).
func TestModuleOf(t *testing.T) {
	t.Parallel()
	for _, r := range []struct{ name, gomod, want string }{
		{"space", "module github.com/nemolens/lens-go\n\ngo 1.26\n", modulePath},
		{"tab", "// comment\nmodule\tgithub.com/x/y\n", "github.com/x/y"},
		{"quoted", "module \"github.com/x/y\"\n", "github.com/x/y"},
		{"bare module line", "module\nmodule github.com/x/y\n", "github.com/x/y"},
		{"longer word", "modules github.com/a/b\nmodule github.com/x/y\n", "github.com/x/y"},
		{"none", "go 1.26\n", ""},
	} {
		p := filepath.Join(t.TempDir(), "go.mod")
		if err := os.WriteFile(p, []byte(r.gomod), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := moduleOf(p); got != r.want {
			t.Errorf("%s: moduleOf(%q) = %q, want %q", r.name, r.gomod, got, r.want)
		}
	}
	if got := moduleOf(filepath.Join(t.TempDir(), "go.mod")); got != "" {
		t.Errorf("moduleOf(missing file) = %q", got)
	}
}

// TestDecodeNamesTheFile: a vectors file that does not parse, holds a
// vector that does not decode, or whose count is wrong is an error naming
// the file (and the vector). Mutant: vectors.go:228 of 3b87dea `err == nil`
// as `!=` (a wrong count taken; the check is now decode's, `f.Count !=
// len(f.Vectors)`).
func TestDecodeNamesTheFile(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		name, raw string
		wantErr   []string // substrings; none: no error
	}{
		{"valid", `{"schema_version":1,"count":2,"vectors":[{"id":"a","op":"parse"},{"id":"b","op":"set"}]}`, nil},
		{"wrong count", `{"count":3,"vectors":[{"id":"a"},{"id":"b"}]}`, []string{RelPath, "count 3 but 2 vectors"}},
		{"not JSON", `{"count":1,`, []string{RelPath}},
		{"bad map", `{"count":2,"vectors":[{"id":"a"},{"id":"b","current":{"k":1}}]}`,
			[]string{RelPath, `vector 1 (id "b")`, "attribute map"}},
		{"bad typed value", `{"count":1,"vectors":[{"id":"c","base":[["k",{"int":"x"}]]}]}`,
			[]string{RelPath, `vector 0 (id "c")`, `key "k"`, `"x"`}},
	} {
		f, err := decode([]byte(r.raw))
		if len(r.wantErr) == 0 {
			if err != nil || len(f.Vectors) != f.Count || f.Vectors[1].Op != "set" {
				t.Errorf("%s: decode = %+v, %v", r.name, f, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: decode(%s): no error", r.name, r.raw)
			continue
		}
		for _, w := range r.wantErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: decode error %q does not name %q", r.name, err, w)
			}
		}
	}
}

func showMap(m *attr.Map, err error) (string, error) {
	if m == nil {
		return "<nil>", err
	}
	return m.String(), err
}

var (
	getText = func(v Vector) (string, error) {
		s, null, err := v.Text()
		return fmt.Sprintf("%q null=%v", s, null), err
	}
	getInputMap    = func(v Vector) (string, error) { return showMap(v.InputMap()) }
	getExpectedMap = func(v Vector) (string, error) { return showMap(v.ExpectedMap()) }
	getCurrent     = func(v Vector) (string, error) { return showMap(v.Current.M, nil) }
	getString      = func(v Vector) (string, error) {
		s, null, err := v.ExpectedString()
		return fmt.Sprintf("%q null=%v", s, null), err
	}
	getValue = func(v Vector) (string, error) {
		val, null, err := v.ExpectedValue()
		return fmt.Sprintf("%s %v null=%v", val.Kind(), val, null), err
	}
)

// TestAccessors: each accessor returns the vector's value, JSON null as
// null, and names the field of a malformed one. Mutants (vectors.go of
// 3b87dea): :146 `== "null"` as `!=`, :151 and :157 `err != nil` as `==`
// (every map nil or empty); :187 `err != nil` as `==` (every int zero);
// :254 `!= "null"` as `==` (input_hex ignored); :262 `== 0` as `!=`, `||`
// as `&&`, `== "null"` as `!=` (input null taken for "", or a string for
// null); :274, :281, :288, :316 `err != nil` as `==` (the map nil); :277
// `== "null"` as `!=` (input_hex ignored); :286 `i < len(hexes)` as `<=`
// and as `>=` (a panic past the end, the hexes not applied); :300 `!= nil`
// as `==` (expected_hex ignored); :324 `== "null"` as `!=`.
func TestAccessors(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		name, vector string
		get          func(Vector) (string, error)
		want         string // when wantErr is ""
		wantErr      string // a substring of the error
	}{
		{"text from hex", `{"input_hex":"6162","input":null}`, getText, `"ab" null=false`, ""},
		{"text, hex null", `{"input_hex":null,"input":"x"}`, getText, `"x" null=false`, ""},
		{"text", `{"input":"x"}`, getText, `"x" null=false`, ""},
		{"text null", `{"input":null}`, getText, `"" null=true`, ""},
		{"text absent", `{}`, getText, `"" null=true`, ""},
		{"text, bad hex", `{"input_hex":"zz"}`, getText, "", "input_hex"},
		{"text, hex not a string", `{"input_hex":12}`, getText, "", "input_hex"},
		{"text not a string", `{"input":12}`, getText, "", "input"},

		{"map", `{"current":[["a",{"string":"x"}],["b",{"int":"5"}]]}`, getCurrent, `{a="x", b=5}`, ""},
		{"map null", `{"current":null}`, getCurrent, `<nil>`, ""},
		{"map empty", `{"current":[]}`, getCurrent, `{}`, ""},

		{"input map", `{"input":[["a",{"string":"x"}],["b",{"float":"-0.0"}]]}`, getInputMap, `{a="x", b=-0.0}`, ""},
		{"input map, hex null", `{"input":[["a",{"string":"x"}]],"input_hex":null}`, getInputMap, `{a="x"}`, ""},
		{"input map, fewer hexes", `{"input":[["a",{"string":"x"}],["b",{"string":"y"}],["c",{"int":"1"}]],"input_hex":[null,"7a"]}`,
			getInputMap, `{a="x", b="z", c=1}`, ""},
		{"input map not pairs", `{"input":{"a":1}}`, getInputMap, "", "input: attribute map"},
		{"input map, bad key", `{"input":[[1,{"string":"x"}]]}`, getInputMap, "", "input: attribute map: key of pair 0"},
		{"input map, bad value", `{"input":[["a",{"int":"x"}]]}`, getInputMap, "", `input: key "a"`},
		{"input map, hexes not a list", `{"input":[["a",{"string":"x"}]],"input_hex":"7a"}`, getInputMap, "", "input_hex"},
		{"input map, bad hex", `{"input":[["a",{"string":"x"}]],"input_hex":["zz"]}`, getInputMap, "", "input_hex[0]"},

		{"expected map", `{"expected":[["k",{"bool":true}]]}`, getExpectedMap, `{k=True}`, ""},
		{"expected map null", `{"expected":null}`, getExpectedMap, `<nil>`, ""},
		{"expected hex", `{"expected_hex":[["6b","76"]],"expected":null}`, getExpectedMap, `{k="v"}`, ""},
		{"expected hex, bad key", `{"expected_hex":[["zz","76"]]}`, getExpectedMap, "", "expected_hex[0] key"},
		{"expected hex, bad value", `{"expected_hex":[["6b","76"],["6b","zz"]]}`, getExpectedMap, "", "expected_hex[1] value"},
		{"expected map not pairs", `{"expected":"x"}`, getExpectedMap, "", "expected: attribute map"},

		{"expected string", `{"expected":"x"}`, getString, `"x" null=false`, ""},
		{"expected string null", `{"expected":null}`, getString, `"" null=true`, ""},
		{"expected string not a string", `{"expected":1}`, getString, "", "expected"},

		{"expected int", `{"expected":{"int":"5"}}`, getValue, `int64 5 null=false`, ""},
		{"expected float", `{"expected":{"float":"1e+16"}}`, getValue, `float64 1e+16 null=false`, ""},
		{"expected bool", `{"expected":{"bool":false}}`, getValue, `bool False null=false`, ""},
		{"expected null marker", `{"expected":{"null":true}}`, getValue, `null null null=false`, ""},
		{"expected value null", `{"expected":null}`, getValue, `null null null=true`, ""},
		{"expected int, bad text", `{"expected":{"int":"x"}}`, getValue, "", `expected: strconv.ParseInt: parsing "x"`},
		{"expected int not a string", `{"expected":{"int":5}}`, getValue, "", "expected"},
		{"expected value, two kinds", `{"expected":{"int":"5","bool":true}}`, getValue, "", "expected: typed value with 2 keys"},
		{"expected value, unknown kind", `{"expected":{"date":"x"}}`, getValue, "", `expected: unknown value kind "date"`},
	} {
		var v Vector
		if err := json.Unmarshal([]byte(r.vector), &v); err != nil {
			t.Errorf("%s: %s: %v", r.name, r.vector, err)
			continue
		}
		got, err := r.get(v)
		switch {
		case r.wantErr == "" && (err != nil || got != r.want):
			t.Errorf("%s: %s: got %s, %v; want %s", r.name, r.vector, got, err, r.want)
		case r.wantErr != "" && (err == nil || !strings.Contains(err.Error(), r.wantErr)):
			t.Errorf("%s: %s: error %v, want one naming %q", r.name, r.vector, err, r.wantErr)
		}
	}
}
