// Package taskprolog holds the texts and files of lens as a Slurm TaskProlog
// (docs/taskprolog.md): the admin's policy file it reads
// (docs/taskprolog.md#policy), the literal lines it writes for slurmstepd
// (docs/taskprolog.md#output-syntax) and the log file it appends reports
// to (docs/taskprolog.md#reports). Every file is opened without blocking
// and only as a regular file (docs/taskprolog.md#bounds).
//
// It reads the files it is given and no environment variable; it emits no
// attributes. The command (lens taskprolog, cmd/lens) decides what to
// export.
package taskprolog
