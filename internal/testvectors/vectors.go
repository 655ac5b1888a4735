// Package testvectors loads the conformance vectors
// (testdata/conformance/vectors.json at the root of the repository; see the
// README there) for the tests of every package. It is test support: only
// _test.go files import it, and a test of the root package checks that no
// shipped package depends on it.
package testvectors

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nemolens/lens-go/attr"
)

// RelPath is the vectors file, relative to the repository root.
const RelPath = "testdata/conformance/vectors.json"

const modulePath = "github.com/nemolens/lens-go"

// Path returns the vectors file's path: RelPath under [RepoRoot].
func Path() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, filepath.FromSlash(RelPath)), nil
}

// RepoRoot returns the repository root: the nearest directory above the
// working directory (a test's package directory, in any of the
// repository's modules) whose go.mod declares the lens-go module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if moduleOf(filepath.Join(dir, "go.mod")) == modulePath {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("testvectors: no go.mod of %s above the working directory", modulePath)
		}
		dir = parent
	}
}

// moduleOf returns the module path a go.mod file declares, or "".
func moduleOf(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// Raw returns the vectors file's bytes.
func Raw() ([]byte, error) {
	p, err := Path()
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// File is the top level of vectors.json.
type File struct {
	SchemaVersion int      `json:"schema_version"`
	Count         int      `json:"count"`
	Vectors       []Vector `json:"vectors"`
}

// Vector is one conformance vector; which fields are set depends on Op.
type Vector struct {
	ID          string `json:"id"`
	Op          string `json:"op"`
	Source      string `json:"source"`
	Ref         string `json:"ref"`
	Note        string `json:"note"`
	Provisional bool   `json:"provisional"`

	Input       json.RawMessage `json:"input"`
	InputHex    json.RawMessage `json:"input_hex"`
	Expected    json.RawMessage `json:"expected"`
	ExpectedHex [][2]string     `json:"expected_hex"`
	Dropped     []string        `json:"dropped"`

	Current    Map  `json:"current"`
	Defaults   Map  `json:"defaults"`
	Overrides  Map  `json:"overrides"`
	Base       Map  `json:"base"`
	Additions  Map  `json:"additions"`
	Overwrite  bool `json:"overwrite"`
	Attributes Map  `json:"attributes"`

	Env           map[string]string `json:"env"`
	ExpectedEnv   map[string]string `json:"expected_env"`
	Scopes        []Map             `json:"scopes"`
	Raise         bool              `json:"raise"`
	ExpectedTrace []*string         `json:"expected_trace"`

	Required  []string `json:"required"`
	Forbidden []string `json:"forbidden"`
	EnvValue  *string  `json:"env_value"`

	SecretsPathExists bool            `json:"secrets_path_exists"`
	LocalRank         *int64          `json:"local_rank"`
	NVML              json.RawMessage `json:"nvml"`
	Warned            []string        `json:"warned"`
	Name              string          `json:"name"`
	RunID             *string         `json:"run_id"`

	Config         json.RawMessage `json:"config"`
	Caller         Map             `json:"caller"`
	Live           json.RawMessage `json:"live"`
	ExpectedSubset Map             `json:"expected_subset"`
	ExpectedAbsent []string        `json:"expected_absent"`
	RankLog        *string         `json:"rank_log"`
}

// Map is an ordered attribute map in the vectors' encoding: an array of
// [key, typed value] pairs. JSON null (argument not given) decodes to a nil
// *attr.Map inside Map.
type Map struct{ M *attr.Map }

// UnmarshalJSON implements json.Unmarshaler.
func (m *Map) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		m.M = nil
		return nil
	}
	var pairs [][2]json.RawMessage
	if err := json.Unmarshal(b, &pairs); err != nil {
		return fmt.Errorf("attribute map: %w", err)
	}
	m.M = &attr.Map{}
	for i, p := range pairs {
		var k string
		if err := json.Unmarshal(p[0], &k); err != nil {
			return fmt.Errorf("attribute map: key of pair %d: %w", i, err)
		}
		v, err := DecodeValue(p[1])
		if err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
		m.M.Set(k, v)
	}
	return nil
}

// DecodeValue decodes a typed value: {"string": s}, {"int": "n"},
// {"float": "text"}, {"bool": b} or {"null": true}.
func DecodeValue(b []byte) (attr.Value, error) {
	var tv map[string]json.RawMessage
	if err := json.Unmarshal(b, &tv); err != nil {
		return attr.Value{}, err
	}
	if len(tv) != 1 {
		return attr.Value{}, fmt.Errorf("typed value with %d keys", len(tv))
	}
	for kind, val := range tv {
		switch kind {
		case "string":
			var s string
			err := json.Unmarshal(val, &s)
			return attr.String(s), err
		case "int":
			var s string
			if err := json.Unmarshal(val, &s); err != nil {
				return attr.Value{}, err
			}
			n, err := strconv.ParseInt(s, 10, 64)
			return attr.Int64(n), err
		case "float":
			var s string
			if err := json.Unmarshal(val, &s); err != nil {
				return attr.Value{}, err
			}
			if s == "-0.0" {
				return attr.Float64(math.Copysign(0, -1)), nil
			}
			f, err := strconv.ParseFloat(s, 64)
			return attr.Float64(f), err
		case "bool":
			var x bool
			err := json.Unmarshal(val, &x)
			return attr.Bool(x), err
		case "null":
			return attr.Null(), nil
		}
		return attr.Value{}, fmt.Errorf("unknown value kind %q", kind)
	}
	panic("unreachable")
}

