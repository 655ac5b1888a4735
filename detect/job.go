package detect

import (
	"github.com/nemolens/lens-go/environ"
)

// jobMarkers are the variables whose non-empty value marks a process that a
// scheduler, a launcher or a pod started: Slurm's job id, the rank
// variables of every launcher [Ranks] reads, torchrun's rendezvous id and
// the pod's API server address.
var jobMarkers = func() []string {
	out := []string{envSlurmJobID, envSlurmArrayJobID, envTorchelasticRunID, envKubernetesServiceHost}
	for _, from := range RankSources() {
		if from == RankFromMPI {
			for _, s := range mpiRankSets {
				out = append(out, s.vars[0])
			}
			continue
		}
		v := rankVariables[from]
		out = append(out, v[0])
		if v[2] != "" {
			out = append(out, v[2])
		}
	}
	return out
}()

// InJob reports whether env (nil: the process environment) is the
// environment of a process that a scheduler, a launcher or a pod started
// (docs/detection.md#in-job): one of SLURM_JOB_ID, SLURM_ARRAY_JOB_ID,
// TORCHELASTIC_RUN_ID, KUBERNETES_SERVICE_HOST, or a rank or local-rank
// variable of a launcher [Ranks] reads (SLURM_PROCID, SLURM_LOCALID, RANK,
// LOCAL_RANK, JOB_COMPLETION_INDEX, OMPI_COMM_WORLD_RANK, PMI_RANK,
// PMIX_RANK) is non-empty. It is how a reader of another process's
// environment (the Collector's lens processor) finds, walking up the
// parent chain, the process whose environment describes the job.
func InJob(env environ.Lookuper) bool {
	env = environ.Or(env)
	for _, name := range jobMarkers {
		if _, ok := environ.NonEmpty(env, name); ok {
			return true
		}
	}
	return false
}
