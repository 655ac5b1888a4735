// Package reckon turns a Slurm job's accounting records into back-dated
// spans, one set per attempt (docs/reckoner.md).
//
// It reads the pipe-separated output of
// `sacct -j JOB -D -P -n -o FIELDS` (the field list is [Fields], plus
// [SLUIDField] where sacct offers it), groups the rows by attempt — by the
// accounting record each row belongs to (DBIndex, and the SLUID where
// there is one), never by a time window (docs/reckoner.md#attempts) — and
// plans the factual, flat spans of each attempt
// (docs/reckoner.md#spans): slurm.phase.deferred, slurm.phase.queued,
// slurm.record.{allocation,batch,extern,step}, slurm.phase.cleanup_tail,
// slurm.phase.workload and, between attempts, slurm.phase.requeue_gap.
// Each attempt's trace id is its nv.dl.run.uuid (docs/reckoner.md#traces).
//
// It runs nothing itself: sacct is called through an injected [Runner], and
// the spans are exported by the caller (lens reckon).
package reckon
