package detect

import (
	"strconv"
	"strings"

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

// Variables that tell the attempts of in-job restarts apart
// (docs/tracing.md#attempt-restarts).
const (
	envNVRxCycle          = "NVRX_CYCLE"
	envTorchAgentStore    = "TORCHELASTIC_USE_AGENT_STORE"
	envTorchMasterAddr    = "MASTER_ADDR"
	envTorchMasterPort    = "MASTER_PORT"
	envTorchErrorFile     = "TORCHELASTIC_ERROR_FILE"
	attemptNVRxPart       = "/nvrx"
	attemptRendezvousPart = "/rdzv"
)

// AttemptName returns the UUIDv5 name of the attempt env describes, whose
// UUID bytes are the attempt's trace id (docs/tracing.md#attempt-trace-id),
// and false when there is no run identity ([RunUUIDName]). It is the
// [RunUUIDName] with its "/te" part (when it has one) replaced by what every
// node of the attempt agrees on:
//
//   - NVRX_CYCLE, when it is a plain decimal integer (NVIDIA Resiliency
//     Extension's in-job restart cycle, the same on every node): "/nvrx"
//     and the cycle, whether or not the name has a "/te" part;
//   - otherwise, for a worker of a torchrun dynamic rendezvous
//     (TORCHELASTIC_USE_AGENT_STORE is "False" and MASTER_PORT is set; the
//     name has a "/te" part): "/rdzv" followed by MASTER_ADDR, ":" and
//     MASTER_PORT, which the rendezvous round's first node draws and every
//     node's workers receive, while TORCHELASTIC_RESTART_COUNT counts only
//     the restarts of the node's own worker group.
//
// Otherwise it is the [RunUUIDName]. Like RunUUID it reads the environment
// only.
func AttemptName(env environ.Lookuper, runID string) (string, bool) {
	env = environ.Or(env)
	base, te, hasTE, ok := runUUIDParts(env, runID)
	if !ok {
		return "", false
	}
	if c, ok := nvrxCycle(env); ok {
		return base + attemptNVRxPart + strconv.Itoa(c), true
	}
	if round, ok := rendezvousRound(env); ok && hasTE {
		return base + attemptRendezvousPart + round, true
	}
	if hasTE {
		return base + "/te" + te, true
	}
	return base, true
}

// AttemptUUID returns the version-5 UUID of [AttemptName]: the attempt's
// trace id in UUID form. It equals [RunUUID] except under NVRx and
// torchrun's dynamic rendezvous.
func AttemptUUID(env environ.Lookuper, runID string) (string, bool) {
	name, ok := AttemptName(env, runID)
	if !ok {
		return "", false
	}
	return uuid5(name), true
}

// PreviousAttemptUUID returns the [AttemptUUID] of the attempt before the
// one env describes (docs/tracing.md#attempt-links), and false when there
// is none or it cannot be told:
//
//   - under NVRx, the previous cycle's when NVRX_CYCLE is above 0;
//   - for a torchrun rendezvous round, none within the job: torchrun gives
//     its workers nothing that names the previous round on every node (the
//     node's record of rounds may: docs/tracing.md#round-links, [RoundsKey]);
//   - otherwise (and for NVRx cycle 0 and a torchrun round, across Slurm
//     requeues) [PreviousRunUUID].
func PreviousAttemptUUID(env environ.Lookuper, runID string) (string, bool) {
	env = environ.Or(env)
	base, _, hasTE, ok := runUUIDParts(env, runID)
	if !ok {
		return "", false
	}
	c, nvrx := nvrxCycle(env)
	if nvrx && c > 0 {
		return uuid5(base + attemptNVRxPart + strconv.Itoa(c-1)), true
	}
	_, round := rendezvousRound(env)
	if nvrx || (round && hasTE) {
		// The previous Slurm attempt's batch level, as for a first
		// torchelastic attempt.
		return PreviousRunUUID(overlay{env, map[string]*string{envTorchelasticRestarts: nil}}, runID)
	}
	return PreviousRunUUID(env, runID)
}

// RoundsKey returns, for a worker of a torchrun dynamic rendezvous round
// (when [AttemptName] names the attempt after the round, not under NVRx),
// the key of its node's record of rounds (docs/tracing.md#round-links):
// the [RunUUIDName] without its "/te" part, followed by a NUL byte and the
// torchrun agent's log directory when TORCHELASTIC_ERROR_FILE names one
// (the part before its last "/attempt_": a directory the agent makes anew,
// so two jobs with one run identity on one node keep two records). It is
// false otherwise. Like RunUUID it reads the environment only.
func RoundsKey(env environ.Lookuper, runID string) (string, bool) {
	env = environ.Or(env)
	base, _, hasTE, ok := runUUIDParts(env, runID)
	if !ok || !hasTE {
		return "", false
	}
	if _, nvrx := nvrxCycle(env); nvrx {
		return "", false
	}
	if _, round := rendezvousRound(env); !round {
		return "", false
	}
	if f, _ := env.LookupEnv(envTorchErrorFile); strings.Contains(f, "/attempt_") {
		base += "\x00" + f[:strings.LastIndex(f, "/attempt_")]
	}
	return base, true
}

// nvrxCycle returns NVRX_CYCLE when it is a plain decimal integer.
func nvrxCycle(env environ.Lookuper) (int, bool) {
	v, ok := env.LookupEnv(envNVRxCycle)
	if !ok {
		return 0, false
	}
	return restartCount(v)
}

// rendezvousRound returns "MASTER_ADDR:MASTER_PORT" for a worker of a
// torchrun dynamic rendezvous.
func rendezvousRound(env environ.Lookuper) (string, bool) {
	if v, _ := env.LookupEnv(envTorchAgentStore); v != "False" {
		return "", false
	}
	port, ok := environ.NonEmpty(env, envTorchMasterPort)
	if !ok {
		return "", false
	}
	addr, _ := env.LookupEnv(envTorchMasterAddr)
	return addr + ":" + port, true
}
