package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/cli"
)

// runApp runs lens in-process with a fixed host name.
func runApp(t *testing.T, env environ.Map, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, env: env, hostname: func() (string, error) { return "node-7", nil }}
	code := a.main(context.Background(), args)
	return result{stdout.String(), stderr.String(), code}
}

var detectEnv = environ.Map{
	"SLURM_JOB_ID":         "12",
	"SLURM_JOB_NUM_NODES":  "4",
	"SLURM_STEP_ID":        "0",
	"SLURMD_NODENAME":      "n1",
	"CUDA_VISIBLE_DEVICES": "0,1",
	"SLURM_JOB_NAME":       "a\tb",
	carrier.EnvVar:         "slurm.nnodes=abc",
}

func detectLib(env environ.Map, e *detect.Explanation) *attr.Map {
	return detect.All(context.Background(), detect.WithEnv(env), detect.WithHostname(func() (string, error) { return "node-7", nil }), detect.WithExplanation(e))
}

func TestDetectFormats(t *testing.T) {
	t.Parallel()
	lib := detectLib(detectEnv, nil)

	r := runApp(t, detectEnv, "detect", "--format", "json")
	want, _ := cli.AppendObject(nil, lib)
	if r.code != 0 || r.stdout != string(want)+"\n" || r.stderr != "" {
		t.Errorf("--format json: %v\nwant %s", r, want)
	}
	if n, _ := lib.Get("slurm.nnodes"); n.AsInt64() != 4 {
		t.Errorf("library slurm.nnodes = %v", n)
	}

	r = runApp(t, detectEnv, "detect", "--format", "env")
	text, _ := carrier.Format(lib)
	if r.code != 0 || r.stdout != text+"\n" {
		t.Errorf("--format env: %v\nwant %q", r, text)
	}

	r = runApp(t, detectEnv, "detect")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != lib.Len()+1 {
		t.Fatalf("--format text: %v", r)
	}
	col := strings.Index(lines[0], "VALUE")
	for i, k := range lib.Keys() {
		line := lines[i+1]
		if !strings.HasPrefix(line, k+" ") || line[col-1] != ' ' || line[col] == ' ' {
			t.Errorf("row %q is not aligned under %q", line, lines[0])
		}
	}
	for _, want := range []string{"slurm.nnodes", "4", "int", `"a\tb"`, "host.name", "node-7"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// explained is the JSON form of --explain.
type explained struct {
	Attributes json.RawMessage
	Explain    []struct {
		Key    string
		Source *string
		Notes  []string
	}
}

func TestDetectExplain(t *testing.T) {
	t.Parallel()
	e := &detect.Explanation{}
	lib := detectLib(detectEnv, e)

	r := runApp(t, detectEnv, "detect", "--format", "json", "--explain")
	var got explained
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
		t.Fatalf("--explain --format json: %v: %v", r, err)
	}
	plain, _ := cli.AppendObject(nil, lib)
	if string(got.Attributes) != string(plain) {
		t.Errorf("attributes %s, want %s", got.Attributes, plain)
	}
	origins := e.Origins()
	if len(got.Explain) != len(origins) {
		t.Fatalf("%d origins, library has %d", len(got.Explain), len(origins))
	}
	for i, o := range origins {
		g := got.Explain[i]
		src := ""
		if g.Source != nil {
			src = *g.Source
		}
		if g.Key != o.Key || src != o.Source || (g.Source == nil) != !o.Emitted() || !slices.Equal(g.Notes, o.Notes) {
			t.Errorf("origin %d: %+v, library %+v", i, g, o)
		}
	}
	if o, _ := e.Origin("slurm.nnodes"); !strings.Contains(strings.Join(o.Notes, ";"), "not a base-10 integer") {
		t.Errorf("slurm.nnodes origin %+v lacks the discarded carrier value", o)
	}
	if o, ok := e.Origin("slurm.head_node.name"); !ok || o.Emitted() {
		t.Errorf("slurm.head_node.name origin %+v: want considered, not emitted", o)
	}

	r = runApp(t, detectEnv, "detect", "--explain")
	for _, want := range []string{"SOURCE", "env SLURM_JOB_NUM_NODES", "\nnotes:\n", "  slurm.nnodes: carrier value", "slurm.head_node.name (not emitted): "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--explain text lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestDetectOnly(t *testing.T) {
	t.Parallel()
	env := maps.Clone(detectEnv)
	env["KUBERNETES_SERVICE_HOST"] = "10.0.0.1"
	env["K8S_POD_NAME"] = "p"
	ctx := context.Background()
	opts := []detect.Option{detect.WithEnv(env), detect.WithHostname(func() (string, error) { return "node-7", nil })}
	for only, want := range map[string]*attr.Map{
		"local":      detect.Local(ctx, opts...),
		"slurm":      detect.Slurm(context.Background(), opts...),
		"kubernetes": detect.Kubernetes(context.Background(), opts...),
	} {
		r := runApp(t, env, "detect", "--only", only, "--format", "json")
		w, _ := cli.AppendObject(nil, want)
		if r.code != 0 || r.stdout != string(w)+"\n" {
			t.Errorf("--only %s: %v\nwant %s", only, r, w)
		}
	}
}

func TestResource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := environ.Map{
		"NEMO_LENS_RUN_ID":     "run1",
		"OTEL_SERVICE_NAME":    "svc",
		"CUDA_VISIBLE_DEVICES": "",
		carrier.EnvVar:         "nv.dl.rank=5,host.name=parent,custom=c",
	}
	r := runIn(t, env, "", "resource", "--format", "json", "--attr", "nv.dl.world_size=8", "--attr", "caller=x")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("lens resource: %v", r)
	}
	got, err := decodeOutput([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]attr.Value{
		"service.instance.id":    attr.String("run1-rank5"),
		"nv.dl.rank":             attr.Int64(5),
		"nv.dl.world_size":       attr.Int64(8),
		"nemo.run.id":            attr.String("run1"),
		"service.name":           attr.String("svc"),
		"caller":                 attr.String("x"),
		"custom":                 attr.String("c"),
		"host.gpu.count":         attr.Int64(0),
		"telemetry.sdk.language": attr.String("go"),
	} {
		if v, _ := got.Get(k); !v.Equal(want) {
			t.Errorf("%s = %v, want %v", k, v, want)
		}
	}

	// The same attributes as the resource lens.NewResource builds.
	cfg, err := lens.FromEnv(lens.WithEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	caller := attr.FromStrings("nv.dl.world_size", "8", "caller", "x")
	opts := []lens.ResourceOption{lens.WithEnv(env), lens.WithResourceAttributes(caller.KeyValues()...)}
	res, err := lens.NewResource(ctx, cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	fromRes, _ := attr.FromResource(res)
	if got.Len() != fromRes.Len() {
		t.Errorf("%d attributes, lens.NewResource has %d: %v vs %v", got.Len(), fromRes.Len(), got, fromRes)
	}
	for k, v := range fromRes.All() {
		if g, _ := got.Get(k); !g.Equal(v) {
			t.Errorf("%s = %v, lens.NewResource has %v", k, g, v)
		}
	}
	// In lens's order, under telemetry.sdk.*.
	lensAttrs, err := lens.ResourceAttributes(ctx, cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	wantKeys := append([]string{"telemetry.sdk.language", "telemetry.sdk.name", "telemetry.sdk.version"}, lensAttrs.Keys()...)
	if !slices.Equal(got.Keys(), wantKeys) {
		t.Errorf("keys %q\nwant %q", got.Keys(), wantKeys)
	}
}

func TestResourceRunID(t *testing.T) {
	t.Parallel()
	env := environ.Map{"SLURM_JOB_ID": "77", "CUDA_VISIBLE_DEVICES": "0"}
	r := runIn(t, env, "", "resource", "--format", "json", "--explain")
	var got explained
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
		t.Fatalf("lens resource: %v: %v", r, err)
	}
	m, err := decodeOutput(got.Attributes)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Get("nemo.run.id"); v.AsString() != "77" {
		t.Errorf("nemo.run.id = %v, want SLURM_JOB_ID", v)
	}
	found := false
	for _, o := range got.Explain {
		if o.Key == "nemo.run.id" && strings.Contains(strings.Join(o.Notes, ";"), "NEMO_LENS_RUN_ID is empty") {
			found = true
		}
		if strings.HasPrefix(o.Key, "telemetry.sdk.") && (o.Source == nil || *o.Source != "OpenTelemetry SDK") {
			t.Errorf("origin %+v", o)
		}
	}
	if !found {
		t.Errorf("no note on the filled run id: %s", r.stdout)
	}

	// No SLURM_JOB_ID: a random 12-hex id.
	r = runIn(t, environ.Map{"CUDA_VISIBLE_DEVICES": "0"}, "", "resource", "--format", "json")
	m, err = decodeOutput([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Get("nemo.run.id"); len(v.AsString()) != 12 {
		t.Errorf("nemo.run.id = %v, want 12 hex digits", v)
	}
}

func TestResourceConfigError(t *testing.T) {
	t.Parallel()
	r := runIn(t, environ.Map{"NEMO_LENS_METRICS_ENABLED": "perhaps"}, "", "resource")
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "lens resource: configuration: ") || !strings.Contains(r.stderr, "NEMO_LENS_METRICS_ENABLED") {
		t.Errorf("lens resource with a bad config: %v", r)
	}
}

func TestResourceBinary(t *testing.T) {
	t.Parallel()
	r := runBin(t, map[string]string{"CUDA_VISIBLE_DEVICES": "0,1", "NEMO_LENS_RUN_ID": "r"}, "", "resource", "--format", "json", "--attr", "nv.dl.rank=2")
	m, err := decodeOutput([]byte(r.stdout))
	if err != nil || r.code != 0 {
		t.Fatalf("lens resource: %v: %v", r, err)
	}
	for k, want := range map[string]attr.Value{
		"service.name":        attr.String("nemo"),
		"service.version":     attr.String(binaryVersion(t)),
		"service.instance.id": attr.String("r-rank2"),
		"host.gpu.count":      attr.Int64(2),
	} {
		if v, _ := m.Get(k); !v.Equal(want) {
			t.Errorf("%s = %v, want %v", k, v, want)
		}
	}
	if v, _ := m.Get("process.pid"); v.Kind() != attr.KindInt64 {
		t.Errorf("process.pid = %v", v)
	}
}
