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
//   - Signals ([Notify], [Mode], [ResolveMode]): subscribed from lens's
//     first instruction, queued until the command runs, then passed on
//     exactly once — in [ModeAside] lens leaves its process group to the
//     command, so group and terminal signals reach the command directly,
//     and passes on what was sent to lens's pid; in [ModeRelay] the command
//     leads its own process group and holds the terminal (as under tini)
//     and lens passes every signal on; in [ModeDirect] (a Slurm step) not
//     at all, because slurmstepd reaches the command itself. Job-control
//     stops of the command stop lens too. Inherited ignored SIGHUP, SIGINT
//     and job-control signals stay ignored in the command. lens ignores
//     SIGTTOU (its own terminal writes from the background would stop it)
//     and passes on the synchronous signals another process sends; the
//     fate of every signal 1-64 is in docs/exec.md#signal-fates.
//   - Children: the command gets a parent-death signal (SIGKILL) from the
//     thread that started it, which stays alive until the command exits;
//     as PID 1 lens reaps every orphan without taking the command's status.
//
// The rules, with what reaches the command under Slurm, Kubernetes,
// torchrun and a terminal, are in docs/exec.md.
package supervise
