package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/testvectors"
)

// The conformance vectors run through the built binary, as
// testdata/conformance/README.md#cli ("Through the lens command")
// describes: each command in an environment of PATH plus the vector's env.
// Every vector is also run through the library in-process, and the CLI must
// agree with both the vector and the library.

// decodeOutput reads one JSON object written by lens into an ordered map:
// strings, integers (no '.', 'e' or 'E'), floats, booleans and null. It is
// written independently of internal/cli.
func decodeOutput(data []byte) (*attr.Map, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %q", data)
	}
	m := &attr.Map{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		vt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v attr.Value
		switch x := vt.(type) {
		case string:
			v = attr.String(x)
		case bool:
			v = attr.Bool(x)
		case nil:
			v = attr.Null()
		case json.Number:
			if strings.ContainsAny(string(x), ".eE") {
				f, err := strconv.ParseFloat(string(x), 64)
				if err != nil {
					return nil, err
				}
				v = attr.Float64(f)
			} else {
				n, err := strconv.ParseInt(string(x), 10, 64)
				if err != nil {
					return nil, err
				}
				v = attr.Int64(n)
			}
		default:
			return nil, fmt.Errorf("unexpected token %v", vt)
		}
		m.Set(kt.(string), v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if rest, _ := dec.Token(); rest != nil {
		return nil, fmt.Errorf("data after the object")
	}
	return m, nil
}

// encodeInput writes m as the JSON object lens carrier format reads, in
// order, as the README prescribes. ok is false when m holds a value JSON
// cannot express (NaN, ±Inf).
func encodeInput(m *attr.Map) (string, bool) {
	var b strings.Builder
	b.WriteByte('{')
	i := 0
	for k, v := range m.All() {
		if i > 0 {
			b.WriteByte(',')
		}
		i++
		kj, _ := json.Marshal(k)
		b.Write(kj)
		b.WriteByte(':')
		switch v.Kind() {
		case attr.KindString:
			sj, _ := json.Marshal(v.AsString())
			b.Write(sj)
		case attr.KindFloat64:
			f := v.AsFloat64()
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return "", false
			}
			b.WriteString(attr.FormatFloat(f))
		case attr.KindNull:
			b.WriteString("null")
		case attr.KindBool:
			b.WriteString(strconv.FormatBool(v.AsBool()))
		default:
			b.WriteString(v.String())
		}
	}
	b.WriteByte('}')
	return b.String(), true
}

var droppedLine = regexp.MustCompile(`^lens [a-z ]+: dropped ("(?:[^"\\]|\\.)*"): `)

// droppedKeys returns the keys of the "dropped" lines on stderr, in order.
func droppedKeys(t *testing.T, stderr string) []string {
	t.Helper()
	keys := []string{}
	for line := range strings.SplitSeq(strings.TrimRight(stderr, "\n"), "\n") {
		if line == "" {
			continue
		}
		m := droppedLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("unexpected stderr line %q", line)
			continue
		}
		k, err := strconv.Unquote(m[1])
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return keys
}

func wantDropped(v testvectors.Vector) []string {
	if v.Dropped == nil {
		return []string{}
	}
	return v.Dropped
}

func libDroppedKeys(d []carrier.Dropped) []string {
	keys := []string{}
	for _, x := range d {
		keys = append(keys, x.Key)
	}
	return keys
}

func TestCLIVectorsParse(t *testing.T) {
	t.Parallel()
	for _, v := range testvectors.ForOp(t, "parse") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			if v.ExpectedHex != nil {
				t.Skip("expected_hex: the parsed map holds bytes that are not UTF-8, which JSON output cannot carry")
			}
			text, _, err := v.Text()
			if err != nil {
				t.Fatal(err)
			}
			want, err := v.ExpectedMap()
			if err != nil {
				t.Fatal(err)
			}
			r := runBin(t, nil, text, "carrier", "parse")
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("lens carrier parse: %v", r)
			}
			got, err := decodeOutput([]byte(r.stdout))
			if err != nil {
				t.Fatalf("output %q: %v", r.stdout, err)
			}
			if !strings.HasSuffix(r.stdout, "}\n") {
				t.Errorf("output %q does not end in one newline", r.stdout)
			}
			if !got.Equal(want) {
				t.Errorf("lens carrier parse < %q\n got %v\nwant %v", text, got, want)
			}
			if lib := carrier.Parse(text); !got.Equal(lib) {
				t.Errorf("CLI %v disagrees with carrier.Parse %v", got, lib)
			}
		})
	}
}

