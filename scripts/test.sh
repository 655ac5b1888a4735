#!/usr/bin/env bash
# All tests of lens-go, as CI runs them (.ci/run calls this script). Stages, in order:
#   prereq       Go version, disk; installs Debian's valgrind and zsh if missing (as root)
#   gofmt        gofmt -l on every .go file of the repository
#   vet          go vet: the root (with the heavy tests' files: -tags heavy), e2e,
#                tools/scale and tools/mutation modules
#   staticcheck  builds .bin/staticcheck from the pin in tools/lint (once; later
#                runs only check it is up to date), runs it on the root (-tags
#                heavy), e2e, tools/scale and tools/mutation modules
#   unit         go test -race on the root module (what a user's plain
#                go test -race ./... runs: no test of minutes)
#   heavy        the minutes-long tests, in files named *_heavy_test.go behind
#                //go:build heavy (release builds, 100,000 spans or steps):
#                go test -race -tags heavy -run '^(their names)$' -timeout 40m,
#                package by package (docs/testing.md#heavy)
#   release      scripts/release-check.sh: the release archives built twice
#                (byte-identical), the version stamp, the arm64 binary under
#                qemu-aarch64-static and the amd64 binary in an empty root, the
#                module files under Lmod (installs Debian's qemu-user-static and
#                lmod as root if missing)
#   collector    the nested collector/ module (docs/collector.md): go vet and go test
#                -race of the lens processor; .bin/lens-collector (the distribution,
#                scripts/build-collector.sh; cold: the Prometheus receiver's module
#                graph, docs/testing.md#collector), its in-process tests,
#                its release archive (scripts/release-check.sh --collector)
#   fuzz         FUZZ_TARGETS fuzz targets (default 6 of all of them; the commit picks
#                which, rotating) for a fixed time each (FUZZTIME, default 15s)
#   backends     builds the real backends of the e2e tests from their Go module pins
#                (scripts/build-backends.sh): .bin/jaeger and .bin/otelcol (tools/jaeger),
#                .bin/prometheus (tools/prometheus); --stage jaeger is an alias
#   e2e          the end-to-end tests in e2e/, package by package with -v (output
#                streamed, and kept in .bin/e2e.log): a real Slurm on localhost
#                (scripts/slurm-up.sh installs Debian's munge and slurm packages as
#                root if missing; they stay installed), the real Jaeger, Prometheus
#                and log receiver (OpenTelemetry Collector), and .bin/lens-collector
# Stages that run only when named with --stage (not part of the default run):
#   mutation     scripts/mutation.sh: mutation testing with gremlins (pinned in
#                tools/mutation, built into .bin/), the kill rate per package
#                (docs/testing.md, "Mutation testing"; slow: about 1.5 h on a
#                loaded 2-core machine); MUTATION_PKGS=all for every package
# Every stage prints a banner with the time since the start, and its duration at
# the end; a table of all stage durations comes last, also when a stage fails.
# Each stage's output is also kept in .bin/logs/<stage>.log.
# Cost (docs/testing.md, "What the test run costs"), measured on a 2-core machine on
# 2026-12-03: cold 22 min beside a light job (43 min beside heavy builds), warm about
# 9 min; ~6 GB of Go caches. The heavy stage (2026-12-06, warm, load 20-30): 17.5 min.
#
# Usage: scripts/test.sh [--stage NAME[,NAME...]]... [--list]
#   --stage   run only these stages (in the order above), e.g. --stage fuzz or
#             --stage gofmt,vet,staticcheck
# Environment:
#   FUZZTIME          budget per fuzz target (default 15s; a Go duration, or Nx for
#                     an execution count); FUZZ_PARALLEL workers (default 2)
#   FUZZ_TARGETS      how many targets the fuzz stage fuzzes (default 6; "all");
#                     the commit hash picks which (scripts/fuzz-lib.sh, fuzz_subset).
#                     Long fuzzing of every target: scripts/fuzz-long.sh
#   SKIP_E2E=1        skip the backends and e2e stages (refused when CI=true: CI
#                     must run them; .ci/run sets CI=true)
#   CI=true           also makes the e2e tests fail instead of skipping when
#                     something they need is missing
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# shellcheck source=scripts/fuzz-lib.sh
. "$root/scripts/fuzz-lib.sh"
export GOFLAGS=${GOFLAGS:-}

