# shellcheck shell=bash
# Shared helpers for scripts/slurm-up.sh and scripts/slurm-down.sh.
#
# A throwaway Slurm cluster on localhost for the end-to-end tests: a private
# munged, one slurmctld and one slurmd per node, all state in one directory.
# Why things are done this way (packages, private daemons on loopback, state in a
# temporary directory) is explained in e2e/internal/slurm/cluster.go.
#
# Rules kept here:
#   * every daemon is started in its foreground mode, detached with setsid and
#     put in the background; its PID ($!) is RECORDED in $STATE/pids/<name>;
#   * daemons are only ever signalled through a recorded PID, after checking
#     that /proc/<pid>/cmdline still names the expected program;
#   * nothing is ever killed by name;
#   * every wait is bounded.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin:${PATH:-}
SLURM_E2E_DAEMON_PATH=/usr/sbin:/usr/bin:/sbin:/bin

slurm_log() { printf 'slurm-e2e: %s\n' "$*" >&2; }

# slurm_die MESSAGE [LOGFILE...]: print the message and the tail of each log, exit 1.
slurm_die() {
	local msg=$1
	shift
	slurm_log "ERROR: $msg"
	local f
	for f in "$@"; do
		[[ -f $f ]] || continue
		printf -- '----- tail of %s -----\n' "$f" >&2
		tail -n 40 -- "$f" >&2 || true
	done
	exit 1
}

# slurm_layout STATE_DIR: sets the path variables (STATE_DIR must exist).
# shellcheck disable=SC2034 # used by the scripts that source this file
slurm_layout() {
	STATE=$(cd -- "$1" && pwd -P) || return 1
	ETC=$STATE/etc
	CONF=$ETC/slurm.conf
	MUNGE_DIR=$STATE/munge
	MUNGE_SOCK=$MUNGE_DIR/munge.socket.2
	MUNGE_KEY=$MUNGE_DIR/munge.key
	LOGDIR=$STATE/log
	RUNDIR=$STATE/run
	PIDS=$STATE/pids
	SPOOL=$STATE/spool
	CTLD_STATE=$STATE/ctld-state
	ENV_FILE=$STATE/env
	DBD_CONF=$ETC/slurmdbd.conf
	DB_DIR=$STATE/mariadb
	DB_DATA=$DB_DIR/data
	DB_SOCK=$DB_DIR/mariadb.sock
	SLURM_CONF=$CONF
	export SLURM_CONF
}

# slurm_prog_of PID: basename of the first word of /proc/PID/cmdline ("" if
# the process is gone or a zombie).
slurm_prog_of() {
	local first=
	[[ $1 =~ ^[0-9]+$ ]] || return 0
	IFS= read -r -d "" first 2>/dev/null <"/proc/$1/cmdline" || true
	printf '%s' "${first##*/}"
}

# slurm_alive_as PID PROG: true if PID runs PROG.
slurm_alive_as() {
	[[ -n $1 && -n $2 ]] || return 1
	[[ "$(slurm_prog_of "$1")" == "$2" ]]
}

# slurm_recorded NAME: prints "PID PROG" of a recorded daemon (empty if none).
slurm_recorded() {
	local f=$PIDS/$1
	[[ -f $f ]] || return 0
	local pid prog
	read -r pid prog <"$f" || true
	[[ -n ${pid:-} ]] && printf '%s %s\n' "$pid" "${prog:-}"
	return 0
}

# slurm_recorded_alive NAME: true if the recorded daemon NAME still runs its program.
slurm_recorded_alive() {
	local rec pid prog
	rec=$(slurm_recorded "$1")
	[[ -n $rec ]] || return 1
	read -r pid prog <<<"$rec"
	slurm_alive_as "$pid" "$prog"
}

# slurm_recorded_names: recorded daemon names, newest kind first
# (slurmd-<node>..., slurmdbd, mariadbd, slurmctld, munged). Exact names only: no "slurmd*" glob
# (it would also match slurmdbd).
slurm_recorded_names() {
	local f
	for f in "$PIDS"/slurmd-*; do
		[[ -f $f ]] && printf '%s\n' "${f##*/}"
	done
	for f in slurmdbd mariadbd slurmctld munged; do
		[[ -f $PIDS/$f ]] && printf '%s\n' "$f"
	done
	return 0
}

