package detect

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/lensconv"
)

// Launchers whose variables [Ranks] reads (docs/detection.md#detect-ranks).
// They are the values of lens exec --rank-from and lens.WithRankFrom.
const (
	// RankFromSlurm reads SLURM_PROCID, SLURM_NTASKS and SLURM_LOCALID.
	RankFromSlurm = "slurm"
	// RankFromTorchrun reads RANK, WORLD_SIZE and LOCAL_RANK.
	RankFromTorchrun = "torchrun"
	// RankFromK8sIndex reads JOB_COMPLETION_INDEX (an Indexed Job; rank only).
	RankFromK8sIndex = "k8s-index"
	// RankFromMPI reads the variables of the first MPI launcher whose rank
	// variable is set: Open MPI (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK),
	// then MPICH/Hydra and Intel MPI (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID),
	// then PMIx (PMIX_RANK; rank only).
	RankFromMPI = "mpi"
)

// rankVariables maps a launcher to its variables for nv.dl.rank,
// nv.dl.world_size and nv.dl.local_rank ("" when the launcher has none).
var rankVariables = map[string][3]string{
	RankFromSlurm:    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
	RankFromTorchrun: {"RANK", "WORLD_SIZE", "LOCAL_RANK"},
	RankFromK8sIndex: {"JOB_COMPLETION_INDEX", "", ""},
	RankFromMPI:      {}, // one of mpiRankSets
}

// mpiRankSets are the MPI launchers' variables, in the order in which
// [RankFromMPI] looks for a set rank variable
// (docs/detection.md#detect-ranks-mpi).
var mpiRankSets = [...]struct {
	launcher string
	vars     [3]string
}{
	{"Open MPI", [3]string{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"}},
	{"MPICH/Hydra, Intel MPI", [3]string{"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"}},
	{"PMIx", [3]string{"PMIX_RANK", "", ""}},
}

// mpiVariables returns the variables of the MPI launcher whose rank
// variable env sets (non-empty), in the order of mpiRankSets, and false when
// none is set.
func mpiVariables(env environ.Lookuper) (launcher string, vars [3]string, ok bool) {
	for _, s := range mpiRankSets {
		if _, set := environ.NonEmpty(env, s.vars[0]); set {
			return s.launcher, s.vars, true
		}
	}
	return "", [3]string{}, false
}

// RankSources lists the launchers [Ranks] accepts, in a fixed order.
func RankSources() []string {
	return []string{RankFromSlurm, RankFromTorchrun, RankFromK8sIndex, RankFromMPI}
}

// ValidRankFrom reports whether from names a launcher that [Ranks] accepts.
func ValidRankFrom(from string) bool {
	_, ok := rankVariables[from]
	return ok
}

// Ranks reads nv.dl.rank, nv.dl.world_size and nv.dl.local_rank from the
// variables of launcher from ([RankFromSlurm], [RankFromTorchrun],
// [RankFromK8sIndex], [RankFromMPI]) in env (nil: the live environment), following
// docs/detection.md#detect-ranks: integers by the strict integer rule; a
// variable that is absent, empty or not an integer gives no attribute and one
// warning; values no launcher gives (a negative rank or local rank, one not
// below the world size, a world size below 1) give no attribute at all and
// one warning naming the variables (docs/detection.md#detect-ranks-check); an
// unknown launcher gives no attribute and one warning. For
// [RankFromMPI] the variables are those of the first MPI launcher whose rank
// variable is set (docs/detection.md#detect-ranks-mpi); when none is, there
// is no attribute and one warning. The attributes come in the order rank,
// world size, local rank.
//
// No detector calls it: the Python reference never reads these variables
// (docs/compatibility.md#divergence-rank-from).
func Ranks(env environ.Lookuper, from string) (kvs []attribute.KeyValue, warnings []string) {
	names, ok := rankVariables[from]
	if !ok {
		return nil, []string{fmt.Sprintf("unknown rank source %q (want %s)", from, strings.Join(RankSources(), ", "))}
	}
	env = environ.Or(env)
	label := from
	if from == RankFromMPI {
		var launcher string
		if launcher, names, ok = mpiVariables(env); !ok {
			return nil, []string{fmt.Sprintf("rank from %s: none of %s is set; %s, %s and %s not set", from,
				mpiRankVariables(), lensconv.NVDLRank, lensconv.NVDLWorldSize, lensconv.NVDLLocalRank)}
		}
		label = from + " (" + launcher + ")"
	}
	keys := [3]string{lensconv.NVDLRank, lensconv.NVDLWorldSize, lensconv.NVDLLocalRank}
	for i, name := range names {
		if name == "" {
			continue
		}
		raw, present := env.LookupEnv(name)
		if !present || raw == "" {
			warnings = append(warnings, fmt.Sprintf("rank from %s: %s is not set; %s not set", label, name, keys[i]))
			continue
		}
		n, err := pytext.ParseInt(raw)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("rank from %s: %s=%q is not a base-10 integer; %s not set", label, name, raw, keys[i]))
			continue
		}
		kvs = append(kvs, attribute.Int64(keys[i], n))
	}
	if problem := rankProblem(names, kvs); problem != "" {
		// Values no launcher gives: none is believed (lens taskprolog's
		// ranks = slurm does the same, through this check).
		return nil, append(warnings, fmt.Sprintf("rank from %s: %s: the ranks are not exported", label, problem))
	}
	return kvs, warnings
}

