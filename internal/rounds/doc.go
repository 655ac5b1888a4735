// Package rounds keeps, on one node, the order of the torchrun
// dynamic-rendezvous rounds a run's processes have started in, so that a
// process of a later round can link its attempt's trace to the previous
// round's (docs/tracing.md#round-links). Each record is a small file,
// keyed by the run, in an owner-only directory ([Dir]); [Note] reads it,
// adds the current round and returns the one before. What cannot be read
// or written gives no previous round, never an error that stops a job.
// The package reads nothing but its arguments and the files under the
// directory it is given.
package rounds
