package telemetry

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/lensconv"
)

// Launchers whose variables can give the rank (RankFrom values).
const (
	RankFromSlurm    = "slurm"
	RankFromTorchrun = "torchrun"
	RankFromK8sIndex = "k8s-index"
)

// rankSources maps a launcher to its variables for nv.dl.rank,
// nv.dl.world_size and nv.dl.local_rank ("" when the launcher has none).
var rankSources = map[string][3]string{
	RankFromSlurm:    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
	RankFromTorchrun: {"RANK", "WORLD_SIZE", "LOCAL_RANK"},
	RankFromK8sIndex: {"JOB_COMPLETION_INDEX", "", ""},
}

// RankSources lists the launchers RankFrom accepts.
func RankSources() []string { return []string{RankFromSlurm, RankFromTorchrun, RankFromK8sIndex} }

// ValidRankFrom reports whether from names a launcher.
func ValidRankFrom(from string) bool {
	_, ok := rankSources[from]
	return ok
}

// RankAttributes reads nv.dl.rank, nv.dl.world_size and nv.dl.local_rank
// from the variables of launcher from:
//
//	slurm      SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID
//	torchrun   RANK, WORLD_SIZE, LOCAL_RANK
//	k8s-index  JOB_COMPLETION_INDEX (nv.dl.rank only; an Indexed Job)
//
// Values follow the strict integer rule (carrier.ParseInt). A variable that
// is absent, empty or not an integer gives no attribute and one warning. An
// unknown launcher gives no attribute and a warning. This is opt-in: the
// Python reference never reads these variables, so a process that uses it
// differs from one that does not.
func RankAttributes(env environ.Lookuper, from string) (kvs []attribute.KeyValue, warnings []string) {
	names, ok := rankSources[from]
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
		n, err := carrier.ParseInt(raw)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("rank from %s: %s=%q is not a base-10 integer; %s not set", from, name, raw, keys[i]))
			continue
		}
		kvs = append(kvs, attribute.Int64(keys[i], n))
	}
	return kvs, warnings
}