func TestCLIVectorsFormat(t *testing.T) {
	t.Parallel()
	for _, v := range testvectors.ForOp(t, "format") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			if len(v.InputHex) > 0 && string(v.InputHex) != "null" {
				t.Skip("input_hex: a value holds bytes that are not UTF-8, which JSON input cannot carry")
			}
			in, err := v.InputMap()
			if err != nil {
				t.Fatal(err)
			}
			stdin, ok := encodeInput(in)
			if !ok {
				t.Skip("a float is NaN or ±Inf, which JSON numbers cannot express")
			}
			want, _, err := v.ExpectedString()
			if err != nil {
				t.Fatal(err)
			}
			r := runBin(t, nil, stdin, "carrier", "format")
			if r.code != 0 {
				t.Fatalf("lens carrier format < %s: %v", stdin, r)
			}
			if r.stdout != want+"\n" {
				t.Errorf("lens carrier format < %s = %q, want %q", stdin, r.stdout, want+"\n")
			}
			if got := droppedKeys(t, r.stderr); !slices.Equal(got, wantDropped(v)) {
				t.Errorf("dropped %q, want %q", got, wantDropped(v))
			}
			lib, libDropped := carrier.Format(in)
			if r.stdout != lib+"\n" {
				t.Errorf("CLI %q disagrees with carrier.Format %q", r.stdout, lib)
			}
			if got := droppedKeys(t, r.stderr); !slices.Equal(got, libDroppedKeys(libDropped)) {
				t.Errorf("dropped %q, carrier.Format dropped %q", got, libDroppedKeys(libDropped))
			}
		})
	}
}

func TestCLIVectorsExtend(t *testing.T) {
	t.Parallel()
	for _, v := range testvectors.ForOp(t, "extend") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			text, _, err := v.Text()
			if err != nil {
				t.Fatal(err)
			}
			defaults, ok1 := encodeInput(v.Defaults.M)
			overrides, ok2 := encodeInput(v.Overrides.M)
			if !ok1 || !ok2 {
				t.Skip("a float is NaN or ±Inf, which JSON numbers cannot express")
			}
			want, _, err := v.ExpectedString()
			if err != nil {
				t.Fatal(err)
			}
			r := runBin(t, nil, text, "carrier", "extend", "--defaults", defaults, "--overrides", overrides)
			if r.code != 0 {
				t.Fatalf("lens carrier extend: %v", r)
			}
			if r.stdout != want+"\n" {
				t.Errorf("lens carrier extend --defaults %s --overrides %s < %q = %q, want %q", defaults, overrides, text, r.stdout, want+"\n")
			}
			if got := droppedKeys(t, r.stderr); !slices.Equal(got, wantDropped(v)) {
				t.Errorf("dropped %q, want %q", got, wantDropped(v))
			}
			lib, libDropped := carrier.Extend(text, v.Defaults.M, v.Overrides.M)
			if r.stdout != lib+"\n" {
				t.Errorf("CLI %q disagrees with carrier.Extend %q", r.stdout, lib)
			}
			if got := droppedKeys(t, r.stderr); !slices.Equal(got, libDroppedKeys(libDropped)) {
				t.Errorf("dropped %q, carrier.Extend dropped %q", got, libDroppedKeys(libDropped))
			}
		})
	}
}

// detectJSON runs lens detect --only ONLY --format json and decodes it.
func detectJSON(t *testing.T, env map[string]string, only string) *attr.Map {
	t.Helper()
	r := runBin(t, env, "", "detect", "--only", only, "--format", "json")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("lens detect --only %s: %v", only, r)
	}
	got, err := decodeOutput([]byte(r.stdout))
	if err != nil {
		t.Fatalf("output %q: %v", r.stdout, err)
	}
	return got
}

func TestCLIVectorsInteger(t *testing.T) {
	t.Parallel()
	for _, v := range testvectors.ForOp(t, "integer") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			var in string
			if err := json.Unmarshal(v.Input, &in); err != nil {
				t.Fatal(err)
			}
			want := &attr.Map{}
			val, isNull, err := v.ExpectedValue()
			if err != nil {
				t.Fatal(err)
			}
			if !isNull {
				want.Set("slurm.nnodes", val)
			}
			env := map[string]string{carrier.EnvVar: "slurm.nnodes=" + carrier.Encode(in)}
			got := detectJSON(t, env, "slurm")
			if !got.Equal(want) {
				t.Errorf("slurm.nnodes=%q: got %v, want %v", in, got, want)
			}
			if lib := detect.Slurm(context.Background(), detect.WithEnv(environ.Map(env))); !got.Equal(lib) {
				t.Errorf("CLI %v disagrees with detect.DetectSlurm %v", got, lib)
			}
		})
	}
}

func TestCLIVectorsDetectSlurm(t *testing.T) {
	t.Parallel()
	for _, v := range testvectors.ForOp(t, "detect_slurm") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			want, err := v.ExpectedMap()
			if err != nil {
				t.Fatal(err)
			}
			got := detectJSON(t, v.Env, "slurm")
			if !got.Equal(want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
			if lib := detect.Slurm(context.Background(), detect.WithEnv(environ.Map(v.Env))); !got.Equal(lib) {
				t.Errorf("CLI %v disagrees with detect.DetectSlurm %v", got, lib)
			}
		})
	}
}