// RawRank returns the rank variable of launcher from (see [Ranks]) in env
// as an integer, whether or not it is a rank the launcher could give
// ([Ranks] refuses those): for reports that name the task, such as lens
// taskprolog's. False when it is absent or not an integer.
func RawRank(env environ.Lookuper, from string) (int64, bool) {
	names, ok := rankVariables[from]
	env = environ.Or(env)
	if from == RankFromMPI {
		_, names, ok = mpiVariables(env)
	}
	if !ok || names[0] == "" {
		return 0, false
	}
	raw, _ := env.LookupEnv(names[0])
	n, err := pytext.ParseInt(raw)
	return n, err == nil
}

// rankProblem says why ranks that parse as integers cannot be a launcher's
// (a negative rank or local rank, one not below the world size, a world
// size below 1), naming the variables (names, in the order of kvs's keys:
// rank, world size, local rank), or "" when they can
// (docs/detection.md#detect-ranks-check).
func rankProblem(names [3]string, kvs []attribute.KeyValue) string {
	vals := map[attribute.Key]int64{}
	for _, kv := range kvs {
		vals[kv.Key] = kv.Value.AsInt64()
	}
	rank, hasRank := vals[lensconv.NVDLRank]
	world, hasWorld := vals[lensconv.NVDLWorldSize]
	local, hasLocal := vals[lensconv.NVDLLocalRank]
	switch {
	case hasWorld && world < 1:
		return fmt.Sprintf("%s=%d is not a world size (want 1 or more)", names[1], world)
	case hasRank && rank < 0:
		return fmt.Sprintf("%s=%d is negative", names[0], rank)
	case hasRank && hasWorld && rank >= world:
		return fmt.Sprintf("%s=%d is not below %s=%d", names[0], rank, names[1], world)
	case hasLocal && local < 0:
		return fmt.Sprintf("%s=%d is negative", names[2], local)
	case hasLocal && hasWorld && local >= world:
		return fmt.Sprintf("%s=%d is not below %s=%d", names[2], local, names[1], world)
	}
	return ""
}

// mpiRankVariables lists the rank variables of mpiRankSets, in order.
func mpiRankVariables() string {
	names := make([]string, len(mpiRankSets))
	for i, s := range mpiRankSets {
		names[i] = s.vars[0]
	}
	return strings.Join(names, ", ")
}
