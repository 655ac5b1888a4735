#!/usr/bin/env bash
# Long local fuzzing (CI fuzzes only FUZZ_TARGETS=6 targets, chosen by the commit, for
# FUZZTIME=15s each, in scripts/test.sh).
#
# Usage: scripts/fuzz-long.sh DURATION [TARGET...]
#   DURATION  per target: a Go duration (10m, 2h) or an execution count (5000000x)
#   TARGET    a fuzz function (FuzzParse: every package that has one), or
#             PACKAGE:FuzzName (./carrier:FuzzParse or the import path); default: all targets
#   --list    list the fuzz targets and exit
# Examples:
#   scripts/fuzz-long.sh 10m                  # every target, 10 minutes each
#   scripts/fuzz-long.sh 1h FuzzParse         # one target for an hour
# Environment: FUZZ_PARALLEL (workers; default: GOMAXPROCS, all CPUs).
#
# Runs every selected target even after a failure and ends with a table; exits 1
# if any target failed. A failing input is written by go test to
# <package>/testdata/fuzz/<FuzzName>/ (commit it with the fix: it becomes a
# regression test run by the unit tests). New interesting inputs accumulate in
# $(go env GOCACHE)/fuzz (remove with go clean -fuzzcache). A spurious
# "context deadline exceeded" at the end of a duration (golang/go#75804, Go 1.26)
# is recognised and counted as a pass, as in scripts/test.sh (see fuzz-lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# shellcheck source=scripts/fuzz-lib.sh
. "$root/scripts/fuzz-lib.sh"

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

mapfile -t all < <(fuzz_targets ./...)
case ${1:-} in
-h | --help)
	usage
	exit 0
	;;
--list)
	for line in "${all[@]}"; do
		IFS=$'\t' read -r pkg _ target <<<"$line"
		printf '%-26s %s\n' "$target" "$pkg"
	done
	exit 0
	;;
'')
	usage >&2
	exit 2
	;;
esac
duration=$1
shift
if ! [[ $duration =~ ^[0-9]+x$ || $duration =~ ^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$ ]]; then
	echo "fuzz-long.sh: DURATION must be a Go duration (10m, 1h30m) or a count (100000x), got '$duration'" >&2
	exit 2
fi

selected=()
if (($# == 0)); then
	selected=("${all[@]}")
else
	for want in "$@"; do
		wpkg='' wname=$want
		if [[ $want == *:* ]]; then
			wpkg=${want%:*} wname=${want##*:}
			wpkg=$(go list "$wpkg") || exit 2
		fi
		found=0
		for line in "${all[@]}"; do
			IFS=$'\t' read -r pkg _ target <<<"$line"
			if [[ $target == "$wname" && (-z $wpkg || $pkg == "$wpkg") ]]; then
				selected+=("$line")
				found=1
			fi
		done
		((found)) || {
			echo "fuzz-long.sh: no fuzz target '$want' (scripts/fuzz-long.sh --list)" >&2
			exit 2
		}
	done
fi

flags=()
[[ -n ${FUZZ_PARALLEL:-} ]] && flags+=(-parallel "$FUZZ_PARALLEL")
mkdir -p .bin/logs
n=${#selected[@]}
echo "fuzz-long: $n target(s), $duration each; failing inputs go to <package>/testdata/fuzz/<FuzzName>/"
report=()
failed=0
i=0
start=$SECONDS
for line in "${selected[@]}"; do
	IFS=$'\t' read -r pkg dir target <<<"$line"
	i=$((i + 1))
	printf '\n==== [+%ds] fuzz %d/%d: %s in %s, budget %s\n' $((SECONDS - start)) "$i" "$n" "$target" "$pkg" "$duration"
	t0=$SECONDS
	log=.bin/logs/fuzz-long-${target}.log
	fuzz_run "$pkg" "$dir" "$target" "$duration" "$log" "${flags[@]}" || failed=$((failed + 1))
	report+=("$(printf '  %-26s %-48s %6ds  %s' "$target" "$pkg" $((SECONDS - t0)) "$FUZZ_RESULT")")
done
printf '\n==== [+%ds] fuzz-long summary\n' $((SECONDS - start))
printf '%s\n' "${report[@]}"
if ((failed)); then
	echo "fuzz-long: $failed of $n target(s) FAILED (logs: .bin/logs/fuzz-long-*.log)" >&2
	exit 1
fi
echo "fuzz-long: all $n target(s) passed"
