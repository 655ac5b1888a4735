#!/usr/bin/env bash
# Usage: scripts/slurm-up.sh STATE_DIR [NODES]
#
# Brings up (idempotently) a throwaway Slurm cluster on localhost whose whole
# state lives in STATE_DIR: a private munged, slurmctld and NODES slurmd
# (NODES = 1: node "localhost"; NODES = 2: nodes node[1-2] on one host).
# Must run as root. Installs Debian's munge/slurm packages only if missing.
#
# Daemon PIDs are recorded in STATE_DIR/pids/; scripts/slurm-down.sh stops
# exactly those. Running it again with everything up is a no-op (~0.05 s);
# running it with another NODES rewrites slurm.conf and restarts slurmctld and
# slurmd (queued jobs are lost, as with any config change).
#
# On success the last line on stdout is SLURM_CONF=<STATE_DIR>/etc/slurm.conf
# (also written to STATE_DIR/env); progress goes to stderr.
#
# Environment: LENS_SLURM_CLUSTER (ClusterName, default lensprobe),
# LENS_SLURM_PORT (SlurmctldPort, default 6817; slurmd uses +1, or +101.. for
# the two-node layout; slurmdbd +2 and MariaDB +3 with accounting),
# LENS_SLURM_TASKPROLOG (opt-in: an absolute program
# path written as TaskProlog=PATH into slurm.conf; every task of every step,
# the batch step included, then runs it first: docs/taskprolog.md),
# LENS_SLURM_ACCOUNTING=1 (opt-in: real accounting, i.e. slurmdbd backed by a
# private MariaDB whose data, socket and logs live in STATE_DIR; installs
# Debian's mariadb-server and slurmdbd if missing; adds the cluster to it
# (root's association), and PrologFlags=Contain for the extern step). Switching it
# on or off is a config change (restart, queued jobs lost).
set -euo pipefail
umask 022

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=scripts/slurm-lib.sh
. "$here/slurm-lib.sh"

