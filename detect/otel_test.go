package detect_test

import (
	"context"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

func attrsOf(r *resource.Resource) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range r.Attributes() {
		out[kv.Key] = kv.Value
	}
	return out
}

func TestOTelDetectors(t *testing.T) {
	ctx := context.Background()
	secrets := filepath.Join(t.TempDir(), "none")
	slurm := environ.Map{
		"SLURM_JOB_ID": "12345", "SLURM_JOB_NUM_NODES": "4", "SLURM_NTASKS": "16",
		"CUDA_VISIBLE_DEVICES": "0,1", "KUBERNETES_SERVICE_HOST": "10.0.0.1", "K8S_POD_NAME": "trainer-0",
	}
	opts := []detect.Option{detect.WithEnv(slurm), detect.WithHostname(fixedHost), detect.WithPID(4242), detect.WithKubernetesSecretsPath(secrets)}

	r, err := resource.New(ctx, resource.WithDetectors(detect.Detector(opts...)))
	if err != nil {
		t.Fatal(err)
	}
	if r.SchemaURL() != "" {
		t.Errorf("schema URL %q, want schemaless", r.SchemaURL())
	}
	got := attrsOf(r)
	ints := map[attribute.Key]int64{
		"process.pid": 4242, "host.gpu.count": 2, "slurm.nnodes": 4, "slurm.ntasks": 16,
		"slurm.array.count": 1, "slurm.restart_count": 0,
	}
	for k, want := range ints {
		if v := got[k]; v.Type() != attribute.INT64 || v.AsInt64() != want {
			t.Errorf("%s = %v (%v), want int64 %d", k, v.String(), v.Type(), want)
		}
	}
	for k, want := range map[attribute.Key]string{"host.name": "node07", "slurm.job.id": "12345", "k8s.pod.name": "trainer-0"} {
		if v := got[k]; v.Type() != attribute.STRING || v.AsString() != want {
			t.Errorf("%s = %v, want %q", k, v.String(), want)
		}
	}

	// Together with the SDK's schema-stamped detectors: no schema conflict.
	r, err = resource.New(ctx, resource.WithTelemetrySDK(), resource.WithDetectors(
		detect.LocalDetector(opts...), detect.SlurmDetector(opts...), detect.KubernetesDetector(opts...)))
	if err != nil {
		t.Fatalf("with WithTelemetrySDK: %v", err)
	}
	if len(attrsOf(r)) != len(got)+3 {
		t.Errorf("merged %d attributes, want %d", len(attrsOf(r)), len(got)+3)
	}
}

func TestOTelDetectorsAbsent(t *testing.T) {
	ctx := context.Background()
	opts := []detect.Option{detect.WithEnv(environ.Map{}), detect.WithHostname(fixedHost), detect.WithPID(1), detect.WithGPUCount(noGPU), detect.WithKubernetesSecretsPath(filepath.Join(t.TempDir(), "none"))}
	for name, d := range map[string]resource.Detector{
		"slurm": detect.SlurmDetector(opts...), "kubernetes": detect.KubernetesDetector(opts...),
	} {
		r, err := d.Detect(ctx)
		if err != nil || r.Len() != 0 || r.SchemaURL() != "" {
			t.Errorf("%s: %v, %v", name, r, err)
		}
		r, err = resource.New(ctx, resource.WithDetectors(d))
		if err != nil || r.Len() != 0 {
			t.Errorf("%s via resource.New: %v, %v", name, r, err)
		}
	}
	r, err := detect.LocalDetector(opts...).Detect(ctx)
	if err != nil || r.Len() != 2 {
		t.Errorf("local: %v, %v", r, err)
	}
}
