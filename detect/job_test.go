package detect_test

import (
	"testing"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

func TestInJob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  environ.Map
		want bool
	}{
		{environ.Map{}, false},
		{environ.Map{"HOME": "/root", "PATH": "/bin"}, false},
		{environ.Map{"SLURM_JOB_ID": ""}, false},
		{environ.Map{"SLURM_JOB_ID": "12"}, true},
		{environ.Map{"SLURM_ARRAY_JOB_ID": "12"}, true},
		{environ.Map{"SLURM_PROCID": "0"}, true},
		{environ.Map{"SLURM_LOCALID": "0"}, true},
		{environ.Map{"RANK": "3"}, true},
		{environ.Map{"LOCAL_RANK": "0"}, true},
		{environ.Map{"TORCHELASTIC_RUN_ID": "r"}, true},
		{environ.Map{"JOB_COMPLETION_INDEX": "1"}, true},
		{environ.Map{"OMPI_COMM_WORLD_RANK": "1"}, true},
		{environ.Map{"PMI_RANK": "1"}, true},
		{environ.Map{"PMIX_RANK": "1"}, true},
		{environ.Map{"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, true},
		{environ.Map{"WORLD_SIZE": "4"}, false}, // a size names no process
	} {
		if got := detect.InJob(tc.env); got != tc.want {
			t.Errorf("InJob(%v) = %v, want %v", tc.env, got, tc.want)
		}
	}
}
