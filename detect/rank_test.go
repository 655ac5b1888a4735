package detect_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/pytext"
)

var rank, world, local = attribute.Key("nv.dl.rank"), attribute.Key("nv.dl.world_size"), attribute.Key("nv.dl.local_rank")

// rankTests are the rows of TestRanks; they also seed FuzzRanks.
var rankTests = []struct {
	name     string
	from     string
	env      environ.Map
	want     []attribute.KeyValue
	warnings []string // substrings, one per expected warning
}{
	{
		name: "slurm",
		from: detect.RankFromSlurm,
		env:  environ.Map{"SLURM_PROCID": "5", "SLURM_NTASKS": "16", "SLURM_LOCALID": "1", "RANK": "9", "WORLD_SIZE": "99"},
		want: []attribute.KeyValue{rank.Int64(5), world.Int64(16), local.Int64(1)},
	},
	{
		name: "torchrun",
		from: detect.RankFromTorchrun,
		env:  environ.Map{"RANK": "7", "WORLD_SIZE": "8", "LOCAL_RANK": "3", "SLURM_PROCID": "0"},
		want: []attribute.KeyValue{rank.Int64(7), world.Int64(8), local.Int64(3)},
	},
	{
		name: "k8s-index reads the rank only",
		from: detect.RankFromK8sIndex,
		env:  environ.Map{"JOB_COMPLETION_INDEX": "12", "WORLD_SIZE": "8", "LOCAL_RANK": "3"},
		want: []attribute.KeyValue{rank.Int64(12)},
	},
	{
		name: "strict integer rule: Python whitespace and a sign are accepted",
		from: detect.RankFromTorchrun,
		env:  environ.Map{"RANK": " +003\x1f", "WORLD_SIZE": "\u00a08\t", "LOCAL_RANK": "-0"},
		want: []attribute.KeyValue{rank.Int64(3), world.Int64(8), local.Int64(0)},
	},
	{
		name:     "strict integer rule: underscores, non-ASCII digits and int64 overflow are rejected",
		from:     detect.RankFromTorchrun,
		env:      environ.Map{"RANK": "1_0", "WORLD_SIZE": "\u0663", "LOCAL_RANK": "9223372036854775808"},
		warnings: []string{`RANK="1_0" is not a base-10 integer; nv.dl.rank not set`, `WORLD_SIZE="٣" is not a base-10 integer`, `LOCAL_RANK="9223372036854775808" is not a base-10 integer`},
	},
	{
		name:     "absent and empty variables warn, the rest is kept",
		from:     detect.RankFromSlurm,
		env:      environ.Map{"SLURM_NTASKS": "4", "SLURM_LOCALID": ""},
		want:     []attribute.KeyValue{world.Int64(4)},
		warnings: []string{"rank from slurm: SLURM_PROCID is not set; nv.dl.rank not set", "SLURM_LOCALID is not set; nv.dl.local_rank not set"},
	},
	{
		name:     "k8s-index without an index",
		from:     detect.RankFromK8sIndex,
		env:      environ.Map{"RANK": "1"},
		warnings: []string{"rank from k8s-index: JOB_COMPLETION_INDEX is not set"},
	},
	{
		name:     "unknown launcher",
		from:     "openmpi",
		env:      environ.Map{"RANK": "1", "SLURM_PROCID": "1", "OMPI_COMM_WORLD_RANK": "1"},
		warnings: []string{`unknown rank source "openmpi" (want slurm, torchrun, k8s-index, mpi)`},
	},
	// MPI (docs/detection.md#detect-ranks-mpi); the Open MPI rows are
	// what Debian's Open MPI 4.1.4 mpirun -np 2 gives rank 1.
	{
		name: "mpi: Open MPI, with the PMIx rank it also sets",
		from: detect.RankFromMPI,
		env:  environ.Map{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "PMIX_RANK": "1", "PMIX_NAMESPACE": "445054977"},
		want: []attribute.KeyValue{rank.Int64(1), world.Int64(2), local.Int64(1)},
	},
	{
		name: "mpi: Open MPI beats an outer launcher's PMI and PMIx variables",
		from: detect.RankFromMPI,
		env:  environ.Map{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "0", "PMI_RANK": "9", "PMI_SIZE": "10", "MPI_LOCALRANKID": "9", "PMIX_RANK": "8", "RANK": "7"},
		want: []attribute.KeyValue{rank.Int64(3), world.Int64(4), local.Int64(0)},
	},
	{
		name: "mpi: MPICH/Hydra and Intel MPI",
		from: detect.RankFromMPI,
		env:  environ.Map{"PMI_RANK": "5", "PMI_SIZE": "8", "MPI_LOCALRANKID": "1", "PMIX_RANK": "2"},
		want: []attribute.KeyValue{rank.Int64(5), world.Int64(8), local.Int64(1)},
	},
	{
		name:     "mpi: MPICH without a local rank",
		from:     detect.RankFromMPI,
		env:      environ.Map{"PMI_RANK": "5", "PMI_SIZE": "8"},
		want:     []attribute.KeyValue{rank.Int64(5), world.Int64(8)},
		warnings: []string{"rank from mpi (MPICH/Hydra, Intel MPI): MPI_LOCALRANKID is not set; nv.dl.local_rank not set"},
	},
	{
		name: "mpi: PMIx alone (srun --mpi=pmix) gives the rank only",
		from: detect.RankFromMPI,
		env:  environ.Map{"PMIX_RANK": "6", "PMIX_NAMESPACE": "slurm.pmix.42.0", "SLURM_NTASKS": "8"},
		want: []attribute.KeyValue{rank.Int64(6)},
	},
	{
		name:     "mpi: an empty rank variable does not choose its launcher",
		from:     detect.RankFromMPI,
		env:      environ.Map{"OMPI_COMM_WORLD_RANK": "", "OMPI_COMM_WORLD_SIZE": "4", "PMI_RANK": "2", "PMI_SIZE": "3", "MPI_LOCALRANKID": "x"},
		want:     []attribute.KeyValue{rank.Int64(2), world.Int64(3)},
		warnings: []string{`rank from mpi (MPICH/Hydra, Intel MPI): MPI_LOCALRANKID="x" is not a base-10 integer; nv.dl.local_rank not set`},
	},
	{
		name:     "mpi: an invalid rank chooses its launcher all the same",
		from:     detect.RankFromMPI,
		env:      environ.Map{"OMPI_COMM_WORLD_RANK": "1_0", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "0", "PMI_RANK": "2"},
		want:     []attribute.KeyValue{world.Int64(4), local.Int64(0)},
		warnings: []string{`rank from mpi (Open MPI): OMPI_COMM_WORLD_RANK="1_0" is not a base-10 integer`},
	},
	{
		name:     "mpi: no launcher",
		from:     detect.RankFromMPI,
		env:      environ.Map{"RANK": "1", "SLURM_PROCID": "1", "PMIX_NAMESPACE": "1"},
		warnings: []string{"rank from mpi: none of OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK is set; nv.dl.rank, nv.dl.world_size and nv.dl.local_rank not set"},
	},
	// Values no launcher gives (docs/detection.md#detect-ranks-check): no
	// attribute at all, one warning naming the variables. On edd0320
	// lens exec --rank-from exported them.
	{
		name:     "mpi: rank 5 of world size 2",
		from:     detect.RankFromMPI,
		env:      environ.Map{"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "0"},
		warnings: []string{"rank from mpi (Open MPI): OMPI_COMM_WORLD_RANK=5 is not below OMPI_COMM_WORLD_SIZE=2: the ranks are not exported"},
	},
	{
		name:     "mpi: rank -1 of world size -4",
		from:     detect.RankFromMPI,
		env:      environ.Map{"PMI_RANK": "-1", "PMI_SIZE": "-4", "MPI_LOCALRANKID": "0"},
		warnings: []string{"rank from mpi (MPICH/Hydra, Intel MPI): PMI_SIZE=-4 is not a world size (want 1 or more): the ranks are not exported"},
	},
	{
		name:     "mpi: PMIx rank -1",
		from:     detect.RankFromMPI,
		env:      environ.Map{"PMIX_RANK": "-1"},
		warnings: []string{"rank from mpi (PMIx): PMIX_RANK=-1 is negative: the ranks are not exported"},
	},
	{
		name:     "torchrun: world size 0",
		from:     detect.RankFromTorchrun,
		env:      environ.Map{"RANK": "0", "WORLD_SIZE": "0", "LOCAL_RANK": "0"},
		warnings: []string{"rank from torchrun: WORLD_SIZE=0 is not a world size (want 1 or more): the ranks are not exported"},
	},
	{
		name:     "torchrun: rank = world size",
		from:     detect.RankFromTorchrun,
		env:      environ.Map{"RANK": "8", "WORLD_SIZE": "8", "LOCAL_RANK": "0"},
		warnings: []string{"RANK=8 is not below WORLD_SIZE=8: the ranks are not exported"},
	},
	{
		name:     "slurm: negative local rank",
		from:     detect.RankFromSlurm,
		env:      environ.Map{"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_LOCALID": "-1"},
		warnings: []string{"rank from slurm: SLURM_LOCALID=-1 is negative: the ranks are not exported"},
	},
	{
		name:     "slurm: local rank = world size",
		from:     detect.RankFromSlurm,
		env:      environ.Map{"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_LOCALID": "2"},
		warnings: []string{"SLURM_LOCALID=2 is not below SLURM_NTASKS=2: the ranks are not exported"},
	},
	{
		name:     "k8s-index: negative index",
		from:     detect.RankFromK8sIndex,
		env:      environ.Map{"JOB_COMPLETION_INDEX": "-1"},
		warnings: []string{"rank from k8s-index: JOB_COMPLETION_INDEX=-1 is negative: the ranks are not exported"},
	},
	{
		name:     "the check is among the values read: a rank without a world size is kept",
		from:     detect.RankFromTorchrun,
		env:      environ.Map{"RANK": "99", "WORLD_SIZE": "x", "LOCAL_RANK": "98"},
		want:     []attribute.KeyValue{rank.Int64(99), local.Int64(98)},
		warnings: []string{`WORLD_SIZE="x" is not a base-10 integer`},
	},
	{
		name:     "an invalid value beside impossible ones: both said",
		from:     detect.RankFromSlurm,
		env:      environ.Map{"SLURM_PROCID": "3", "SLURM_NTASKS": "2", "SLURM_LOCALID": "y"},
		warnings: []string{`SLURM_LOCALID="y" is not a base-10 integer`, "SLURM_PROCID=3 is not below SLURM_NTASKS=2: the ranks are not exported"},
	},
	{
		name:     "launcher names are case-sensitive",
		from:     "Slurm",
		env:      environ.Map{"SLURM_PROCID": "1"},
		warnings: []string{`unknown rank source "Slurm"`},
	},
}

// TestRanks pins docs/detection.md#detect-ranks: each launcher's variables,
// the strict integer rule, one warning per missing or invalid variable, the
// MPI launchers' precedence, and the check of the values (#detect-ranks-check).
func TestRanks(t *testing.T) {
	t.Parallel()
	for _, tt := range rankTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, warnings := detect.Ranks(tt.env, tt.from)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Ranks(%q) = %v, want %v", tt.from, got, tt.want)
			}
			if len(warnings) != len(tt.warnings) {
				t.Fatalf("Ranks(%q) warnings = %q, want %d", tt.from, warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warnings[i], w)
				}
			}
		})
	}
}

