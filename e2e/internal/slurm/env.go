package slurm

import (
	"slices"
	"strings"
)

// droppedPrefixes are removed from a submitter environment. srun/sbatch/salloc
// propagate the submitter's whole environment into every task, and several
// of these are inputs to them (SLURM_PARTITION acts like --partition,
// SLURM_NTASKS like --ntasks, SBATCH_*/SALLOC_*/SRUN_* like their options);
// the rest would leak into the detector's view of the task.
var droppedPrefixes = []string{
	"SLURM_", "SLURMD_", "SBATCH_", "SALLOC_", "SRUN_", "SQUEUE_", "SINFO_", "SCONTROL_", "SACCT_",
	"TORCHELASTIC_", "NV_LAUNCH_",
}

// droppedNames are removed exactly.
var droppedNames = []string{
	"OTEL_RESOURCE_ATTRIBUTES", // the carrier: only when the test asks for it
	"KUBERNETES_SERVICE_HOST",
	"LENS_SLURM_SLUID", "LENS_SLURM_ARRAY_SLUID", // detector inputs; other LENS_SLURM_* configure the scripts
}

// CleanEnv returns base without every SLURM_*/SLURMD_* variable (and the other
// Slurm client inputs and detector inputs listed in droppedPrefixes and
// droppedNames, including OTEL_RESOURCE_ATTRIBUTES), then adds
// SLURM_CONF=conf when conf is non-empty, then the extra "KEY=VALUE" entries
// (which replace earlier entries of the same key).
func CleanEnv(base []string, conf string, extra ...string) []string {
	out := make([]string, 0, len(base)+1+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if dropped(k) {
			continue
		}
		out = append(out, kv)
	}
	if conf != "" {
		out = setEnv(out, "SLURM_CONF="+conf)
	}
	for _, kv := range extra {
		out = setEnv(out, kv)
	}
	return out
}

func dropped(k string) bool {
	if slices.Contains(droppedNames, k) {
		return true
	}
	for _, p := range droppedPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

func setEnv(env []string, kv string) []string {
	k, _, _ := strings.Cut(kv, "=")
	env = slices.DeleteFunc(env, func(e string) bool {
		ek, _, _ := strings.Cut(e, "=")
		return ek == k
	})
	return append(env, kv)
}
