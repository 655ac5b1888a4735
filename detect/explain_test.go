package detect_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

func origin(t *testing.T, e *detect.Explanation, key string) detect.Origin {
	t.Helper()
	o, ok := e.Origin(key)
	if !ok {
		t.Fatalf("no origin for %s; have %+v", key, e.Origins())
	}
	return o
}

func TestExplainSlurm(t *testing.T) {
	e := &detect.Explanation{}
	env := environ.Map{
		"SLURM_JOB_ID": "12", "SLURM_CLUSTER_NAME": "probe", "SLURM_JOB_NUM_NODES": "4",
		"SLURM_JOB_NAME": "train", "SLURMD_NODENAME": "node1", "SLURM_STEP_ID": "0", "SLURM_NTASKS": "16",
		"SLURM_ARRAY_TASK_COUNT":   "abc",
		"OTEL_RESOURCE_ATTRIBUTES": "slurm.nnodes=abc,slurm.job.name=,slurm.ntasks=32,service.name=x",
	}
	got := detect.Slurm(context.Background(), detect.WithEnv(env), detect.WithExplanation(e))

	cases := []struct {
		key    string
		source string
		notes  []string
	}{
		{"slurm.ntasks", "carrier", []string{`the carrier value wins over SLURM_NTASKS ("16")`}},
		{"slurm.job.id", "env SLURM_JOB_ID", nil},
		{"slurm.array.task_id", "default", nil},
		{"slurm.restart_count", "default", nil},
		{"slurm.nnodes", "env SLURM_JOB_NUM_NODES", []string{`carrier value "abc" for slurm.nnodes is not a base-10 integer; used SLURM_JOB_NUM_NODES`}},
		{"slurm.job.name", "env SLURM_JOB_NAME", []string{`carrier value for slurm.job.name is empty; used SLURM_JOB_NAME`}},
		{"nv.dl.job.uuid", `derived (UUIDv5 of "nemo.lens.job/probe/12")`, nil},
		{"slurm.head_node.name", "", []string{`SLURM_STEP_ID is set (inside a step)`}},
		{"slurm.array.count", "", []string{`SLURM_ARRAY_TASK_COUNT="abc" is not a base-10 integer`}},
	}
	for _, c := range cases {
		o := origin(t, e, c.key)
		if o.Source != c.source || !slices.Equal(o.Notes, c.notes) {
			t.Errorf("%s: got %q %q\nwant %q %q", c.key, o.Source, o.Notes, c.source, c.notes)
		}
		if o.Emitted() != got.Has(c.key) {
			t.Errorf("%s: Emitted() = %v but present = %v", c.key, o.Emitted(), got.Has(c.key))
		}
	}
	// Origins follow the result's order, then the keys that were not emitted.
	var keys []string
	for _, o := range e.Origins() {
		keys = append(keys, o.Key)
	}
	want := append(got.Keys(), "slurm.array.count", "slurm.head_node.name")
	if !slices.Equal(keys, want) {
		t.Errorf("origin order %v\nwant %v", keys, want)
	}
}

func TestExplainSlurmFallbacks(t *testing.T) {
	e := &detect.Explanation{}
	env := environ.Map{
		"SLURM_JOB_ID": "5", "SLURM_ARRAY_JOB_ID": "4", "SLURM_ARRAY_TASK_ID": "", "SLURM_JOB_NUM_NODES": "x", "SLURM_NNODES": "2",
		"SLURM_STEPID": "1", "OTEL_RESOURCE_ATTRIBUTES": "slurm.head_node.name=head,slurm.restart_count=x",
	}
	detect.Slurm(context.Background(), detect.WithEnv(env), detect.WithExplanation(e))
	cases := []struct {
		key, source string
		notes       []string
	}{
		{"slurm.job.id", "env SLURM_ARRAY_JOB_ID+SLURM_ARRAY_TASK_ID", nil},
		{"slurm.head_node.name", "carrier", []string{"SLURM_STEPID is set (inside a step): the local value is not used"}},
		{"slurm.restart_count", "default", []string{`carrier value "x" for slurm.restart_count is not a base-10 integer; used the default`}},
		{"slurm.array.task_id", "", []string{"SLURM_ARRAY_TASK_ID is set but empty"}},
		{"slurm.nnodes", "", []string{`SLURM_JOB_NUM_NODES="x" is not a base-10 integer (SLURM_NNODES not consulted)`}},
	}
	for _, c := range cases {
		o := origin(t, e, c.key)
		if o.Source != c.source || !slices.Equal(o.Notes, c.notes) {
			t.Errorf("%s: got %q %q\nwant %q %q", c.key, o.Source, o.Notes, c.source, c.notes)
		}
	}
}

