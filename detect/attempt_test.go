package detect_test

import (
	"testing"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// TestPreviousRunUUID: the previous attempt's UUID is the RunUUID of the
// environment that attempt had (docs/tracing.md#attempt-links). The
// expected UUIDs are those of docs/detection.md#uuid-worked-examples, or
// RunUUID of the previous environment written out by hand.
func TestPreviousRunUUID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		env   environ.Map
		runID string
		prev  environ.Map // the previous attempt's environment; nil: none
	}{
		{"requeued once", environ.Map{"SLURM_CLUSTER_NAME": "cluster-a", "SLURM_JOB_ID": "12345", "SLURM_RESTART_COUNT": "1"}, "",
			environ.Map{"SLURM_CLUSTER_NAME": "cluster-a", "SLURM_JOB_ID": "12345", "SLURM_RESTART_COUNT": "0"}},
		{"first attempt", environ.Map{"SLURM_CLUSTER_NAME": "cluster-a", "SLURM_JOB_ID": "12345"}, "", nil},
		{"restart count 0", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "0"}, "", nil},
		{"torchelastic restart", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "2", "TORCHELASTIC_RESTART_COUNT": "3"}, "",
			environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "2", "TORCHELASTIC_RESTART_COUNT": "2"}},
		{"first torchelastic run of a requeue: the batch level before", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "2", "TORCHELASTIC_RESTART_COUNT": "0"}, "",
			environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "1"}},
		{"empty torchelastic count under Slurm", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "1", "TORCHELASTIC_RESTART_COUNT": ""}, "",
			environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "0"}},
		{"array task", environ.Map{"SLURM_JOB_ID": "8", "SLURM_ARRAY_JOB_ID": "7", "SLURM_ARRAY_TASK_ID": "1", "SLURM_RESTART_COUNT": "1"}, "", nil},
		{"not a plain count", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "01"}, "", nil},
		{"blank count", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": " 1"}, "", nil},
		{"local torchrun restart", environ.Map{"TORCHELASTIC_RUN_ID": "r", "TORCHELASTIC_RESTART_COUNT": "1"}, "",
			environ.Map{"TORCHELASTIC_RUN_ID": "r", "TORCHELASTIC_RESTART_COUNT": "0"}},
		{"local run id", environ.Map{"TORCHELASTIC_RESTART_COUNT": "5"}, "myrun",
			environ.Map{"TORCHELASTIC_RESTART_COUNT": "4"}},
		{"local, first", environ.Map{"TORCHELASTIC_RUN_ID": "r"}, "", nil},
		{"no identity", environ.Map{"TORCHELASTIC_RESTART_COUNT": "3"}, "", nil},
	} {
		got, ok := detect.PreviousRunUUID(tc.env, tc.runID)
		if tc.prev == nil {
			if ok {
				t.Errorf("%s: previous %s, want none", tc.name, got)
			}
			continue
		}
		want, _ := detect.RunUUID(tc.prev, tc.runID)
		if !ok || got != want {
			t.Errorf("%s: previous %q %v, want %q", tc.name, got, ok, want)
		}
	}
	// The worked example of docs/tracing.md#trace-per-attempt.
	got, _ := detect.PreviousRunUUID(environ.Map{"SLURM_CLUSTER_NAME": "cluster-a", "SLURM_JOB_ID": "12345", "SLURM_RESTART_COUNT": "1"}, "")
	if got != "1a280c0a-71d2-54bd-bd00-fa82efd94290" {
		t.Errorf("worked example: previous %s", got)
	}
}