func TestCLIVectorsDetectKubernetes(t *testing.T) {
	t.Parallel()
	_, err := os.Lstat(detect.DefaultKubernetesSecretsPath)
	exists := err == nil
	for _, v := range testvectors.ForOp(t, "detect_kubernetes") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			if v.SecretsPathExists != exists {
				t.Skipf("the vector needs %s to exist: %v; on this machine: %v", detect.DefaultKubernetesSecretsPath, v.SecretsPathExists, exists)
			}
			want, err := v.ExpectedMap()
			if err != nil {
				t.Fatal(err)
			}
			got := detectJSON(t, v.Env, "kubernetes")
			if !got.Equal(want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
			secrets := filepath.Join(t.TempDir(), "absent")
			if v.SecretsPathExists {
				secrets = t.TempDir()
			}
			lib := detect.Kubernetes(context.Background(), detect.WithEnv(environ.Map(v.Env)), detect.WithKubernetesSecretsPath(secrets))
			if !got.Equal(lib) {
				t.Errorf("CLI %v disagrees with detect.DetectKubernetes %v", got, lib)
			}
		})
	}
}

func TestCLIVectorsGPUCount(t *testing.T) {
	t.Parallel()
	for _, v := range testvectors.ForOp(t, "gpu_count") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			want, isNull, err := v.ExpectedValue()
			if err != nil {
				t.Fatal(err)
			}
			if isNull {
				t.Skip("CUDA_VISIBLE_DEVICES is unset: the live nvidia-smi probe of this machine would decide")
			}
			got := detectJSON(t, v.Env, "local")
			if n, _ := got.Get("host.gpu.count"); !n.Equal(want) {
				t.Errorf("host.gpu.count = %v, want %v (output %v)", n, want, got)
			}
			noProbe := func(context.Context) (int, bool) { return 0, false }
			lib := detect.Local(context.Background(), detect.WithEnv(environ.Map(v.Env)), detect.WithGPUCount(noProbe))
			n, _ := got.Get("host.gpu.count")
			if ln, _ := lib.Get("host.gpu.count"); !n.Equal(ln) {
				t.Errorf("CLI host.gpu.count %v disagrees with detect.DetectLocal %v", n, lib)
			}
			if keys := got.Keys(); !slices.Equal(keys, lib.Keys()) {
				t.Errorf("CLI keys %q, detect.DetectLocal keys %q", keys, lib.Keys())
			}
		})
	}
}

func TestCLIVectorsJobUUID(t *testing.T) {
	t.Parallel()
	for _, v := range testvectors.ForOp(t, "job_uuid") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			want, _, err := v.ExpectedString()
			if err != nil {
				t.Fatal(err)
			}
			r := runBin(t, v.Env, "", "uuid", "job")
			wantStderr := "" // a note when the UUID is the one of no job
			if name := detect.JobUUIDName(environ.Map(v.Env)); strings.HasSuffix(name, "/nojob") {
				wantStderr = "lens uuid job: " + noJobNote(name) + "\n"
			}
			if r.code != 0 || r.stdout != want+"\n" || r.stderr != wantStderr {
				t.Errorf("lens uuid job: %v, want %q and stderr %q", r, want, wantStderr)
			}
			if lib := detect.JobUUID(environ.Map(v.Env)); r.stdout != lib+"\n" {
				t.Errorf("CLI %q disagrees with detect.DeriveJobUUID %q", r.stdout, lib)
			}
			if v.Name != "" {
				if r := runBin(t, v.Env, "", "uuid", "job", "--name"); r.stdout != v.Name+"\n" {
					t.Errorf("lens uuid job --name: %v, want %q", r, v.Name)
				}
			}
		})
	}
}

func TestCLIVectorsRunUUID(t *testing.T) {
	t.Parallel()
	for _, v := range testvectors.ForOp(t, "run_uuid") {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			want, none, err := v.ExpectedString()
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"uuid", "run"}
			runID := ""
			if v.RunID != nil {
				runID = *v.RunID
				args = append(args, "--run-id", runID)
			}
			r := runBin(t, v.Env, "", args...)
			lib, ok := detect.RunUUID(environ.Map(v.Env), runID)
			if none {
				if r.code != 1 || r.stdout != "" || r.stderr == "" {
					t.Errorf("lens %q: %v, want exit 1, no stdout, a message", args, r)
				}
				if ok {
					t.Errorf("detect.DeriveRunUUID = %q, want none", lib)
				}
				return
			}
			if r.code != 0 || r.stdout != want+"\n" || r.stderr != "" {
				t.Errorf("lens %q: %v, want %q", args, r, want)
			}
			if !ok || r.stdout != lib+"\n" {
				t.Errorf("CLI %q disagrees with detect.DeriveRunUUID %q, %v", r.stdout, lib, ok)
			}
			if v.Name != "" {
				if r := runBin(t, v.Env, "", append(args, "--name")...); r.stdout != v.Name+"\n" {
					t.Errorf("lens %q --name: %v, want %q", args, r, v.Name)
				}
			}
		})
	}
}
