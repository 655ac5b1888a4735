// Package taskprolog holds the two texts of lens as a Slurm TaskProlog
// (docs/taskprolog.md): the admin's policy file it reads
// (docs/taskprolog.md#policy) and the literal lines it writes for slurmstepd
// (docs/taskprolog.md#output-syntax).
//
// It reads the policy file it is given and no environment variable; it
// emits no attributes. The command (lens taskprolog, cmd/lens) decides what
// to export.
package taskprolog