func TestExplainDetect(t *testing.T) {
	e := &detect.Explanation{}
	detect.All(context.Background(), detect.WithEnv(environ.Map{"CUDA_VISIBLE_DEVICES": "0,1", "KUBERNETES_SERVICE_HOST": "k", "HOSTNAME": "pod"}), detect.WithHostname(fixedHost), detect.WithPID(3), detect.WithExplanation(e))
	want := []detect.Origin{
		{Key: "host.name", Source: "hostname"},
		{Key: "process.pid", Source: "pid"},
		{Key: "host.gpu.count", Source: "env CUDA_VISIBLE_DEVICES"},
		{Key: "k8s.pod.name", Source: "env HOSTNAME"},
	}
	if got := e.Origins(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	e = &detect.Explanation{}
	detect.Local(context.Background(), detect.WithEnv(environ.Map{}), detect.WithHostname(fixedHost), detect.WithGPUCount(noGPU), detect.WithExplanation(e))
	if o := origin(t, e, "host.gpu.count"); o.Emitted() || len(o.Notes) != 1 {
		t.Errorf("failed probe origin %+v", o)
	}
	e = &detect.Explanation{}
	detect.Local(context.Background(), detect.WithEnv(environ.Map{}), detect.WithHostname(fixedHost), detect.WithGPUCount(func(context.Context) (int, bool) { return 2, true }), detect.WithExplanation(e))
	if o := origin(t, e, "host.gpu.count"); o.Source != "gpu probe" {
		t.Errorf("injected probe origin %+v", o)
	}
}

func TestExplanationMethods(t *testing.T) {
	var nilE *detect.Explanation
	nilE.Record("k", "s", "n")
	nilE.Note("k", "n")
	nilE.Discard("k", "n")
	if nilE.Origins() != nil {
		t.Error("nil Origins")
	}
	if _, ok := nilE.Origin("k"); ok {
		t.Error("nil Origin")
	}

	e := &detect.Explanation{}
	e.Record("host.name", "carrier")
	e.Record("b", "caller")
	e.Record("host.name", "hostname", "live")
	e.Record("host.name", "hostname")
	e.Note("c", "considered")
	e.Discard("b", "stripped for children")
	want := []detect.Origin{
		{Key: "host.name", Source: "hostname", Notes: []string{"replaces the value from carrier", "live"}},
		{Key: "b", Source: "", Notes: []string{"discarded the value from caller", "stripped for children"}},
		{Key: "c", Source: "", Notes: []string{"considered"}},
	}
	got := e.Origins()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	// Copies are independent.
	got[0].Notes[0] = "mutated"
	if o, _ := e.Origin("host.name"); o.Notes[0] == "mutated" {
		t.Error("Origins shares memory")
	}
}

func TestExplanationConcurrent(t *testing.T) {
	e := &detect.Explanation{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				e.Record(fmt.Sprint("k", j%10), fmt.Sprint("s", i))
				e.Note("n", "x")
				e.Origins()
			}
		})
	}
	wg.Wait()
	if o, _ := e.Origin("n"); len(o.Notes) != 800 {
		t.Errorf("notes = %d", len(o.Notes))
	}
}
