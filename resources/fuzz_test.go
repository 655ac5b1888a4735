package resources_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/vectors"
	"github.com/nemolens/lens-go/resources"
	"github.com/nemolens/lens-go/semconv"
)

// fuzzVars are the variables FuzzDetect varies; bit i of the present mask
// sets fuzzVars[i] (an unset bit leaves it absent, so absent and empty are
// both explored).
var fuzzVars = [...]string{
	"OTEL_RESOURCE_ATTRIBUTES", "SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID",
	"SLURM_ARRAY_TASK_COUNT", "SLURM_JOB_NUM_NODES", "SLURM_NNODES", "SLURM_NTASKS",
	"SLURM_RESTART_COUNT", "SLURM_STEP_ID", "CUDA_VISIBLE_DEVICES", "K8S_POD_NAME",
}

func fuzzSeed(f *testing.F, env map[string]string) {
	var mask uint16
	vals := make([]any, 0, len(fuzzVars)+1)
	for i, name := range fuzzVars {
		v, ok := env[name]
		if ok {
			mask |= 1 << i
		}
		vals = append(vals, v)
	}
	f.Add(append([]any{mask}, vals...)...)
}

func FuzzDetect(f *testing.F) {
	vs, err := vectors.ByOp("detect_slurm")
	if err != nil {
		f.Fatal(err)
	}
	for _, v := range vs {
		fuzzSeed(f, v.Env)
	}
	for _, c := range slurmCases {
		fuzzSeed(f, c.env)
	}
	secrets := filepath.Join(f.TempDir(), "none")
	f.Fuzz(func(t *testing.T, mask uint16, otel, jobID, arrayJobID, arrayTaskID, arrayCount, numNodes, nnodes, ntasks, restart, stepID, cvd, pod string) {
		vals := [...]string{otel, jobID, arrayJobID, arrayTaskID, arrayCount, numNodes, nnodes, ntasks, restart, stepID, cvd, pod}
		env := carrier.MapEnv{"KUBERNETES_SERVICE_HOST": "k"}
		for i, name := range fuzzVars {
			if mask&(1<<i) != 0 {
				env[name] = vals[i]
			}
		}
		e := &resources.Explanation{}
		got := resources.Detect(context.Background(), resources.Options{
			Env: env, Hostname: fixedHost, PID: 1, GPUCount: noGPU, KubernetesSecretsPath: secrets, Explain: e,
		})
		if !got.Has(semconv.HostName) {
			t.Fatal("no host.name")
		}
		for k, v := range got.All() {
			switch {
			case semconv.IsSlurmIntegerKey(k), k == semconv.ProcessPID, k == semconv.HostGPUCount:
				if v.Kind() != attr.KindInt64 {
					t.Errorf("%s is %v, want int64", k, v.Kind())
				}
			case v.Kind() != attr.KindString:
				t.Errorf("%s is %v, want string", k, v.Kind())
			case v.AsString() == "" && k != semconv.HostName:
				t.Errorf("%s is empty", k)
			}
			if o, ok := e.Origin(k); !ok || !o.Emitted() {
				t.Errorf("%s has no origin: %+v", k, o)
			}
			if semconv.IsRetiredSlurmKey(k) {
				t.Errorf("retired key %s emitted", k)
			}
		}
		// Slurm keys come only from the allowlist, and Normalize leaves them.
		slurm := resources.DetectSlurm(resources.Options{Env: env})
		for k := range slurm.All() {
			if !semconv.IsInheritedKey(k) {
				t.Errorf("DetectSlurm emitted %s", k)
			}
		}
		if n, _ := resources.Normalize(slurm, nil); !n.Equal(slurm) {
			t.Errorf("Normalize changed Slurm keys: %v", n)
		}
		// Normalize never panics on carrier text and types its integer fields.
		n, _ := resources.Normalize(carrier.Parse(otel), nil)
		for k, v := range n.All() {
			if semconv.IsIntegerKey(k) && v.Kind() == attr.KindString {
				if _, err := carrier.ParseInt(v.AsString()); err == nil {
					t.Errorf("%s=%q left a valid integer as a string", k, v.AsString())
				}
			}
		}
		if _, ok := resources.DeriveRunUUID(env, ""); !ok && (jobID != "" && mask&2 != 0) {
			t.Error("no run UUID with a job id")
		}
		resources.DetectGPU(nil, resources.GPUOptions{Env: env, NVML: fakeDevices(2)})
	})
}