all_stages=(prereq gofmt vet staticcheck unit heavy release collector fuzz backends e2e)
# Stages run only when named with --stage, after the others.
extra_stages=(mutation)
declare -A describe=(
	[prereq]="Go toolchain, disk space, valgrind, zsh"
	[gofmt]="gofmt -l on all .go files"
	[vet]="go vet ./... (root with -tags heavy, e2e, tools/scale and tools/mutation modules)"
	[staticcheck]="build .bin/staticcheck (tools/lint pin), run it on the root (-tags heavy), e2e, tools/scale and tools/mutation modules"
	[unit]="go test -race -count=1 ./... (root module)"
	[heavy]="go test -race -tags heavy on the tests of *_heavy_test.go (release builds, 100,000 spans), -timeout 40m"
	[release]="release archives twice (identical), version stamp, arm64 smoke under qemu-user, amd64 in an empty root"
	[collector]="collector/ module: the lens processor (go vet, go test -race), .bin/lens-collector, its tests and release archive"
	[fuzz]="each fuzz target for a fixed time"
	[backends]="build .bin/jaeger, .bin/otelcol, .bin/prometheus (tools/jaeger, tools/prometheus pins; cold: minutes, warm: seconds)"
	[e2e]="end-to-end tests: real Slurm on localhost, real Jaeger, Prometheus, log receiver (output streamed, also in .bin/e2e.log)"
	[mutation]="only with --stage: mutation testing (gremlins, tools/mutation pin), kill rate per package (slow)"
)

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

declare -A want=()
while (($#)); do
	case $1 in
	--stage | --stages)
		[[ $# -ge 2 ]] || {
			echo "test.sh: $1 needs a stage name (one of: ${all_stages[*]})" >&2
			exit 2
		}
		IFS=, read -r -a names <<<"$2"
		for n in "${names[@]}"; do
			[[ $n == jaeger ]] && n=backends # the stage's old name
			[[ -n ${describe[$n]:-} ]] || {
				echo "test.sh: unknown stage '$n' (stages: ${all_stages[*]} ${extra_stages[*]})" >&2
				exit 2
			}
			want[$n]=1
		done
		shift 2
		;;
	--stage=* | --stages=*)
		set -- "${1%%=*}" "${1#*=}" "${@:2}"
		;;
	--list)
		for n in "${all_stages[@]}" "${extra_stages[@]}"; do printf '%-12s %s\n' "$n" "${describe[$n]}"; done
		exit 0
		;;
	-h | --help)
		usage
		exit 0
		;;
	*)
		echo "test.sh: unknown argument '$1' (see --help)" >&2
		exit 2
		;;
	esac