# slurm_start_daemon NAME PROG LOGFILE ARGS...: start PROG in the background
# in its own session with a clean environment, record its PID, and wait
# (bounded) until the PID has exec'd into PROG.
slurm_start_daemon() {
	local name=$1 prog=$2 logf=$3
	shift 3
	mkdir -p "$PIDS"
	setsid env -i PATH="$SLURM_E2E_DAEMON_PATH" SLURM_CONF="$CONF" \
		"$prog" "$@" </dev/null >>"$logf" 2>&1 &
	local pid=$!
	printf '%s %s\n' "$pid" "$prog" >"$PIDS/$name"
	local i
	for ((i = 0; i < 100; i++)); do
		slurm_alive_as "$pid" "$prog" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.02
	done
	slurm_alive_as "$pid" "$prog" && return 0
	slurm_die "$name ($prog, pid $pid) did not start" "$logf"
}

# slurm_check_alive NAME LOG...: fail early, with the logs, if a recorded daemon died.
slurm_check_alive() {
	local name=$1
	shift
	slurm_recorded_alive "$name" && return 0
	slurm_die "daemon $name ($(slurm_recorded "$name")) died" "$@"
}

# slurm_stop_recorded NAME...: TERM the recorded daemons (after re-checking
# their cmdline), wait up to ~7.5 s, then KILL; forget their records.
slurm_stop_recorded() {
	local name rec pid prog
	local -a pids=() progs=() names=()
	for name in "$@"; do
		rec=$(slurm_recorded "$name")
		if [[ -z $rec ]]; then
			continue
		fi
		read -r pid prog <<<"$rec"
		if slurm_alive_as "$pid" "$prog"; then
			slurm_log "stopping $name (pid $pid)"
			kill -TERM "$pid" 2>/dev/null || true
			pids+=("$pid")
			progs+=("$prog")
			names+=("$name")
		else
			rm -f -- "$PIDS/$name"
		fi
	done
	((${#pids[@]} > 0)) || return 0
	local i j left
	for ((i = 0; i < 75; i++)); do
		left=0
		for j in "${!pids[@]}"; do
			slurm_alive_as "${pids[j]}" "${progs[j]}" && left=1
		done
		((left)) || break
		sleep 0.1
	done
	for j in "${!pids[@]}"; do
		if slurm_alive_as "${pids[j]}" "${progs[j]}"; then
			slurm_log "WARNING: ${names[j]} (pid ${pids[j]}) ignored TERM for 7.5 s; sending KILL"
			kill -KILL "${pids[j]}" 2>/dev/null || true
		fi
	done
	for ((i = 0; i < 30; i++)); do
		left=0
		for j in "${!pids[@]}"; do
			slurm_alive_as "${pids[j]}" "${progs[j]}" && left=1
		done
		((left)) || break
		sleep 0.1
	done
	for j in "${!pids[@]}"; do
		if slurm_alive_as "${pids[j]}" "${progs[j]}"; then
			slurm_log "WARNING: ${names[j]} (pid ${pids[j]}) survived KILL"
		else
			rm -f -- "$PIDS/${names[j]}"
		fi
	done
	return 0
}

# slurm_cancel_all_jobs: while slurmctld is alive, cancel every job of this
# cluster and wait up to ~15 s for the queue to empty.
slurm_cancel_all_jobs() {
	slurm_recorded_alive slurmctld || return 0
	local ids i
	ids=$(timeout 10 squeue -h -o '%A' 2>/dev/null | sort -u | tr '\n' ' ') || true
	if [[ -n ${ids// /} ]]; then
		slurm_log "cancelling jobs: $ids"
		# shellcheck disable=SC2086
		timeout 10 scancel $ids 2>/dev/null || true
	fi
	for ((i = 0; i < 75; i++)); do
		ids=$(timeout 5 squeue -h -o '%A' 2>/dev/null) || return 0
		[[ -z $ids ]] && return 0
		sleep 0.2
	done
	slurm_log "WARNING: queue not empty after 15 s: ${ids//$'\n'/ }"
}

# slurm_start_accounting CLUSTER DBD_PORT DB_PORT: bring up (idempotently) the
# private MariaDB, slurmdbd and the cluster's association. Writes
# slurmdbd.conf (0600, next to slurm.conf: slurmdbd finds it through
# SLURM_CONF).
#
# The database is a throwaway: MariaDB starts on an empty data directory
# without grant tables (--skip-grant-tables: no mariadb-install-db, which
# took 8 s of the 15 s bring-up on a loaded 2-core machine, and no users),
# listening on 127.0.0.1 only, without fsync. Anyone on this host can read
# or change it while it runs; it holds the test jobs' accounting only.
slurm_start_accounting() {
	local cluster=$1 dbd_port=$2 db_port=$3 i ok t0 phases=
	t0=$(date +%s%N)
	# phase NAME: appends "NAME <ms since the last phase>" to $phases.
	phase() {
		local now
		now=$(date +%s%N)
		phases+=" $1 $(((now - t0) / 1000000))ms"
		t0=$now
	}
	mkdir -p "$DB_DATA"
	chmod 0700 "$DB_DIR"
	local db_logs=("$LOGDIR/mariadb.log" "$LOGDIR/mariadb.out")
	if ! slurm_recorded_alive mariadbd; then
		port_busy "$db_port" && slurm_die "port $db_port (MariaDB) is already in use by another process; set LENS_SLURM_PORT to use other ports"
		slurm_start_daemon mariadbd mariadbd "$LOGDIR/mariadb.out" --no-defaults --user=root \
			--datadir="$DB_DATA" --socket="$DB_SOCK" --port="$db_port" --bind-address=127.0.0.1 \
			--pid-file="$DB_DIR/mariadbd.pid" --log-error="$LOGDIR/mariadb.log" \
			--skip-grant-tables --skip-name-resolve --skip-log-bin \
			--innodb-flush-method=nosync --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 \
			--innodb-buffer-pool-size=64M --innodb-log-file-size=16M
	fi
	ok=0
	for ((i = 0; i < 300; i++)); do # 0.1 s x 300 = 30 s
		slurm_check_alive mariadbd "${db_logs[@]}"
		if timeout 10 mariadb --no-defaults -S "$DB_SOCK" -e 'select 1' >/dev/null 2>&1; then
			ok=1
			break
		fi
		sleep 0.1
	done
	((ok)) || slurm_die "MariaDB not answering on $DB_SOCK after 30 s" "${db_logs[@]}"
	phase mariadbd

	local new=$DBD_CONF.new
	(
		umask 077
		gen_dbd_conf "$dbd_port" "$db_port" >"$new"
	)
	if [[ -f $DBD_CONF ]] && cmp -s -- "$new" "$DBD_CONF"; then
		rm -f -- "$new"
	else
		mv -f -- "$new" "$DBD_CONF"
		slurm_stop_recorded slurmdbd
	fi
	local dbd_logs=("$LOGDIR/slurmdbd.log" "$LOGDIR/slurmdbd.out" "${db_logs[@]}")
	if ! slurm_recorded_alive slurmdbd; then
		port_busy "$dbd_port" && slurm_die "port $dbd_port (slurmdbd) is already in use by another process; set LENS_SLURM_PORT to use other ports"
		slurm_start_daemon slurmdbd slurmdbd "$LOGDIR/slurmdbd.out" -D
	fi
	ok=0
	local clusters=
	for ((i = 0; i < 150; i++)); do # 0.2 s x 150 = 30 s
		slurm_check_alive slurmdbd "${dbd_logs[@]}"
		if clusters=$(timeout 5 sacctmgr -n -P show cluster format=cluster 2>/dev/null); then
			ok=1
			break
		fi
		sleep 0.2
	done
	((ok)) || slurm_die "slurmdbd: sacctmgr show cluster failed for 30 s" "${dbd_logs[@]}"
	phase slurmdbd
	# Adding the cluster also creates root's association (account root),
	# which AccountingStorageEnforce=associations requires for jobs of root.
	if ! grep -qx -- "$cluster" <<<"$clusters"; then
		timeout 30 sacctmgr -i add cluster "$cluster" >>"$LOGDIR/sacctmgr.log" 2>&1 ||
			slurm_die "sacctmgr add cluster $cluster failed" "$LOGDIR/sacctmgr.log" "${dbd_logs[@]}"
		phase add-cluster
	fi
	slurm_log "accounting phases:$phases"
}

# gen_dbd_conf DBD_PORT DB_PORT: slurmdbd.conf on stdout.
gen_dbd_conf() {
	cat <<EOF
# Generated by scripts/slurm-up.sh; do not edit (rewritten on every start).
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
DbdHost=localhost
DbdPort=$1
SlurmUser=root
DebugLevel=info
LogFile=$LOGDIR/slurmdbd.log
PidFile=$RUNDIR/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$2
StorageUser=slurm
StorageLoc=slurm_acct_db
EOF
}

# port_busy PORT: something listens on 127.0.0.1:PORT (called before starting
# ours, so it is not ours).
port_busy() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# slurm_report_stepds: report (never kill) slurmstepd processes left behind.
slurm_report_stepds() {
	local d first cmd
	for d in /proc/[0-9]*; do
		first=
		IFS= read -r -d "" first 2>/dev/null <"$d/cmdline" || true
		case ${first##*/} in
		slurmstepd*)
			cmd=$(tr '\0' ' ' 2>/dev/null <"$d/cmdline") || true
			slurm_log "WARNING: slurmstepd left behind: pid ${d#/proc/}: $cmd"
			;;
		esac
	done
	return 0
}
