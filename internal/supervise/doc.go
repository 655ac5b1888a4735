// Package supervise runs one command as a child that the command cannot
// tell from being run directly: the lens exec wrapper's process mechanics,
// apart from telemetry.
//
// It reads nothing but what it is given (argv, environment, the three
// standard files, the signal mode) and PATH from that environment. It
// emits the command's exit, and forwards, as the mode says, the signals
// lens receives. In order:
//
//   - Lookup ([LookPath], [Start]): the command is found and run as
//     execvp(3) finds and runs it: PATH with empty, "." and relative
//     entries, PATH unset (/bin:/usr/bin), a file without "#!" run by
//     /bin/sh, EACCES remembered while the search goes on; 127 when
//     nothing was found, 126 when something was found and could not be run.
//   - Signals ([Notify], [Mode]): subscribed from lens's first instruction,
//     queued until the command runs, then passed on exactly once — in
//     [ModeRelay] to the command (which leads its own process group and
//     holds the terminal, as under tini), in [ModeDirect] not at all,
//     because the senders (Slurm, a process group, a terminal) reach the
//     command themselves. Job-control stops of the command stop lens too.
//   - Children: the command gets a parent-death signal (SIGKILL) from the
//     thread that started it, which stays alive until the command exits;
//     as PID 1 lens reaps every orphan without taking the command's status.
//
// The rules, with what reaches the command under Slurm, Kubernetes,
// torchrun and a terminal, are in docs/exec.md.
package supervise