var (
	once   sync.Once
	loaded File
	err    error
)

// Load reads and parses the vectors once.
func Load() (File, error) {
	once.Do(func() {
		var raw []byte
		if raw, err = Raw(); err != nil {
			return
		}
		loaded, err = decode(raw)
	})
	return loaded, err
}

// decode parses a vectors file. Its errors name RelPath and, for a vector
// that does not decode, the vector's index and id.
func decode(raw []byte) (File, error) {
	var top struct {
		File
		Vectors []json.RawMessage `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return File{}, fmt.Errorf("%s: %w", RelPath, err)
	}
	f := top.File
	for i, rv := range top.Vectors {
		var v Vector
		if err := json.Unmarshal(rv, &v); err != nil {
			var id struct{ ID string }
			_ = json.Unmarshal(rv, &id)
			return File{}, fmt.Errorf("%s: vector %d (id %q): %w", RelPath, i, id.ID, err)
		}
		f.Vectors = append(f.Vectors, v)
	}
	if f.Count != len(f.Vectors) {
		return File{}, fmt.Errorf("%s: count %d but %d vectors", RelPath, f.Count, len(f.Vectors))
	}
	return f, nil
}

// ByOp returns the vectors of one op, in file order.
func ByOp(op string) ([]Vector, error) {
	f, err := Load()
	if err != nil {
		return nil, err
	}
	var out []Vector
	for _, v := range f.Vectors {
		if v.Op == op {
			out = append(out, v)
		}
	}
	return out, nil
}

// Text returns the carrier text of a parse/extend/duplicate_keys vector:
// the hex-decoded input_hex when present, else input (JSON null gives ok
// false: the argument is null).
func (v Vector) Text() (text string, isNull bool, err error) {
	if len(v.InputHex) > 0 && string(v.InputHex) != "null" {
		var h string
		if err := json.Unmarshal(v.InputHex, &h); err != nil {
			return "", false, fmt.Errorf("input_hex: %w", err)
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			return "", false, fmt.Errorf("input_hex: %w", err)
		}
		return string(b), false, nil
	}
	if len(v.Input) == 0 || string(v.Input) == "null" {
		return "", true, nil
	}
	var s string
	if err := json.Unmarshal(v.Input, &s); err != nil {
		return "", false, fmt.Errorf("input: %w", err)
	}
	return s, false, nil
}

// InputMap decodes input as an attribute map, applying input_hex (format
// vectors: element i is null or the hex of entry i's raw string bytes).
func (v Vector) InputMap() (*attr.Map, error) {
	var m Map
	if err := json.Unmarshal(v.Input, &m); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	if len(v.InputHex) == 0 || string(v.InputHex) == "null" {
		return m.M, nil
	}
	var hexes []*string
	if err := json.Unmarshal(v.InputHex, &hexes); err != nil {
		return nil, fmt.Errorf("input_hex: %w", err)
	}
	out := &attr.Map{}
	for i, e := range m.M.Entries() {
		if i < len(hexes) && hexes[i] != nil {
			b, err := hex.DecodeString(*hexes[i])
			if err != nil {
				return nil, fmt.Errorf("input_hex[%d]: %w", i, err)
			}
			e.Value = attr.String(string(b))
		}
		out.Set(e.Key, e.Value)
	}
	return out, nil
}

// ExpectedMap decodes expected as an attribute map, or from expected_hex.
func (v Vector) ExpectedMap() (*attr.Map, error) {
	if v.ExpectedHex != nil {
		out := &attr.Map{}
		for i, p := range v.ExpectedHex {
			k, err := hex.DecodeString(p[0])
			if err != nil {
				return nil, fmt.Errorf("expected_hex[%d] key: %w", i, err)
			}
			val, err := hex.DecodeString(p[1])
			if err != nil {
				return nil, fmt.Errorf("expected_hex[%d] value: %w", i, err)
			}
			out.Set(string(k), attr.String(string(val)))
		}
		return out, nil
	}
	var m Map
	if err := json.Unmarshal(v.Expected, &m); err != nil {
		return nil, fmt.Errorf("expected: %w", err)
	}
	return m.M, nil
}

// ExpectedString decodes expected as a string; isNull reports JSON null.
func (v Vector) ExpectedString() (s string, isNull bool, err error) {
	if string(v.Expected) == "null" {
		return "", true, nil
	}
	if err := json.Unmarshal(v.Expected, &s); err != nil {
		return "", false, fmt.Errorf("expected: %w", err)
	}
	return s, false, nil
}

// ExpectedValue decodes expected as a typed value; isNull reports JSON null.
func (v Vector) ExpectedValue() (val attr.Value, isNull bool, err error) {
	if string(v.Expected) == "null" {
		return attr.Value{}, true, nil
	}
	if val, err = DecodeValue(v.Expected); err != nil {
		return attr.Value{}, false, fmt.Errorf("expected: %w", err)
	}
	return val, false, nil
}

// ForOp returns the vectors of one op for a test, failing it when the file
// cannot be read or holds no vector of that op (a renamed op must not make a
// test pass by running nothing).
func ForOp(tb testing.TB, op string) []Vector {
	tb.Helper()
	vs, err := ByOp(op)
	if err != nil {
		tb.Fatal(err)
	}
	if len(vs) == 0 {
		tb.Fatalf("no %s vectors", op)
	}
	return vs
}
