package detect

import (
	"strconv"

	"github.com/nemolens/lens-go/environ"
)

// PreviousRunUUID returns the nv.dl.run.uuid of the attempt before the one
// env describes (docs/tracing.md#attempt-links), and false when there is
// none or it cannot be told: the [RunUUID] of env with
//
//   - TORCHELASTIC_RESTART_COUNT one less, when it counts a restart (a
//     plain decimal integer above 0: "1", not "01" or " 1");
//   - otherwise, in scheduler mode outside an array job, SLURM_RESTART_COUNT
//     one less and TORCHELASTIC_RESTART_COUNT absent (the previous Slurm
//     attempt's batch level), when SLURM_RESTART_COUNT counts a requeue.
//
// Like RunUUID it reads the environment only.
func PreviousRunUUID(env environ.Lookuper, runID string) (string, bool) {
	env = environ.Or(env)
	if _, ok := RunUUIDName(env, runID); !ok {
		return "", false
	}
	_, hasJob := environ.NonEmpty(env, envSlurmJobID)
	_, hasArrayJob := environ.NonEmpty(env, envSlurmArrayJobID)
	scheduler := hasJob || hasArrayJob
	te, hasTE := env.LookupEnv(envTorchelasticRestarts)
	if !scheduler {
		te, hasTE = environ.NonEmptyOr(env, envTorchelasticRestarts, "0"), true
	}
	if n, ok := restartCount(te); hasTE && ok && n > 0 {
		return RunUUID(overlay{env, map[string]*string{envTorchelasticRestarts: ptr(strconv.Itoa(n - 1))}}, runID)
	}
	if !scheduler {
		return "", false
	}
	if _, array := env.LookupEnv(envSlurmArrayTaskID); array {
		return "", false
	}
	if m, ok := restartCount(environ.NonEmptyOr(env, envSlurmRestartCount, "0")); ok && m > 0 {
		return RunUUID(overlay{env, map[string]*string{
			envSlurmRestartCount:    ptr(strconv.Itoa(m - 1)),
			envTorchelasticRestarts: nil,
		}}, runID)
	}
	return "", false
}

// restartCount reads a restart count written the way Slurm and torchrun
// write them: a plain decimal integer, no sign, no leading zero, no blank.
func restartCount(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && strconv.Itoa(n) == s
}

func ptr(s string) *string { return &s }

// overlay is env with some variables replaced (a nil value: removed).
type overlay struct {
	env  environ.Lookuper
	vars map[string]*string
}

func (o overlay) LookupEnv(key string) (string, bool) {
	if v, ok := o.vars[key]; ok {
		if v == nil {
			return "", false
		}
		return *v, true
	}
	return o.env.LookupEnv(key)
}
