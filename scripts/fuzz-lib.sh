# shellcheck shell=bash
# Fuzzing helpers shared by scripts/test.sh (bounded CI fuzzing) and
# scripts/fuzz-long.sh (long local fuzzing). Source it; it needs bash and go.
#
# Why a duration budget per target (go test -fuzztime 20s) and not an
# execution count (200000x, as before): a count has no wall-clock bound. On a
# loaded 2-core machine FuzzResourceAttributes needed 519 s for 200000
# executions, minutes of it at 0 executions per second (the coordinator
# minimizing new inputs), so the CI time depended on the machine's load.
# A duration bounds each target by the coordinator's own deadline, whatever
# the load: N targets cost N x budget plus their builds.
#
# The price is golang/go#75804 (fixed in Go 1.27, not in any 1.26.x): when the
# -fuzztime deadline expires, the coordinator can see the deadline on its
# parent context before the cancellation has reached the workers' context,
# and then reports the deadline itself as the target's failure:
#
#	--- FAIL: FuzzX (20.04s)
#	    context deadline exceeded
#	FAIL
#
# It happens more often under CPU contention. fuzz_run treats exactly that
# shape as a pass: exit status 1, the target's failure block consists only of
# the line "context deadline exceeded", no "Failing input written to" line,
# no panic, and no new file in <package>/testdata/fuzz/<Target>/ (where a
# crasher would be written). Anything else is a failure. The seed corpus and
# the committed testdata/fuzz inputs are run by the unit tests anyway.

# fuzz_targets [PACKAGES...]: prints one line "IMPORT_PATH<TAB>DIR<TAB>FuzzName"
# per fuzz target of PACKAGES (default ./...), in package order. Computed once,
# from `go list` (which applies build constraints) and the test files' source:
# no test binary is built, whereas `go test -list` compiles and links every
# package (minutes on a cold cache, about 5 s warm for this module).
# A fuzz target is a top-level func Fuzz or FuzzX (X not lower case) in a
# _test.go file, as for `go test`.
fuzz_targets() {
	local line
	local -a f
	go list -f '{{.ImportPath}}{{"\t"}}{{.Dir}}{{range .TestGoFiles}}{{"\t"}}{{.}}{{end}}{{range .XTestGoFiles}}{{"\t"}}{{.}}{{end}}' "${@:-./...}" |
		while IFS=$'\t' read -r -a f; do
			((${#f[@]} > 2)) || continue
			(cd "${f[1]}" && sed -n -E 's/^func (Fuzz([^a-z(][[:alnum:]_]*)?)\(.*/\1/p' "${f[@]:2}") |
				while IFS= read -r line; do
					printf '%s\t%s\t%s\n' "${f[0]}" "${f[1]}" "$line"
				done
		done
}

# fuzz_corpus_files DIR: the files in a target's testdata/fuzz/<Target>/ (sorted).
fuzz_corpus_files() {
	[[ -d $1 ]] || return 0
	find "$1" -maxdepth 1 -type f -printf '%f\n' | LC_ALL=C sort
}

# fuzz_only_spurious_deadline LOG TARGET: true when LOG shows a failure of
# TARGET that is only golang/go#75804's "context deadline exceeded".
fuzz_only_spurious_deadline() {
	local log=$1 target=$2
	grep -q 'Failing input written to' "$log" && return 1
	grep -qE '^(panic: |fatal error: )' "$log" && return 1
	awk -v head="--- FAIL: $target (" '
		index($0, head) == 1 { infail = 1; blocks++; next }
		/^--- FAIL: / { bad++; next }
		infail && ($0 == "FAIL" || $0 ~ /^exit status / || $0 ~ /^FAIL\t/) { infail = 0; next }
		infail {
			s = $0
			gsub(/^[ \t]+|[ \t]+$/, "", s)
			if (s == "context deadline exceeded") deadline++
			else if (s != "") bad++
		}
		END { exit !(blocks == 1 && deadline == 1 && bad == 0) }' "$log"
}

# fuzz_run PKG DIR TARGET FUZZTIME LOG [GO TEST FLAGS...]: fuzzes one target
# (go test -run '^$' -fuzz '^TARGET$' -fuzztime FUZZTIME FLAGS PKG), streaming
# its output and writing it to LOG (overwritten). Returns 0 when the target
# passed, 1 when it failed, and sets FUZZ_RESULT to "ok",
# "ok (spurious deadline ignored)" or "FAILED". A new crasher is listed.
# shellcheck disable=SC2034 # read by the scripts that source this file
FUZZ_RESULT=
fuzz_run() {
	local pkg=$1 dir=$2 target=$3 fuzztime=$4 log=$5
	shift 5
	local corpus=$dir/testdata/fuzz/$target before after new rc
	local -a st
	before=$(fuzz_corpus_files "$corpus")
	: >"$log"
	# go test's own status, with or without the caller's pipefail and errexit
	go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$@" "$pkg" 2>&1 | tee -a "$log" &&
		st=("${PIPESTATUS[@]}") || st=("${PIPESTATUS[@]}")
	rc=${st[0]}
	if ((rc == 0)); then
		FUZZ_RESULT=ok
		return 0
	fi
	after=$(fuzz_corpus_files "$corpus")
	new=$(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | sed '/^$/d')
	if ((rc == 1)) && [[ -z $new ]] && fuzz_only_spurious_deadline "$log" "$target"; then
		printf 'fuzz: %s: the only failure is "context deadline exceeded" at the end of -fuzztime, with no crasher written:\n' "$target"
		printf 'fuzz: that is golang/go#75804 (Go 1.26 fuzz coordinator race, fixed in Go 1.27), not a finding; counted as a pass\n'
		FUZZ_RESULT="ok (spurious deadline ignored)"
		return 0
	fi
	if [[ -n $new ]]; then
		local f
		while IFS= read -r f; do
			printf 'fuzz: %s: new failing input %s (re-run: go test -run=%s/%s %s; commit it as a regression test once fixed)\n' \
				"$target" "$corpus/$f" "$target" "$f" "$pkg"
		done <<<"$new"
	fi
	# shellcheck disable=SC2034
	FUZZ_RESULT=FAILED
	return 1
}

# fuzz_subset COUNT KEY: reads fuzz_targets lines on stdin and prints COUNT
# of them ("all": every one), the ones in a ring of the sorted targets that
# starts at KEY (a hex commit hash) modulo their number. CI fuzzes a few
# targets per run (scripts/test.sh, FUZZ_TARGETS) and the commit chooses
# which: a rerun of the same commit fuzzes the same targets, and successive
# commits rotate through all of them. The seed corpora and testdata/fuzz
# inputs of every target run as unit tests on every run anyway.
fuzz_subset() {
	local count=$1 key=$2
	local -a all
	mapfile -t all < <(LC_ALL=C sort)
	local n=${#all[@]} i start
	((n)) || return 0
	if [[ $count == all ]] || ((count >= n)); then
		printf '%s\n' "${all[@]}"
		return 0
	fi
	[[ $key =~ ^[0-9a-fA-F]+$ ]] || key=0
	start=$((16#${key:0:7} % n))
	for ((i = 0; i < count; i++)); do
		printf '%s\n' "${all[(start + i) % n]}"
	done
}