if [[ $# -lt 1 || $# -gt 2 || -z $1 ]]; then
	echo "usage: $0 STATE_DIR [NODES]" >&2
	exit 2
fi
NODES=${2:-1}
[[ $NODES == 1 || $NODES == 2 ]] || slurm_die "NODES must be 1 or 2, got '$NODES'"
[[ $(id -u) == 0 ]] || slurm_die "must run as root (apt, daemons and jobs run as root)"

start_ns=$(date +%s%N)
mkdir -p -- "$1"
slurm_layout "$1"
CLUSTER=${LENS_SLURM_CLUSTER:-lensprobe}
CTLD_PORT=${LENS_SLURM_PORT:-6817}
ACCOUNTING=${LENS_SLURM_ACCOUNTING:-0}
[[ $ACCOUNTING == 0 || $ACCOUNTING == 1 ]] || slurm_die "LENS_SLURM_ACCOUNTING must be 0 or 1, got '$ACCOUNTING'"
[[ $CLUSTER =~ ^[a-z0-9][a-z0-9_-]*$ ]] || slurm_die "LENS_SLURM_CLUSTER must be lowercase [a-z0-9_-], got '$CLUSTER'"
[[ $CTLD_PORT =~ ^[0-9]+$ ]] || slurm_die "LENS_SLURM_PORT must be a number"
TASK_PROLOG=${LENS_SLURM_TASKPROLOG:-}
[[ -z $TASK_PROLOG || ($TASK_PROLOG == /* && $TASK_PROLOG != *[[:space:]]*) ]] ||
	slurm_die "LENS_SLURM_TASKPROLOG must be an absolute path without spaces, got '$TASK_PROLOG'"
DBD_PORT=$((CTLD_PORT + 2))
DB_PORT=$((CTLD_PORT + 3))
((${#DB_SOCK} < 100)) || slurm_die "state dir path too long for a unix socket: $DB_SOCK"
((${#MUNGE_SOCK} < 100)) || slurm_die "state dir path too long for a unix socket: $MUNGE_SOCK"

mkdir -p "$ETC" "$MUNGE_DIR" "$LOGDIR" "$RUNDIR" "$PIDS" "$SPOOL" "$CTLD_STATE"
# munged refuses group/world-writable directories on its paths (§4).
chmod 0755 "$STATE" "$ETC" "$MUNGE_DIR" "$LOGDIR" "$RUNDIR" "$PIDS" "$SPOOL" "$CTLD_STATE"

# ---------------------------------------------------------------- packages
install_packages() {
	local b
	local -a missing=() pkgs=(munge slurmctld slurmd slurm-client)
	local -a bins=(munged munge unmunge slurmctld slurmd slurmstepd srun sbatch salloc sinfo squeue scontrol scancel)
	if ((ACCOUNTING)); then
		pkgs+=(mariadb-server slurmdbd)
		bins+=(mariadbd mariadb slurmdbd sacctmgr sacct)
	fi
	for b in "${bins[@]}"; do
		command -v "$b" >/dev/null 2>&1 || missing+=("$b")
	done
	((${#missing[@]} == 0)) && return 0
	local apt_log=$LOGDIR/apt.log
	slurm_log "installing ${pkgs[*]} (missing: ${missing[*]}); apt output: $apt_log"
	local -a apt=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120
		install -y --no-install-recommends "${pkgs[@]}")
	if ! timeout 600 "${apt[@]}" </dev/null >>"$apt_log" 2>&1; then
		slurm_log "apt-get install failed; running apt-get update once and retrying"
		timeout 300 env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 update \
			</dev/null >>"$apt_log" 2>&1 || true
		timeout 600 "${apt[@]}" </dev/null >>"$apt_log" 2>&1 ||
			slurm_die "apt-get install ${pkgs[*]} failed" "$apt_log"
	fi
	for b in "${missing[@]}"; do
		command -v "$b" >/dev/null 2>&1 || slurm_die "still missing after install: $b" "$apt_log"
	done
}
install_packages

# ---------------------------------------------------------------- munge key
if [[ ! -s $MUNGE_KEY ]]; then
	(
		umask 077
		head -c 1024 /dev/urandom >"$MUNGE_KEY.tmp"
		mv -f -- "$MUNGE_KEY.tmp" "$MUNGE_KEY"
	)
fi
chmod 0400 "$MUNGE_KEY"

# ---------------------------------------------------------------- slurm.conf
if ((NODES == 1)); then
	NODE_NAMES=(localhost)
	NODE_LIST=localhost
else
	NODE_NAMES=(node1 node2)
	NODE_LIST='node[1-2]'
fi

gen_conf() {
	local cpus mem comm
	cpus=$(nproc)
	((cpus >= 4)) || cpus=4 # config_overrides tolerates more CPUs than the hardware has
	mem=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
	((NODES == 2)) && mem=$((mem / 2))
	if getent hosts "$(hostname)" >/dev/null 2>&1; then
		comm=NoCtldInAddrAny,NoInAddrAny
	else
		comm=NoCtldInAddrAny
	fi
	cat <<EOF
# Generated by scripts/slurm-up.sh; do not edit (rewritten on every start).
ClusterName=$CLUSTER
SlurmctldHost=localhost
SlurmctldPort=$CTLD_PORT
SlurmdPort=$((CTLD_PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCK
StateSaveLocation=$CTLD_STATE
SlurmdSpoolDir=$SPOOL/%n
SlurmctldPidFile=$RUNDIR/slurmctld.pid
SlurmdPidFile=$RUNDIR/slurmd-%n.pid
SlurmctldLogFile=$LOGDIR/slurmctld.log
SlurmdLogFile=$LOGDIR/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
CommunicationParameters=$comm
ReturnToService=2
SlurmdParameters=config_overrides
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
TopologyPlugin=topology/none
EOF
	if ((ACCOUNTING)); then
		# Real accounting (slurmdbd + MariaDB, §3.4 of the e2e notes). The
		# munge socket doubles as AccountingStoragePass: without it ctld and
		# sacctmgr try the system socket. PrologFlags=Contain gives every job
		# its extern step (a row of its own in sacct).
		cat <<EOF
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$MUNGE_SOCK
AccountingStorageEnforce=associations
PrologFlags=Contain
EOF
	else
		echo "JobAcctGatherType=jobacct_gather/none"
		echo "AccountingStorageType=accounting_storage/none"
	fi
	if ((NODES == 1)); then
		echo "NodeName=localhost NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=$cpus RealMemory=$mem State=UNKNOWN"
	else
		echo "NodeName=node[1-2] NodeAddr=127.0.0.1 NodeHostname=localhost Port=[$((CTLD_PORT + 101))-$((CTLD_PORT + 102))] CPUs=$cpus RealMemory=$mem State=UNKNOWN"
	fi
	echo "PartitionName=debug Nodes=$NODE_LIST Default=YES MaxTime=INFINITE State=UP"
	if [[ -n $TASK_PROLOG ]]; then
		echo "TaskProlog=$TASK_PROLOG"
	fi
}

conf_changed=0
gen_conf >"$CONF.new"
if [[ -f $CONF ]] && cmp -s -- "$CONF.new" "$CONF"; then
	rm -f -- "$CONF.new"
else
	mv -f -- "$CONF.new" "$CONF"
	conf_changed=1
fi
for n in "${NODE_NAMES[@]}"; do
	mkdir -p "$SPOOL/$n"
done

# ---------------------------------------------------------------- munged
munge_ok() {
	timeout 5 munge -n -S "$MUNGE_SOCK" 2>/dev/null | timeout 5 unmunge -S "$MUNGE_SOCK" >/dev/null 2>&1
}
if ! slurm_recorded_alive munged; then
	slurm_start_daemon munged munged "$LOGDIR/munged.out" -F --force \
		--socket="$MUNGE_SOCK" --key-file="$MUNGE_KEY" --pid-file="$MUNGE_DIR/munged.pid" \
		--log-file="$LOGDIR/munged.log" --seed-file="$MUNGE_DIR/munged.seed"
fi
ok=0
for ((i = 0; i < 100; i++)); do # 10 s
	slurm_check_alive munged "$LOGDIR/munged.log" "$LOGDIR/munged.out"
	if munge_ok; then
		ok=1
		break
	fi
	sleep 0.1
done
((ok)) || slurm_die "munge round trip through $MUNGE_SOCK failed for 10 s" "$LOGDIR/munged.log" "$LOGDIR/munged.out"

# ---------------------------------------------------------------- accounting (opt-in)
# MariaDB, slurmdbd and the associations come before slurmctld, which
# registers with slurmdbd when it starts (slurm-lib.sh: slurm_start_accounting).
if ((ACCOUNTING)); then
	acct_start_ns=$(date +%s%N)
	slurm_start_accounting "$CLUSTER" "$DBD_PORT" "$DB_PORT"
	slurm_log "accounting (MariaDB + slurmdbd + associations) ready in $((($(date +%s%N) - acct_start_ns) / 1000000)) ms"
else
	slurm_stop_recorded slurmdbd mariadbd # switched off: the config change restarts ctld without it
fi

# ---------------------------------------------------------------- restart on config change
wanted_slurmd() {
	local n
	for n in "${NODE_NAMES[@]}"; do
		[[ $1 == "slurmd-$n" ]] && return 0
	done
	return 1
}
stale=()
while IFS= read -r name; do
	case $name in
	slurmd-*)
		if ((conf_changed)) || ! wanted_slurmd "$name"; then
			stale+=("$name")
		fi
		;;
	esac
done < <(slurm_recorded_names)
if ((conf_changed)) && slurm_recorded_alive slurmctld; then
	slurm_log "slurm.conf changed: restarting slurmctld and slurmd"
	slurm_cancel_all_jobs
fi
((${#stale[@]} == 0)) || slurm_stop_recorded "${stale[@]}"
((conf_changed)) && slurm_stop_recorded slurmctld

# ---------------------------------------------------------------- slurmctld
ctld_logs=("$LOGDIR/slurmctld.log" "$LOGDIR/slurmctld.out")
if ! slurm_recorded_alive slurmctld; then
	port_busy "$CTLD_PORT" && slurm_die "port $CTLD_PORT (SlurmctldPort) is already in use by another process (another Slurm?); set LENS_SLURM_PORT to use other ports"
	slurm_start_daemon slurmctld slurmctld "$LOGDIR/slurmctld.out" -D -c -i -f "$CONF"
fi
ok=0
for ((i = 0; i < 150; i++)); do # 30 s
	slurm_check_alive slurmctld "${ctld_logs[@]}"
	if timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP'; then
		ok=1
		break
	fi
	sleep 0.2
done
((ok)) || slurm_die "scontrol ping: slurmctld not UP after 30 s" "${ctld_logs[@]}"

# ---------------------------------------------------------------- slurmd
for n in "${NODE_NAMES[@]}"; do
	if ! slurm_recorded_alive "slurmd-$n"; then
		if ((NODES == 1)); then port=$((CTLD_PORT + 1)); else port=$((CTLD_PORT + 100 + ${n#node})); fi
		port_busy "$port" && slurm_die "port $port (slurmd $n) is already in use by another process; set LENS_SLURM_PORT to use other ports"
		slurm_start_daemon "slurmd-$n" slurmd "$LOGDIR/slurmd-$n.out" -D -N "$n" -f "$CONF"
	fi
done

# ---------------------------------------------------------------- wait for idle nodes
all_logs=("$LOGDIR/munged.log" "${ctld_logs[@]}")
for n in "${NODE_NAMES[@]}"; do
	all_logs+=("$LOGDIR/slurmd-$n.log" "$LOGDIR/slurmd-$n.out")
done
resumed=0
ready=0
last=
for ((i = 0; i < 300; i++)); do # 0.2 s x 300 = 60 s
	slurm_check_alive munged "${all_logs[@]}"
	slurm_check_alive slurmctld "${all_logs[@]}"
	for n in "${NODE_NAMES[@]}"; do
		slurm_check_alive "slurmd-$n" "${all_logs[@]}"
	done
	last=$(timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null) || last=
	up=0
	bad=0
	for n in "${NODE_NAMES[@]}"; do
		st=$(awk -v n="$n" '$1 == n {print $2; exit}' <<<"$last")
		case $st in
		idle | mixed | allocated | completing | planned) up=$((up + 1)) ;;
		down* | drain*) bad=1 ;;
		esac
	done
	if ((up == ${#NODE_NAMES[@]})); then
		ready=1
		break
	fi
	if ((bad && !resumed)); then
		slurm_log "node(s) down/drained: ${last//$'\n'/; }; resuming once"
		timeout 5 scontrol update NodeName="$NODE_LIST" State=RESUME >&2 || true
		resumed=1
	fi
	sleep 0.2
done
((ready)) || slurm_die "nodes not idle after 60 s (sinfo: ${last//$'\n'/; })" "${all_logs[@]}"

printf 'export SLURM_CONF=%q\n' "$CONF" >"$ENV_FILE"
end_ns=$(date +%s%N)
slurm_log "cluster '$CLUSTER' up with $NODES node(s) in $(((end_ns - start_ns) / 1000000)) ms (state: $STATE)"
echo "SLURM_CONF=$CONF"
