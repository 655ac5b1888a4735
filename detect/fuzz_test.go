package detect_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/internal/testvectors"
	"github.com/nemolens/lens-go/lensconv"
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
	vs, err := testvectors.ByOp("detect_slurm")
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
		env := environ.Map{"KUBERNETES_SERVICE_HOST": "k"}
		for i, name := range fuzzVars {
			if mask&(1<<i) != 0 {
				env[name] = vals[i]
			}
		}
		e := &detect.Explanation{}
		got := detect.All(context.Background(), detect.WithEnv(env), detect.WithHostname(fixedHost), detect.WithPID(1), detect.WithGPUCount(noGPU), detect.WithKubernetesSecretsPath(secrets), detect.WithExplanation(e))
		if !got.Has(lensconv.HostName) {
			t.Fatal("no host.name")
		}
		for k, v := range got.All() {
			switch {
			case lensconv.IsSlurmIntegerKey(k), k == lensconv.ProcessPID, k == lensconv.HostGPUCount:
				if v.Kind() != attr.KindInt64 {
					t.Errorf("%s is %v, want int64", k, v.Kind())
				}
			case v.Kind() != attr.KindString:
				t.Errorf("%s is %v, want string", k, v.Kind())
			case v.AsString() == "" && k != lensconv.HostName:
				t.Errorf("%s is empty", k)
			}
			if o, ok := e.Origin(k); !ok || !o.Emitted() {
				t.Errorf("%s has no origin: %+v", k, o)
			}
			if lensconv.IsRetiredSlurmKey(k) {
				t.Errorf("retired key %s emitted", k)
			}
		}
		// Slurm keys come only from the allowlist, and Normalize leaves them.
		slurm := detect.Slurm(context.Background(), detect.WithEnv(env))
		for k := range slurm.All() {
			if !lensconv.IsInheritedKey(k) {
				t.Errorf("DetectSlurm emitted %s", k)
			}
		}
		if n, _ := detect.Normalize(slurm); !n.Equal(slurm) {
			t.Errorf("Normalize changed Slurm keys: %v", n)
		}
		// Normalize never panics on carrier text and types its integer fields.
		n, _ := detect.Normalize(carrier.Parse(otel))
		for k, v := range n.All() {
			if lensconv.IsIntegerKey(k) && v.Kind() == attr.KindString {
				if _, err := pytext.ParseInt(v.AsString()); err == nil {
					t.Errorf("%s=%q left a valid integer as a string", k, v.AsString())
				}
			}
		}
		if _, ok := detect.RunUUID(env, ""); !ok && (jobID != "" && mask&2 != 0) {
			t.Error("no run UUID with a job id")
		}
		detect.GPU(context.Background(), detect.WithEnv(env), detect.WithNVML(fakeDevices(2)))
	})
}
