#!/usr/bin/env bash
# Usage: scripts/launchers-up.sh [LOGFILE]
#
# Installs the real launchers of the end-to-end tests when they are missing:
# Debian's openmpi-bin (Open MPI's mpirun, run as mpirun.openmpi), mpich
# (MPICH's Hydra, run as mpiexec.hydra; it registers mpirun at a lower
# alternatives priority than Open MPI's, 40 to 50, so mpirun stays Open
# MPI's) and python3-torch (torchrun, as /usr/bin/python3 -m
# torch.distributed.run),
# the same way scripts/slurm-up.sh installs Slurm. Must run as root to
# install; with all present it only checks (importing torch: ~2 s of CPU)
# and needs no root.
# apt's output goes to LOGFILE (default /tmp/lens-launchers-apt.log);
# progress and the time taken go to stderr. The tests themselves never
# install anything: e2e/internal/launch finds the launchers or says what is
# missing.
set -euo pipefail

log() { printf 'launchers: %s\n' "$*" >&2; }
apt_log=${1:-/tmp/lens-launchers-apt.log}

missing=()
command -v mpirun.openmpi >/dev/null 2>&1 || missing+=(openmpi-bin)
command -v mpiexec.hydra >/dev/null 2>&1 || missing+=(mpich)
/usr/bin/python3 -c 'import torch' >/dev/null 2>&1 || missing+=(python3-torch)
if ((${#missing[@]} == 0)); then
	log "openmpi-bin, mpich and python3-torch present"
	exit 0
fi
if [[ $(id -u) != 0 ]]; then
	log "ERROR: missing ${missing[*]}; run as root to install them"
	exit 1
fi
start=$SECONDS
log "installing ${missing[*]}; apt output: $apt_log"
apt=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120
	install -y --no-install-recommends "${missing[@]}")
if ! timeout 1200 "${apt[@]}" </dev/null >>"$apt_log" 2>&1; then
	log "apt-get install failed; running apt-get update once and retrying"
	timeout 300 env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 update \
		</dev/null >>"$apt_log" 2>&1 || true
	if ! timeout 1200 "${apt[@]}" </dev/null >>"$apt_log" 2>&1; then
		log "ERROR: apt-get install ${missing[*]} failed; tail of $apt_log:"
		tail -n 20 "$apt_log" >&2
		exit 1
	fi
fi
command -v mpirun.openmpi >/dev/null 2>&1 || { log "ERROR: still no mpirun.openmpi"; exit 1; }
command -v mpiexec.hydra >/dev/null 2>&1 || { log "ERROR: still no mpiexec.hydra"; exit 1; }
/usr/bin/python3 -c 'import torch' >/dev/null 2>&1 || { log "ERROR: /usr/bin/python3 still cannot import torch"; exit 1; }
log "installed ${missing[*]} in $((SECONDS - start)) s"
