package main

import (
	"strings"
	"testing"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/collectortest"
)

// TestExecRankFromChecked: lens exec --rank-from refuses ranks no launcher
// gives, as lens taskprolog's ranks = slurm does (one check,
// docs/detection.md#detect-ranks-check): one stderr line naming the
// variables, no rank attribute in the command's carrier or on the span's
// resource; the command runs. On edd0320 rank 5 of world size 2 was
// exported without a word.
func TestExecRankFromChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, from string
		env        map[string]string
		line       string // "": valid, the ranks are exported
	}{
		{"mpi rank 5 of 2", "mpi", map[string]string{"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "1"},
			"lens exec: rank from mpi (Open MPI): OMPI_COMM_WORLD_RANK=5 is not below OMPI_COMM_WORLD_SIZE=2: the ranks are not exported"},
		{"mpi rank -1 of -4", "mpi", map[string]string{"PMI_RANK": "-1", "PMI_SIZE": "-4", "MPI_LOCALRANKID": "0"},
			"lens exec: rank from mpi (MPICH/Hydra, Intel MPI): PMI_SIZE=-4 is not a world size (want 1 or more): the ranks are not exported"},
		{"torchrun world size 0", "torchrun", map[string]string{"RANK": "0", "WORLD_SIZE": "0", "LOCAL_RANK": "0"},
			"lens exec: rank from torchrun: WORLD_SIZE=0 is not a world size (want 1 or more): the ranks are not exported"},
		{"mpi rank 1 of 2", "mpi", map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			col := collectortest.New(t, "grpc", collectortest.OK)
			env := telemetryEnv(col.Endpoint, "grpc", tc.env)
			env[carrier.EnvVar] = "a=b"
			r := runBin(t, env, "", "exec", "--rank-from", tc.from, "--", "printenv", carrier.EnvVar)
			reqs := col.TraceRequests()
			if r.code != 0 || len(reqs) != 1 {
				t.Fatalf("%v, %d trace exports; want exit 0 and the span", r, len(reqs))
			}
			resource := collectortest.Attrs(reqs[0].ResourceSpans[0].Resource.Attributes)
			_, spanRank := resource["nv.dl.rank"]
			carried := strings.Contains(r.stdout, "nv.dl.rank=")
			if tc.line == "" {
				if !spanRank || !carried || r.stderr != "" {
					t.Errorf("%v, resource %v; want the ranks carried and on the span, a silent stderr", r, resource)
				}
				return
			}
			if spanRank || carried || strings.Contains(r.stdout, "nv.dl.world_size") {
				t.Errorf("stdout %q, resource %v; want no rank attribute", r.stdout, resource)
			}
			if r.stderr != tc.line+"\n" {
				t.Errorf("stderr %q, want the one line %q", r.stderr, tc.line)
			}
		})
	}
}
