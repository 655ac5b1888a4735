#!/usr/bin/env bash
# Usage: scripts/slurm-down.sh STATE_DIR
#
# Stops the cluster that scripts/slurm-up.sh started in STATE_DIR:
#   1. while slurmctld is alive, cancels every job and waits (<= 15 s) for the
#      queue to empty, so that the slurmstepd processes exit;
#   2. sends TERM to each RECORDED daemon, newest kind first (slurmd(s),
#      slurmctld, slurmdbd, mariadbd, munged), re-checking /proc/<pid>/cmdline before signalling,
#      and KILL after ~7.5 s;
#   3. reports (never kills) slurmstepd processes left behind.
# Never kills anything by name. Idempotent: with nothing running it is a no-op.
set -euo pipefail
umask 022

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=scripts/slurm-lib.sh
. "$here/slurm-lib.sh"

if [[ $# -ne 1 || -z $1 ]]; then
	echo "usage: $0 STATE_DIR" >&2
	exit 2
fi
if [[ ! -d $1 ]]; then
	slurm_log "no state dir $1: nothing to stop"
	exit 0
fi
start_ns=$(date +%s%N)
slurm_layout "$1"
[[ -d $PIDS ]] || {
	slurm_log "no recorded daemons in $STATE: nothing to stop"
	exit 0
}

slurm_cancel_all_jobs

mapfile -t slurmds < <(slurm_recorded_names | grep '^slurmd-' || true)
((${#slurmds[@]} == 0)) || slurm_stop_recorded "${slurmds[@]}"
slurm_stop_recorded slurmctld
slurm_stop_recorded slurmdbd
slurm_stop_recorded mariadbd
slurm_stop_recorded munged

rc=0
while IFS= read -r name; do
	slurm_log "WARNING: recorded daemon still alive: $name ($(slurm_recorded "$name"))"
	rc=1
done < <(
	slurm_recorded_names | while IFS= read -r n; do
		slurm_recorded_alive "$n" && echo "$n"
	done
)
slurm_report_stepds
end_ns=$(date +%s%N)
slurm_log "stopped in $(((end_ns - start_ns) / 1000000)) ms (state: $STATE)"
exit "$rc"
