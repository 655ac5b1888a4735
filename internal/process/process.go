// Package process holds the process-wide identity of lens-go: the run id and
// the service.instance.id this process reports, and the values drawn once per
// process (a random run id, a random instance id). It is, with the carrier
// publication guard of package carrier, the only process-wide state of
// lens-go; everything else is passed explicitly.
//
// A process has one identity, like it has one pid: the random values are
// drawn at most once, and the identity an enabled lens.Setup registers is
// what the child-environment helpers hand down (carrier.ChildEnv,
// carrier.Publish, lens exec).
package process

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"sync/atomic"

	"github.com/nemolens/lens-go/environ"
)

// Environment variables of the run identity.
const (
	// RunIDEnv is the variable every process of a run reads its run id from
	// (the NEMO_LENS_RUN_ID of the Python reference's configuration).
	RunIDEnv = "NEMO_LENS_RUN_ID"
	// SlurmJobIDEnv is Slurm's job id, the run id of a Slurm job.
	SlurmJobIDEnv = "SLURM_JOB_ID"
	// TorchelasticRunIDEnv is torchrun's rendezvous id, shared by every
	// worker of one multi-node torchrun job.
	TorchelasticRunIDEnv = "TORCHELASTIC_RUN_ID"
	// TorchrunDefaultRunID is the TORCHELASTIC_RUN_ID torchrun sets when it
	// is not given --rdzv-id: every such job has it, so it identifies
	// nothing.
	TorchrunDefaultRunID = "none"
	// PMIxNamespaceEnv is the PMIx namespace of an MPI job, shared by every
	// rank of one mpirun (Open MPI) or one srun --mpi=pmix step.
	PMIxNamespaceEnv = "PMIX_NAMESPACE"
	// OpenMPIJobIDEnv is Open MPI's job id, shared by every rank of one
	// mpirun (Open MPI 4 sets it equal to PMIX_NAMESPACE).
	OpenMPIJobIDEnv = "OMPI_MCA_ess_base_jobid"
	// DrawnRunIDEnv marks a NEMO_LENS_RUN_ID that a lens-go process drew at
	// random and handed down: it holds the same value. A launcher's id
	// outranks such a run id (docs/resource.md#run-id-launcher).
	DrawnRunIDEnv = "NEMO_LENS_RUN_ID_DRAWN"
)

// Sources of a filled run id.
const (
	SourceSlurm        = "env " + SlurmJobIDEnv
	SourceTorchelastic = "env " + TorchelasticRunIDEnv
	SourcePMIx         = "env " + PMIxNamespaceEnv
	SourceOpenMPI      = "env " + OpenMPIJobIDEnv
	SourceRandom       = "random (drawn once per process)"
)

// RandomRunID returns this process's random run id: 12 lowercase hex digits
// from crypto/rand (the first 12 hex digits of a random UUID v4 carry no
// version bits, so this is the same distribution), drawn once per process.
func RandomRunID() string { return randomRunID() }

var randomRunID = sync.OnceValue(func() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go >= 1.24)
	return hex.EncodeToString(b[:])
})

// InstanceUUID returns this process's random service.instance.id, a UUID
// version 4 in canonical form, drawn once per process: the default the
// OpenTelemetry SDKs give a process that names no instance.
func InstanceUUID() string { return instanceUUID() }

var instanceUUID = sync.OnceValue(func() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
})

// FillRunID returns the run id of a process whose configuration names none,
// and its source (docs/resource.md#run-id-fill-in-order): [LauncherRunID]
// when a launcher gives one, else [RandomRunID].
func FillRunID(env environ.Lookuper) (id, source string) {
	if id, source, ok := LauncherRunID(env); ok {
		return id, source
	}
	return RandomRunID(), SourceRandom
}

// LauncherRunID returns the id that a scheduler or launcher gives every
// process of one job, and its source: SLURM_JOB_ID when non-empty (the raw
// value, not the array form); else TORCHELASTIC_RUN_ID when non-empty and
// not torchrun's default "none"; else PMIX_NAMESPACE, else
// OMPI_MCA_ess_base_jobid, when non-empty. ok is false when there is none.
func LauncherRunID(env environ.Lookuper) (id, source string, ok bool) {
	env = environ.Or(env)
	if v, ok := environ.NonEmpty(env, SlurmJobIDEnv); ok {
		return v, SourceSlurm, true
	}
	if v, ok := environ.NonEmpty(env, TorchelasticRunIDEnv); ok && v != TorchrunDefaultRunID {
		return v, SourceTorchelastic, true
	}
	if v, ok := environ.NonEmpty(env, PMIxNamespaceEnv); ok {
		return v, SourcePMIx, true
	}
	if v, ok := environ.NonEmpty(env, OpenMPIJobIDEnv); ok {
		return v, SourceOpenMPI, true
	}
	return "", "", false
}

// Configured returns the configured run id v (NEMO_LENS_RUN_ID, trimmed),
// or "" when v is a run id that a lens-go process drew and handed down
// (DrawnRunIDEnv holds the same value, trimmed with trim) and a launcher
// gives env its own id, which then outranks it
// (docs/resource.md#run-id-launcher).
func Configured(env environ.Lookuper, v string, trim func(string) string) string {
	if v == "" {
		return ""
	}
	env = environ.Or(env)
	if d, _ := env.LookupEnv(DrawnRunIDEnv); trim(d) != v {
		return v
	}
	if _, _, ok := LauncherRunID(env); ok {
		return ""
	}
	return v
}

// Drawn reports whether id, handed down to a child, is a run id drawn at
// random: this process's [RandomRunID], or the drawn run id this process
// inherited (DrawnRunIDEnv of env). The child then gets DrawnRunIDEnv=id
// beside NEMO_LENS_RUN_ID=id.
func Drawn(env environ.Lookuper, id string, trim func(string) string) bool {
	if id == "" {
		return false
	}
	if id == RandomRunID() {
		return true
	}
	d, _ := environ.Or(env).LookupEnv(DrawnRunIDEnv)
	return trim(d) == id
}

// Identity is what this process reports about itself: its run id and its
// service.instance.id.
type Identity struct {
	RunID      string
	InstanceID string
}

var current atomic.Pointer[Identity]

// SetIdentity records id as this process's identity (an enabled Setup
// does) and returns a function that puts the previous one back if id is
// still the current one.
func SetIdentity(id Identity) (restore func()) {
	p := &id
	prev := current.Swap(p)
	return func() { current.CompareAndSwap(p, prev) }
}

// CurrentIdentity returns the identity recorded by [SetIdentity], if any.
func CurrentIdentity() (Identity, bool) {
	if p := current.Load(); p != nil {
		return *p, true
	}
	return Identity{}, false
}

// RunID returns the run id this process hands to its children: the run id
// of the recorded identity; else NEMO_LENS_RUN_ID of env (trimmed with
// trim) when not empty and not outranked ([Configured]); else [FillRunID].
func RunID(env environ.Lookuper, trim func(string) string) string {
	if id, ok := CurrentIdentity(); ok && id.RunID != "" {
		return id.RunID
	}
	env = environ.Or(env)
	v, _ := env.LookupEnv(RunIDEnv)
	if v := Configured(env, trim(v), trim); v != "" {
		return v
	}
	id, _ := FillRunID(env)
	return id
}

var children atomic.Uint64

// NextChild returns 1, 2, 3, … on successive calls: the number of the next
// child that gets an instance id derived from this process's own.
func NextChild() uint64 { return children.Add(1) }
