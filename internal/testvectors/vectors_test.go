package testvectors_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/internal/testvectors"
)

// TestVectorsAgainstCopy compares the vectors file with another copy when
// LENS_CONFORMANCE_VECTORS names one (the team's shared conformance suite;
// see testdata/conformance/README.md): they must be byte-identical.
func TestVectorsAgainstCopy(t *testing.T) {
	t.Parallel()
	other := os.Getenv("LENS_CONFORMANCE_VECTORS")
	if other == "" {
		t.Skip("LENS_CONFORMANCE_VECTORS is unset: nothing to compare the vectors file with")
	}
	want, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	got, err := testvectors.Raw()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s; copy it again (see testdata/conformance/README.md)", testvectors.RelPath, other)
	}
}

// owners names, for every op of testvectors.json, the package whose tests run
// it (see the README's op table). A new op must get an owner here.
var owners = map[string]string{
	"parse":             "carrier",
	"format":            "carrier",
	"compose":           "carrier",
	"extend":            "carrier",
	"integer":           "internal/pytext",
	"set":               "carrier",
	"publish":           "carrier",
	"duplicate_keys":    "carrier",
	"check":             "carrier",
	"merge":             "detect",
	"detect_slurm":      "detect",
	"detect_kubernetes": "detect",
	"gpu_count":         "detect",
	"detect_gpu":        "detect",
	"normalize":         "detect",
	"job_uuid":          "detect",
	"run_uuid":          "detect",
	"resource":          "lens (root package)",
}

func TestVectorsAllOpsCovered(t *testing.T) {
	t.Parallel()
	f, err := testvectors.Load()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	ids := map[string]bool{}
	for _, v := range f.Vectors {
		seen[v.Op]++
		if _, ok := owners[v.Op]; !ok {
			t.Errorf("vector %s: op %q has no owner", v.ID, v.Op)
		}
		if v.ID == "" || ids[v.ID] {
			t.Errorf("vector id %q is empty or repeated", v.ID)
		}
		ids[v.ID] = true
	}
	for op, owner := range owners {
		if seen[op] == 0 {
			t.Errorf("op %q (owner %s) has no vectors", op, owner)
		}
	}
}

var kinds = map[string]bool{"string": true, "int": true, "float": true, "bool": true, "null": true}

// walkTyped calls fn for every JSON object in v that has exactly one key
// and that key is a typed-value kind.
func walkTyped(v any, path string, fn func(path string, raw map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			for k := range x {
				if kinds[k] {
					fn(path, x)
					return
				}
			}
		}
		for k, e := range x {
			walkTyped(e, path+"."+k, fn)
		}
	case []any:
		for i, e := range x {
			walkTyped(e, path+"["+itoa(i)+"]", fn)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestVectorsDecode checks that every vector decodes with the loader: all
// typed values are valid, float texts are the Python repr of their value,
// and each op's inputs and expectations read with the accessors the tests
// use.
func TestVectorsDecode(t *testing.T) {
	t.Parallel()
	f, err := testvectors.Load()
	if err != nil {
		t.Fatal(err)
	}
	var tree struct {
		Vectors []any `json:"vectors"`
	}
	raw, err := testvectors.Raw()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &tree); err != nil {
		t.Fatal(err)
	}
	if len(tree.Vectors) != len(f.Vectors) || f.Count != len(f.Vectors) {
		t.Fatalf("count %d, %d vectors, %d raw", f.Count, len(f.Vectors), len(tree.Vectors))
	}
	typed := 0
	for i, v := range f.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			walkTyped(tree.Vectors[i], v.ID, func(path string, raw map[string]any) {
				typed++
				b, _ := json.Marshal(raw)
				val, err := testvectors.DecodeValue(b)
				if err != nil {
					t.Errorf("%s: %s: %v", path, b, err)
					return
				}
				if text, ok := raw["float"].(string); ok {
					if got := attr.FormatFloat(val.AsFloat64()); got != text {
						t.Errorf("%s: float %q is not in Python repr form (%q)", path, text, got)
					}
				}
				if _, ok := raw["null"]; ok && raw["null"] != true {
					t.Errorf("%s: null marker is %v, want true", path, raw["null"])
				}
			})
			checkAccessors(t, v)
		})
	}
	if typed == 0 {
		t.Errorf("no typed values found")
	}
}

func checkAccessors(t *testing.T, v testvectors.Vector) {
	t.Helper()
	var err error
	switch v.Op {
	case "parse":
		if _, _, err = v.Text(); err == nil {
			_, err = v.ExpectedMap()
		}
	case "extend", "duplicate_keys":
		_, _, err = v.Text()
		if err == nil && v.Op == "extend" {
			_, _, err = v.ExpectedString()
		}
	case "format":
		if _, err = v.InputMap(); err == nil {
			_, _, err = v.ExpectedString()
		}
	case "normalize":
		if _, err = v.InputMap(); err == nil {
			_, err = v.ExpectedMap()
		}
	case "compose", "merge", "detect_slurm", "detect_kubernetes", "detect_gpu":
		_, err = v.ExpectedMap()
	case "integer", "gpu_count":
		_, _, err = v.ExpectedValue()
	case "set", "job_uuid", "run_uuid":
		_, _, err = v.ExpectedString()
	case "publish":
		if len(v.Scopes) == 0 || len(v.ExpectedTrace) != 2*len(v.Scopes) {
			err = errors.New("publish vector needs scopes and a trace of two entries per scope")
		}
	}
	if err != nil {
		t.Errorf("op %s: %v", v.Op, err)
	}
}
