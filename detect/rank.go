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
)

// rankVariables maps a launcher to its variables for nv.dl.rank,
// nv.dl.world_size and nv.dl.local_rank ("" when the launcher has none).
var rankVariables = map[string][3]string{
	RankFromSlurm:    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
	RankFromTorchrun: {"RANK", "WORLD_SIZE", "LOCAL_RANK"},
	RankFromK8sIndex: {"JOB_COMPLETION_INDEX", "", ""},
}

// RankSources lists the launchers [Ranks] accepts, in a fixed order.
func RankSources() []string { return []string{RankFromSlurm, RankFromTorchrun, RankFromK8sIndex} }

// ValidRankFrom reports whether from names a launcher that [Ranks] accepts.
func ValidRankFrom(from string) bool {
	_, ok := rankVariables[from]
	return ok
}

// Ranks reads nv.dl.rank, nv.dl.world_size and nv.dl.local_rank from the
// variables of launcher from ([RankFromSlurm], [RankFromTorchrun],
// [RankFromK8sIndex]) in env (nil: the live environment), following
// docs/detection.md#detect-ranks: integers by the strict integer rule; a
// variable that is absent, empty or not an integer gives no attribute and one
// warning; an unknown launcher gives no attribute and one warning. The
// attributes come in the order rank, world size, local rank.
//
// No detector calls it: the Python reference never reads these variables
// (docs/compatibility.md#divergence-rank-from).
func Ranks(env environ.Lookuper, from string) (kvs []attribute.KeyValue, warnings []string) {
	names, ok := rankVariables[from]
	if !ok {
		return nil, []string{fmt.Sprintf("unknown rank source %q (want %s)", from, strings.Join(RankSources(), ", "))}
	}
	env = environ.Or(env)
	keys := [3]string{lensconv.NVDLRank, lensconv.NVDLWorldSize, lensconv.NVDLLocalRank}
	for i, name := range names {
		if name == "" {
			continue
		}
		raw, present := env.LookupEnv(name)
		if !present || raw == "" {
			warnings = append(warnings, fmt.Sprintf("rank from %s: %s is not set; %s not set", from, name, keys[i]))
			continue
		}
		n, err := pytext.ParseInt(raw)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("rank from %s: %s=%q is not a base-10 integer; %s not set", from, name, raw, keys[i]))
			continue
		}
		kvs = append(kvs, attribute.Int64(keys[i], n))
	}
	return kvs, warnings
}
