package lens_test

import (
	"context"
	"testing"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// TestJobAttributes: the run id by lens's rule (never random), the ranks
// of the named launcher, then exactly what detect.Slurm and
// detect.Kubernetes say in the same environment.
func TestJobAttributes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	noPod := detect.WithKubernetesSecretsPath(t.TempDir() + "/absent")
	env := environ.Map{
		"SLURM_JOB_ID": "77", "SLURM_CLUSTER_NAME": "c1", "SLURM_PROCID": "1", "SLURM_NTASKS": "2",
		"SLURM_LOCALID": "0", "SLURM_STEP_ID": "0", "SLURM_JOB_NAME": "train",
		"OTEL_RESOURCE_ATTRIBUTES": "slurm.job.name=launched",
	}
	got, warnings := lens.JobAttributes(ctx, env, detect.RankFromSlurm, noPod)
	if len(warnings) != 0 {
		t.Errorf("warnings %v", warnings)
	}
	want := attr.FromStrings("nemo.run.id", "77")
	want.Set("nv.dl.rank", attr.Int(1))
	want.Set("nv.dl.world_size", attr.Int(2))
	want.Set("nv.dl.local_rank", attr.Int(0))
	want.Update(detect.Slurm(ctx, detect.WithEnv(env)))
	if !got.Equal(want) {
		t.Errorf("JobAttributes =\n%v\nwant\n%v", got, want)
	}
	if v, _ := got.Get("slurm.job.name"); v.AsString() != "launched" {
		t.Errorf("slurm.job.name %v: the carrier's value wins, as in detection", v)
	}

	t.Run("configured run id", func(t *testing.T) {
		got, _ := lens.JobAttributes(ctx, environ.Map{"NEMO_LENS_RUN_ID": " r1 ", "SLURM_JOB_ID": "77"}, "", noPod)
		if v, _ := got.Get("nemo.run.id"); v.AsString() != "r1" {
			t.Errorf("nemo.run.id %v, want r1", v)
		}
	})
	t.Run("no job", func(t *testing.T) {
		got, _ := lens.JobAttributes(ctx, environ.Map{"HOME": "/root", "TORCHELASTIC_RUN_ID": "none"}, "", noPod)
		if got.Len() != 0 {
			t.Errorf("outside any job: %v, want nothing (never a random run id)", got)
		}
	})
	t.Run("pod", func(t *testing.T) {
		env := environ.Map{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "HOSTNAME": "pod-7", "JOB_COMPLETION_INDEX": "3"}
		got, _ := lens.JobAttributes(ctx, env, detect.RankFromK8sIndex, noPod)
		want := attr.NewMap(attr.Entry{Key: "nv.dl.rank", Value: attr.Int(3)}, attr.Entry{Key: "k8s.pod.name", Value: attr.String("pod-7")})
		if !got.Equal(want) {
			t.Errorf("JobAttributes = %v, want %v", got, want)
		}
	})
	t.Run("bad rank", func(t *testing.T) {
		got, warnings := lens.JobAttributes(ctx, environ.Map{"SLURM_JOB_ID": "5"}, detect.RankFromTorchrun, noPod)
		if len(warnings) == 0 || got.Has("nv.dl.rank") {
			t.Errorf("no RANK: %v, warnings %v", got, warnings)
		}
	})
}
