package detect

import (
	"crypto/sha1"

	"github.com/nemolens/lens-go/environ"
)

// Environment variables the UUID derivations read (docs/detection.md#uuids).
const (
	envSlurmClusterName     = "SLURM_CLUSTER_NAME"
	envSlurmJobID           = "SLURM_JOB_ID"
	envSlurmArrayJobID      = "SLURM_ARRAY_JOB_ID"
	envSlurmArrayTaskID     = "SLURM_ARRAY_TASK_ID"
	envSlurmRestartCount    = "SLURM_RESTART_COUNT"
	envTorchelasticRestarts = "TORCHELASTIC_RESTART_COUNT"
	envTorchelasticRunID    = "TORCHELASTIC_RUN_ID"
)

// namespaceURL is the RFC 4122 URL namespace 6ba7b811-9dad-11d1-80b4-00c04fd430c8.
var namespaceURL = [16]byte{
	0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1,
	0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8,
}

// uuid5 returns the canonical lowercase form of the RFC 4122 version-5 UUID
// of name in the URL namespace (Python's uuid.uuid5(uuid.NAMESPACE_URL, name)).
func uuid5[S string | []byte](name S) string {
	var stack [192]byte
	b := append(append(stack[:0], namespaceURL[:]...), name...)
	sum := sha1.Sum(b)
	sum[6] = sum[6]&0x0f | 0x50 // version 5
	sum[8] = sum[8]&0x3f | 0x80 // RFC 4122 variant
	const hexdigits = "0123456789abcdef"
	var out [36]byte
	j := 0
	for i := 0; i < 16; i++ {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j] = hexdigits[sum[i]>>4]
		out[j+1] = hexdigits[sum[i]&0x0f]
		j += 2
	}
	return string(out[:])
}

// jobKey is the job part of both UUID names: in array mode (the variable
// SLURM_ARRAY_TASK_ID is present, even empty) SLURM_ARRAY_JOB_ID, otherwise
// SLURM_JOB_ID; "nojob" when the chosen variable is absent or empty.
func jobKey(env environ.Lookuper) string {
	if _, array := env.LookupEnv(envSlurmArrayTaskID); array {
		return environ.NonEmptyOr(env, envSlurmArrayJobID, "nojob")
	}
	return environ.NonEmptyOr(env, envSlurmJobID, "nojob")
}

// JobUUIDName returns the UUIDv5 name string of [JobUUID]:
// "nemo.lens.job/{cluster}/{jobkey}", where cluster is SLURM_CLUSTER_NAME
// (or "nocluster" when absent or empty) and jobkey is SLURM_ARRAY_JOB_ID when
// the variable SLURM_ARRAY_TASK_ID is present, else SLURM_JOB_ID ("nojob"
// when the chosen variable is absent or empty). Values are neither trimmed nor
// validated. A nil env is the process environment, read at call time.
func JobUUIDName(env environ.Lookuper) string {
	return string(appendJobUUIDName(nil, environ.Or(env)))
}

// appendJobUUIDName appends the job UUID name to b.
func appendJobUUIDName(b []byte, env environ.Lookuper) []byte {
	b = append(b, "nemo.lens.job/"...)
	b = append(b, environ.NonEmptyOr(env, envSlurmClusterName, "nocluster")...)
	b = append(b, '/')
	return append(b, jobKey(env)...)
}

// JobUUID returns nv.dl.job.uuid (docs/detection.md#job-uuid): the
// version-5 UUID of [JobUUIDName] in the RFC 4122 URL namespace, lowercase
// canonical form. It is stable across requeues and across all elements of
// one array, and never empty (the empty environment gives the UUID of
// "nemo.lens.job/nocluster/nojob"). The carrier is never consulted.
func JobUUID(env environ.Lookuper) string {
	var buf [128]byte
	return uuid5(appendJobUUIDName(buf[:0], environ.Or(env)))
}

// RunUUIDName returns the UUIDv5 name string of [RunUUID], and false
// when there is no identity at all (no scheduler id and no run id).
//
// Local mode (neither SLURM_JOB_ID nor SLURM_ARRAY_JOB_ID is non-empty):
// "nemo.lens.run/local/{lr}/te{te}", where lr is runID if non-empty, else
// TORCHELASTIC_RUN_ID if non-empty (else there is no name), and te is
// TORCHELASTIC_RESTART_COUNT if non-empty, else "0".
//
// Scheduler mode: "nemo.lens.run/{cluster}/{jobkey}" (as in [JobUUIDName]),
// then "/sr{SLURM_RESTART_COUNT or 0}" unless the variable SLURM_ARRAY_TASK_ID
// is present (arrays ignore the requeue count), then "/te{value}" when the
// variable TORCHELASTIC_RESTART_COUNT is present, even empty. runID is
// ignored in this mode. Values are neither trimmed nor validated ("01" and
// "1" give different names).
func RunUUIDName(env environ.Lookuper, runID string) (string, bool) {
	base, te, hasTE, ok := runUUIDParts(environ.Or(env), runID)
	if !ok {
		return "", false
	}
	if hasTE {
		return base + "/te" + te, true
	}
	return base, true
}

// runUUIDParts returns the parts of [RunUUIDName]: the name up to its "/te"
// part, and the value of that part when the name has one.
func runUUIDParts(env environ.Lookuper, runID string) (base, te string, hasTE, ok bool) {
	_, hasJob := environ.NonEmpty(env, envSlurmJobID)
	_, hasArrayJob := environ.NonEmpty(env, envSlurmArrayJobID)
	if !hasJob && !hasArrayJob {
		lr := runID
		if lr == "" {
			var ok bool
			if lr, ok = environ.NonEmpty(env, envTorchelasticRunID); !ok {
				return "", "", false, false
			}
		}
		return "nemo.lens.run/local/" + lr, environ.NonEmptyOr(env, envTorchelasticRestarts, "0"), true, true
	}
	base = "nemo.lens.run/" + environ.NonEmptyOr(env, envSlurmClusterName, "nocluster") + "/" + jobKey(env)
	if _, array := env.LookupEnv(envSlurmArrayTaskID); !array {
		base += "/sr" + environ.NonEmptyOr(env, envSlurmRestartCount, "0")
	}
	te, hasTE = env.LookupEnv(envTorchelasticRestarts)
	return base, te, hasTE, true
}

// RunUUID returns nv.dl.run.uuid (docs/detection.md#run-uuid): the
// version-5 UUID of [RunUUIDName]. ok is false when there is no scheduler id
// and no run id (the reference returns None); the string is then "". The
// function reads
// the environment only (nil: the process environment, at call time); it
// configures and publishes nothing, and the carrier never influences it.
func RunUUID(env environ.Lookuper, runID string) (string, bool) {
	name, ok := RunUUIDName(env, runID)
	if !ok {
		return "", false
	}
	return uuid5(name), true
}