func TestRankSources(t *testing.T) {
	t.Parallel()
	want := []string{"slurm", "torchrun", "k8s-index", "mpi"}
	if got := detect.RankSources(); !slices.Equal(got, want) {
		t.Errorf("RankSources() = %q, want %q", got, want)
	}
	for _, from := range want {
		if !detect.ValidRankFrom(from) {
			t.Errorf("ValidRankFrom(%q) = false", from)
		}
	}
	for _, from := range []string{"", "SLURM", "torch", "k8s", "k8s_index", " slurm", "MPI", "openmpi"} {
		if detect.ValidRankFrom(from) {
			t.Errorf("ValidRankFrom(%q) = true", from)
		}
	}
}

// rankOracle is docs/detection.md#detect-ranks written out again: each
// launcher's variables for rank, world size and local rank, the MPI
// launchers in their order.
var rankOracle = map[string][][3]string{
	"slurm":     {{"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"}},
	"torchrun":  {{"RANK", "WORLD_SIZE", "LOCAL_RANK"}},
	"k8s-index": {{"JOB_COMPLETION_INDEX"}},
	"mpi": {
		{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
		{"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
		{"PMIX_RANK"},
	},
}

// FuzzRanks checks detect.Ranks against rankOracle for any launcher name
// and environment (NUL-separated NAME=VALUE entries), seeded with
// TestRanks's rows: an attribute for each of the chosen launcher's
// variables that holds an integer (pytext.ParseInt), in order, and a
// warning naming each of the others — nothing and one more warning when
// those values are no launcher's; one warning and nothing else for an
// unknown launcher or an MPI environment without a rank variable.
func FuzzRanks(f *testing.F) {
	for _, tt := range rankTests {
		var entries []string
		for _, k := range slices.Sorted(maps.Keys(tt.env)) {
			entries = append(entries, k+"="+tt.env[k])
		}
		f.Add(tt.from, strings.Join(entries, "\x00"))
	}
	keys := [3]attribute.Key{rank, world, local}
	f.Fuzz(func(t *testing.T, from, text string) {
		env := environ.FromList(strings.Split(text, "\x00"))
		got, warnings := detect.Ranks(env, from)
		sets, known := rankOracle[from]
		if !known {
			if len(got) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "unknown rank source") {
				t.Fatalf("Ranks(%q) = %v, %q; want nothing and one warning", from, got, warnings)
			}
			return
		}
		var vars [3]string
		chosen := false
		for _, s := range sets {
			if v, _ := env.LookupEnv(s[0]); v != "" || len(sets) == 1 {
				vars, chosen = s, true
				break
			}
		}
		if !chosen {
			if len(got) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "none of") {
				t.Fatalf("Ranks(%q) = %v, %q; want nothing and one warning", from, got, warnings)
			}
			return
		}
		var want []attribute.KeyValue
		var wantWarned []string
		for i, name := range vars {
			if name == "" {
				continue
			}
			v, _ := env.LookupEnv(name)
			if n, err := pytext.ParseInt(v); v != "" && err == nil {
				want = append(want, keys[i].Int64(n))
			} else {
				wantWarned = append(wantWarned, name)
			}
		}
		// Values no launcher gives: nothing, and one more warning.
		vals := map[attribute.Key]int64{}
		for _, kv := range want {
			vals[kv.Key] = kv.Value.AsInt64()
		}
		r, hasR := vals[rank]
		w, hasW := vals[world]
		l, hasL := vals[local]
		if (hasW && w < 1) || (hasR && r < 0) || (hasL && l < 0) || (hasR && hasW && r >= w) || (hasL && hasW && l >= w) {
			want, wantWarned = nil, append(wantWarned, "the ranks are not exported")
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Ranks(%q, %q) = %v, want %v", from, text, got, want)
		}
		if len(warnings) != len(wantWarned) {
			t.Fatalf("Ranks(%q, %q) warnings = %q, want one for each of %q", from, text, warnings, wantWarned)
		}
		for i, name := range wantWarned {
			if !strings.Contains(warnings[i], name) {
				t.Fatalf("warning %d = %q, want it to name %s", i, warnings[i], name)
			}
		}
	})
}