done
if ((${#want[@]} == 0)); then
	for n in "${all_stages[@]}"; do want[$n]=1; done
fi

if [[ ${SKIP_E2E:-} == 1 ]]; then
	if [[ ${CI:-} == true ]]; then
		echo "test.sh: SKIP_E2E=1 is refused when CI=true: CI must run the end-to-end tests; running them" >&2
	else
		skip_e2e=1
	fi
fi

fuzztime=${FUZZTIME:-15s}
fuzz_targets_n=${FUZZ_TARGETS:-6}
fuzz_parallel=${FUZZ_PARALLEL:-2}
logdir=$root/.bin/logs
mkdir -p "$logdir"

# ---------------------------------------------------------------- clock, banners, summary
# SECONDS counts from the start of this script.
hms() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
stage_order=()
declare -A stage_result=() stage_secs=()
stage=
stage_start=0
stage_log=/dev/null

stage_begin() { # NAME TICKER_FUNC
	stage=$1
	stage_start=$SECONDS
	stage_log=$logdir/$1.log
	[[ $1 == e2e ]] && stage_log=$root/.bin/e2e.log
	: >"$stage_log"
	stage_order+=("$1")
	printf '\n==== [+%ds] stage %s: %s\n' "$SECONDS" "$1" "${describe[$1]}"
	ticker_start "$2"
}
stage_end() {
	ticker_stop
	local secs=$((SECONDS - stage_start))
	stage_result[$stage]=ok
	stage_secs[$stage]=$secs
	printf -- '---- [+%ds] stage %s: %s in %ds (%s)\n' "$SECONDS" "$stage" "${stage_result[$stage]}" "$secs" "$(hms "$secs")"
	stage=
	stage_log=/dev/null
}
stage_skip() { # NAME REASON
	stage_order+=("$1")
	stage_result[$1]="skipped: $2"
	printf '\n==== [+%ds] stage %s: skipped (%s)\n' "$SECONDS" "$1" "$2"
}

summary() {
	local rc=$1 n
	((${#stage_order[@]})) || return 0
	printf '\n==== [+%ds] summary\n' "$SECONDS"
	printf '  %-12s %9s  %s\n' stage seconds result
	for n in "${stage_order[@]}"; do
		if [[ -n ${stage_secs[$n]:-} ]]; then
			printf '  %-12s %9d  %s\n' "$n" "${stage_secs[$n]}" "${stage_result[$n]}"
		else
			printf '  %-12s %9s  %s\n' "$n" - "${stage_result[$n]}"
		fi
	done
	local total=$SECONDS
	printf '  %-12s %9d  %s\n' total "$total" "$(hms "$total")"
	if ((rc == 0)); then
		echo "all selected stages passed (logs: .bin/logs/, .bin/e2e.log)"
	else
		echo "FAILED (exit status $rc); logs: .bin/logs/, .bin/e2e.log"
	fi
}

on_exit() {
	local rc=$?
	ticker_stop
	if [[ -n $stage ]]; then
		stage_result[$stage]=FAILED
		stage_secs[$stage]=$((SECONDS - stage_start))
		printf -- '---- [+%ds] stage %s: FAILED after %ds\n' "$SECONDS" "$stage" "${stage_secs[$stage]}"
		((rc != 0)) || rc=1
	fi
	summary "$rc"
	exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- heartbeat
# ticker_start FUNC: calls FUNC every 30 s in the background until ticker_stop
# (called at the end of each stage and by the EXIT trap, so also on failure
# and on ^C); it also exits by itself once this script is gone.
ticker_pid=
ticker_start() {
	[[ -z ${ticker_pid:-} ]] || ticker_stop
	local parent=$$
	(
		set +e
		trap - EXIT
		s=
		trap '[[ -n $s ]] && kill "$s" 2>/dev/null; exit 0' TERM
		while :; do
			sleep 30 &
			s=$!
			wait "$s"
			s=
			kill -0 "$parent" 2>/dev/null || exit 0
			"$@"
		done
	) &
	ticker_pid=$!
}
ticker_stop() {
	[[ -n ${ticker_pid:-} ]] || return 0
	{
		kill "$ticker_pid" || true
		wait "$ticker_pid" || true
	} 2>/dev/null
	ticker_pid=
}
# quiet_tick: a line when the stage has printed nothing for 30 s (output that
# goes through run or fuzz_run lands in a log under .bin/: the newest log's
# modification time is the time of the last output).
quiet_tick() {
	local last quiet
	last=$(stat -c %Y "$logdir"/*.log "$root/.bin/e2e.log" 2>/dev/null | sort -n | tail -n 1)
	[[ -n $last ]] || return 0
	quiet=$(($(date +%s) - last))
	((quiet >= 30)) || return 0
	printf '.... [+%ds] still running stage %s (%ds so far, no output for %ds)\n' \
		"$SECONDS" "$stage" $((SECONDS - stage_start)) "$quiet"
}

# run CMD...: shows the command, runs it (output to the terminal and the stage
# log), then shows how long it took.
run() {
	local t0=$SECONDS rc=0
	printf '+ %s\n' "$*" | tee -a "$stage_log"
	"$@" 2>&1 | tee -a "$stage_log" || rc=$?
	if ((rc == 0)); then
		printf '  (%ds: %s)\n' $((SECONDS - t0)) "$*"
	else
		printf '  (%ds: %s: FAILED, exit status %d)\n' $((SECONDS - t0)) "$*" "$rc"
	fi
	return "$rc"
}

# ---------------------------------------------------------------- stages
apt_log=$logdir/apt.log
# apt_install PKG...: apt-get install (one apt-get update and a retry if that fails).
apt_install() {
	local -a apt=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120
		install -y --no-install-recommends "$@")
	timeout 600 "${apt[@]}" </dev/null >>"$apt_log" 2>&1 && return 0
	echo "apt-get install $* failed; running apt-get update once and retrying (log: $apt_log)"
	timeout 300 env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 update \
		</dev/null >>"$apt_log" 2>&1 || true
	timeout 600 "${apt[@]}" </dev/null >>"$apt_log" 2>&1
}

stage_prereq() {
	if ! command -v go >/dev/null; then
		echo "go is not installed (needs Go 1.26; see README)" >&2
		return 1
	fi
	local cache_dir avail_kb
	printf '%s, %s CPUs, %s MiB memory; GOMODCACHE=%s GOCACHE=%s\n' "$(go version)" "$(nproc)" \
		"$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)" "$(go env GOMODCACHE)" "$(go env GOCACHE)"
	cache_dir=$(go env GOCACHE)
	while [[ ! -d $cache_dir ]]; do cache_dir=$(dirname "$cache_dir"); done
	avail_kb=$(df -Pk "$cache_dir" | awk 'NR == 2 {print $4}')
	if ((avail_kb < 5 * 1024 * 1024)); then
		echo "WARNING: only $((avail_kb / 1024)) MiB free under $cache_dir; a cold run fills ~6 GB of Go caches"
	fi
	# valgrind: needed by a test that measures allocations/instructions;
	# zsh: one of the shells that evaluate lens env's output (dash, bash and
	# sh are Debian's own).
	local cmd
	for cmd in valgrind zsh; do
		if command -v "$cmd" >/dev/null; then
			echo "$cmd: $(command -v "$cmd")"
		elif [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
			echo "$cmd is missing: installing Debian's $cmd package (apt-get, as root; it stays installed; log: $apt_log)"
			apt_install "$cmd" || {
				echo "apt-get install $cmd failed; see $apt_log" >&2
				tail -n 20 "$apt_log" >&2 || true
				return 1
			}
			echo "$cmd: installed $(command -v "$cmd")"
		else
			echo "WARNING: $cmd is missing and this is not root (or not Debian): the tests that need it will not run; install it with: apt-get install $cmd"
		fi
	done
}

stage_gofmt() {
	local -a files=()
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		local f
		while IFS= read -r f; do
			[[ -f $f ]] && files+=("$f")
		done < <(git ls-files -co --exclude-standard -- '*.go')
	else
		mapfile -t files < <(find . -name '*.go' -not -path './.bin/*')
	fi
	echo "+ gofmt -l (${#files[@]} files)"
	local unformatted
	unformatted=$(gofmt -l "${files[@]}")
	if [[ -n $unformatted ]]; then
		echo "gofmt would change:" >&2
		echo "$unformatted" >&2
		return 1
	fi
}

stage_vet() {
	run go vet -tags heavy ./...
	run go -C e2e vet ./...
	run go -C tools/scale vet ./...
	run go -C tools/mutation vet ./...
}

stage_staticcheck() {
	local bin=$root/.bin/staticcheck before after t0=$SECONDS
	before=$(go tool buildid "$bin" 2>/dev/null || echo none)
	run go build -C tools/lint -o "$bin" honnef.co/go/tools/cmd/staticcheck
	after=$(go tool buildid "$bin" 2>/dev/null || echo none)
	if [[ $before == "$after" ]]; then
		echo "staticcheck: $bin up to date ($((SECONDS - t0))s)"
	else
		echo "staticcheck: built $bin ($("$bin" -version)) in $((SECONDS - t0))s"
	fi
	run "$bin" -tags heavy ./...
	run env -C e2e "$bin" ./...
	run env -C tools/scale "$bin" ./...
	run env -C tools/mutation "$bin" ./...
}

stage_unit() {
	run go test -race -count=1 ./...
}

# heavy_tests prints "DIR REGEXP" for each package of the root module with
# tests in *_heavy_test.go files: ^(their names)$.
heavy_tests() {
	local -A names=()
	local f dir name
	local -a files
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		mapfile -t files < <(git ls-files -co --exclude-standard -- '*_heavy_test.go' ':!:e2e/*' ':!:tools/*')
	else
		mapfile -t files < <(find . -name '*_heavy_test.go' -not -path './e2e/*' -not -path './tools/*' -not -path './.bin/*' | sed 's|^\./||')
	fi
	for f in "${files[@]}"; do
		[[ -f $f ]] || continue
		dir=./$(dirname "$f")
		[[ $dir == ./. ]] && dir=.
		while IFS= read -r name; do
			names[$dir]+="${names[$dir]:+|}$name"
		done < <(sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing\.T).*/\1/p' "$f")
	done
	for dir in "${!names[@]}"; do
		printf '%s ^(%s)$\n' "$dir" "${names[$dir]}"
	done | sort
}

stage_heavy() {
	local dir re n=0
	while read -r dir re; do
		run go test -race -count=1 -tags heavy -timeout 40m -run "$re" "$dir"
		n=$((n + 1))
	done < <(heavy_tests)
	if ((n == 0)); then
		echo "heavy: no *_heavy_test.go with tests" >&2
		return 1
	fi
}

stage_release() {
	if ! command -v qemu-aarch64-static >/dev/null; then
		if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
			echo "qemu-aarch64-static is missing: installing Debian's qemu-user-static package (apt-get, as root; it stays installed; log: $apt_log)"
			apt_install qemu-user-static || {
				echo "apt-get install qemu-user-static failed; see $apt_log" >&2
				tail -n 20 "$apt_log" >&2 || true
				return 1
			}
		else
			echo "WARNING: qemu-aarch64-static is missing and this is not root (or not Debian): the arm64 smoke tests will not run; install it with: apt-get install qemu-user-static"
		fi
	fi
	if [[ ! -x /usr/share/lmod/lmod/libexec/lmod ]] && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		echo "Lmod is missing: installing Debian's lmod package (apt-get, as root; it stays installed; log: $apt_log)"
		apt_install lmod || {
			echo "apt-get install lmod failed; see $apt_log" >&2
			return 1
		}
	fi
	run bash scripts/release-check.sh
}

# rel_pkg IMPORT_PATH: ./carrier for github.com/nemolens/lens-go/carrier, . for the root.
rel_pkg() {
	local mod=github.com/nemolens/lens-go
	case $1 in
	"$mod") echo . ;;
	"$mod"/*) echo "./${1#"$mod"/}" ;;
	*) echo "$1" ;;
	esac
}

stage_fuzz() {
	local -a targets
	local total key
	total=$(fuzz_targets ./... | wc -l)
	key=$(git rev-parse HEAD 2>/dev/null || echo 0)
	mapfile -t targets < <(fuzz_targets ./... | fuzz_subset "$fuzz_targets_n" "$key")
	local n=${#targets[@]} i=0 pkg dir target t0 secs failed=0 spurious=0
	echo "fuzz: $n of $total targets (FUZZ_TARGETS=$fuzz_targets_n; commit ${key:0:12} picks which; the seed corpora of all ran in the unit stage)"
	local -a report=()
	case $fuzztime in
	*x) echo "fuzz: $n targets, $fuzztime executions each (FUZZTIME), $fuzz_parallel workers" ;;
	*)
		echo "fuzz: $n targets x $fuzztime each (FUZZTIME) = $n x $fuzztime of fuzzing plus one build per package, $fuzz_parallel workers"
		if [[ $fuzztime =~ ^([0-9]+)s$ ]] && ((n * BASH_REMATCH[1] > 900)); then
			echo "WARNING: $n targets x $fuzztime is more than 15 min of fuzzing: CI's 90-minute limit needs a smaller FUZZTIME"
		fi
		;;
	esac
	for line in "${targets[@]}"; do
		IFS=$'\t' read -r pkg dir target <<<"$line"
		i=$((i + 1))
		printf '\n---- [+%ds] fuzz %d/%d: %s in %s, budget %s\n' "$SECONDS" "$i" "$n" "$target" "$pkg" "$fuzztime" | tee -a "$stage_log"
		t0=$SECONDS
		if fuzz_run "$pkg" "$dir" "$target" "$fuzztime" "$logdir/fuzz-target.log" \
			-parallel "$fuzz_parallel" -fuzzminimizetime 5s; then
			[[ $FUZZ_RESULT == ok ]] || spurious=$((spurious + 1))
		else
			failed=$((failed + 1))
		fi
		cat "$logdir/fuzz-target.log" >>"$stage_log"
		secs=$((SECONDS - t0))
		report+=("$(printf '  %-24s %-40s %4ds  %s' "$target" "$(rel_pkg "$pkg")" "$secs" "$FUZZ_RESULT")")
	done
	echo
	echo "fuzz results (seconds include building the instrumented test binary):"
	printf '%s\n' "${report[@]}"
	((spurious == 0)) || echo "fuzz: $spurious target(s) hit golang/go#75804's spurious deadline and were counted as passes"
	if ((failed)); then
		echo "fuzz: $failed of $n targets FAILED" >&2
		return 1
	fi
}

backends_tick() {
	local log=$logdir/backends-build-v.log compiled downloaded
	compiled=$(grep -cv '^go: ' "$log" 2>/dev/null) || true
	downloaded=$(grep -c '^go: downloading ' "$log" 2>/dev/null) || true
	printf '.... [+%ds] still building the backends (%ds): %d packages compiled, %d modules downloaded so far (a cold build compiles ~3000)\n' \
		"$SECONDS" $((SECONDS - stage_start)) "${compiled:-0}" "${downloaded:-0}"
}

stage_backends() {
	local vlog=$logdir/backends-build-v.log rc=0
	: >"$vlog"
	echo "+ scripts/build-backends.sh (go build -v output, one line per package compiled: $vlog)"
	GOFLAGS="${GOFLAGS:+$GOFLAGS }-v" bash scripts/build-backends.sh 2>"$vlog" | tee -a "$stage_log" || rc=$?
	ticker_stop
	if ((rc != 0)); then
		echo "backend build failed; last lines of $vlog:" >&2
		tail -n 40 "$vlog" >&2
		return "$rc"
	fi
	# tools/jaeger/otelcol (the project's own code there) is not vetted: go vet computes
	# facts for every dependency, about 2 min for the Collector's graph; gofmt and the
	# build check it.
}

stage_collector() {
	run go -C collector vet ./processor/...
	run go -C collector test -race -count=1 ./processor/...
	# The distribution (docs/testing.md#collector): .bin/lens-collector for
	# the end-to-end tests, then its in-process tests built with the same
	# flags (CGO_ENABLED=0 -trimpath: the build's compiled packages serve
	# them; a -race build of the whole Collector graph would cost as much
	# again), then its release archive (scripts/release-check.sh
	# --collector: amd64 only, the arm64 cross-build would double the cost).
	# cmd/lens-collector is not vetted: go vet computes facts for every
	# dependency (minutes for this graph); gofmt, the build and its tests
	# check its one file.
	run bash scripts/build-collector.sh "$root/.bin"
	run env -C collector CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" \
		go test -trimpath -tags=remove_all_sd,enable_kubernetes_sd,enable_dns_sd -count=1 ./cmd/... # build-collector.sh's tags
	run bash scripts/release-check.sh --collector
}

stage_mutation() {
	local -a pkgs=()
	[[ -z ${MUTATION_PKGS:-} ]] || read -r -a pkgs <<<"$MUTATION_PKGS"
	run bash scripts/mutation.sh "${pkgs[@]}"
}

stage_e2e() {
	local b
	for b in jaeger otelcol prometheus lens-collector; do
		if [[ ! -x $root/.bin/$b ]]; then
			echo "no .bin/$b: run the backends and collector stages first (scripts/test.sh --stage collector,backends,e2e)" >&2
			return 1
		fi
	done
	export JAEGER_BIN="$root/.bin/jaeger" OTELCOL_BIN="$root/.bin/otelcol" PROMETHEUS_BIN="$root/.bin/prometheus" \
		LENS_COLLECTOR_BIN="$root/.bin/lens-collector"
	if [[ $(id -u) != 0 ]]; then
		echo "WARNING: not root: the Slurm tests need root (scripts/slurm-up.sh installs packages and starts daemons)"
	fi
	echo "Slurm: scripts/slurm-up.sh installs Debian's munge, slurmctld, slurmd and slurm-client as root when missing (they stay installed)"
	# The real launchers (e2e/mpirun_test.go, e2e/torchrun*_test.go): Open
	# MPI and torchrun, installed when missing (python3-torch: a few minutes
	# on a fresh machine, see docs/testing.md).
	if [[ $(id -u) == 0 ]]; then
		run "$root/scripts/launchers-up.sh" "$logdir/launchers-apt.log" || return 1
	fi
	local -a pkgs failed=()
	mapfile -t pkgs < <(go -C e2e list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./... | sed '/^$/d')
	# One package per go test run: with several packages go test buffers each
	# package's output until it finishes; with one package and -v it streams.
	local pkg t0 rc
	for pkg in "${pkgs[@]}"; do
		printf '\n---- [+%ds] e2e package %s\n' "$SECONDS" "$pkg" | tee -a "$stage_log"
		t0=$SECONDS
		rc=0
		run go -C e2e test -race -count=1 -timeout 30m -v "$pkg" || rc=$?
		if ((rc != 0)); then
			failed+=("$pkg")
		fi
		printf -- '---- [+%ds] e2e package %s: %s in %ds\n' "$SECONDS" "$pkg" "$( ((rc == 0)) && echo ok || echo FAILED)" $((SECONDS - t0)) | tee -a "$stage_log"
	done
	if ((${#failed[@]})); then
		echo "e2e: FAILED: ${failed[*]} (log: .bin/e2e.log)" >&2
		return 1
	fi
}

# ---------------------------------------------------------------- main
printf '==== test.sh: stages:'
for n in "${all_stages[@]}" "${extra_stages[@]}"; do [[ -n ${want[$n]:-} ]] && printf ' %s' "$n"; done
printf ' (FUZZTIME=%s)\n' "$fuzztime"
for n in "${all_stages[@]}" "${extra_stages[@]}"; do
	[[ -n ${want[$n]:-} ]] || continue
	if [[ ${skip_e2e:-} == 1 && ($n == backends || $n == e2e) ]]; then
		stage_skip "$n" "SKIP_E2E=1"
		continue
	fi
	if [[ $n == backends ]]; then
		stage_begin "$n" backends_tick
	else
		stage_begin "$n" quiet_tick
	fi
	"stage_$n"
	stage_end
done
