#!/bin/sh
# Slurm's TaskProlog for lens: slurm.conf's TaskProlog= names this file, installed by the
# guide (docs/taskprolog.md#slurm-conf), which sets LENS and POLICY below (the copy in a
# release archive already names that version's shared binary). It runs
# `lens taskprolog` so that nothing a job sets can stop its tasks:
#  - without GOMEMLIMIT: the Go runtime stops every Go program before main when its value is
#    one it rejects (8G, 8gib, -1), and slurmstepd cancels a task whose TaskProlog fails.
#    Only lens runs without it: the task keeps the job's GOMEMLIMIT (docs/exec.md#gomemlimit);
#  - killed after 2 s whatever happens (lens bounds itself at 1 s: docs/taskprolog.md#bounds);
#  - exit 0 always: any other status cancels the task.
LENS=/shared/tools/lens/VERSION/linux_ARCH/lens
POLICY=/etc/nemo-lens/taskprolog.conf      # empty: LENS_TASKPROLOG_POLICY, else lens's default
unset GOMEMLIMIT
set -- taskprolog
[ -z "$POLICY" ] || set -- taskprolog --policy "$POLICY"
if [ -x /usr/bin/timeout ]; then
	/usr/bin/timeout -s KILL 2 "$LENS" "$@"
else
	"$LENS" "$@"
fi
exit 0
