#!/usr/bin/env bash
# Mutation testing of the root module with gremlins, pinned in tools/mutation
# (docs/testing.md, "Mutation testing"). scripts/test.sh --stage mutation runs
# it; it is not part of CI's default run (it is slow).
#
# For each package: a copy of the module's tracked and untracked, not ignored
# files is made in a temporary directory, with the test files of every other
# package turned off by a build constraint (so gremlins' coverage run, go test
# -cover ./DIR/..., runs this package's tests only); gremlins mutates the package's own .go files
# (not its subpackages, not the files that Linux builds leave out) and runs
# the package's own tests (go test -failfast, without -race) on each mutant.
# A package with no tests of its own and cmd/lens are not mutated (the reason
# is printed). Then .bin/mutreport prints the kill rate per package:
# killed / (killed + survived); mutants that timed out, that no test covers,
# or that do not compile are counted apart.
#
# Usage: scripts/mutation.sh [DIR...]
#   DIR     package directories relative to the module root (. for the root
#           package); default: the goal packages (completed internal/reckon
#           internal/supervise internal/taskprolog internal/telemetry);
#           `all`: every package of the module that can be mutated
# Environment:
#   MUTATION_WORKERS        mutants tested at once (default 2)
#   MUTATION_TIMEOUT_COEFF  a mutant's test run times out after this many times
#                           the package's coverage run (default 10)
#   MUTATION_PKG_LIMIT      bound on one package's whole run, a timeout(1)
#                           duration (default 90m); past it the package's
#                           figures are those of the mutants tested so far,
#                           marked partial, and the stage fails
#   MUTATION_MIN            fail when a package's kill rate is below this
#                           percentage (default 0: report only)
#   MUTATION_SURVIVORS=0    do not list the surviving mutants
#   MUTATION_EXCLUDE        more files not to mutate: regular expressions,
#                           separated by blanks, on the file name relative to
#                           the package directory (e.g. '^spans\.go$')
#   MUTATION_DRY_RUN=1      only count the mutants (coverage runs, no mutant
#                           is tested)
#   MUTATION_MEM_LIMIT      bound on each test binary's address space, in MiB
#                           (default 4096; ulimit -v, with GOMEMLIMIT at half
#                           of it): a mutant that allocates without end (a
#                           loop in a package variable's initialiser) crashes
#                           its test run there, and is counted killed
# Results: .bin/mutation/<package>.json (gremlins' report) and .log, and
# .bin/mutation/summary.txt (the table).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mod=$(go list -m)
out=$root/.bin/mutation
workers=${MUTATION_WORKERS:-2}
coeff=${MUTATION_TIMEOUT_COEFF:-10}
limit=${MUTATION_PKG_LIMIT:-90m}
min=${MUTATION_MIN:-0}
memlimit=${MUTATION_MEM_LIMIT:-4096}
[[ $memlimit =~ ^[1-9][0-9]*$ ]] || {
	echo "mutation: MUTATION_MEM_LIMIT=$memlimit is not a number of MiB" >&2
	exit 2
}
goal=(completed internal/reckon internal/supervise internal/taskprolog internal/telemetry)
# Mutation operators: gremlins' defaults (arithmetic, comparison boundary and
# negation, ++/--, unary minus) and the ones that look like real bugs in this
# code (&& for ||, break for continue, += for -=).
operators=(--invert-logical --invert-loopctrl --invert-assignments)
[[ ${MUTATION_DRY_RUN:-} != 1 ]] || operators+=(--dry-run)

# Tests left out of a package's mutation runs, and why.
declare -A skiptests=(
	[.]='^TestInstallDocs$' # it builds the committed HEAD from a git clone, never the working files: no mutant can reach it, and the copy it would run in is no git checkout
)
# Packages gremlins cannot mutate, and why.
declare -A cannot=(
	[cmd/lens]="its tests build the lens binary and run it, and run the test binary itself as a child with a controlled environment: under go test -cover that child prints 'warning: GOCOVERDIR not set' on stderr and the tests that read stderr fail, the code under test runs in a binary that coverage does not see, and gremlins v0.6.0 names the package of a 'package main' directory wrongly"
)

mkdir -p "$out" "$root/.bin"
gobin=$(command -v go)
t0=$SECONDS
go build -C tools/mutation -o "$root/.bin/gremlins" github.com/go-gremlins/gremlins/cmd/gremlins
go build -C tools/mutation -o "$root/.bin/mutreport" ./mutreport
go -C tools/mutation test -count=1 ./... >/dev/null
echo "gremlins $(go -C tools/mutation list -m -f '{{.Version}}' github.com/go-gremlins/gremlins) and mutreport built in .bin/ ($((SECONDS - t0))s)"

# Every package directory with its test count and the files Linux leaves out.
declare -A ntests=() ignored=() # ntests: 1 when the package has test files
while IFS=' ' read -r dir n rest; do
	ntests[$dir]=$n
	ignored[$dir]=$rest
done < <(go list -f '{{.Dir}} {{if or .TestGoFiles .XTestGoFiles}}1{{else}}0{{end}}{{range .IgnoredGoFiles}} {{.}}{{end}}' ./... |
	sed "s|^$root/||; s|^$root |. |")

dirs=("$@")
((${#dirs[@]})) || dirs=("${goal[@]}")
if [[ ${dirs[*]} == all ]]; then
	mapfile -t dirs < <(printf '%s\n' "${!ntests[@]}" | sort)
fi

# The module's files: tracked and untracked, not ignored (no .bin/, no caches).
files=$(mktemp)
trap 'rm -f "$files"' EXIT
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -co --exclude-standard -z >"$files"
else
	find . -path ./.bin -prune -o -type f -print0 >"$files"
fi

reports=()
failed=()
declare -A secs=()
for dir in "${dirs[@]}"; do
	dir=${dir%/}
	dir=${dir#./}
	[[ -n $dir ]] || dir=.
	if [[ -z ${ntests[$dir]+set} ]]; then
		echo "mutation: $dir is not a package directory of $mod" >&2
		failed+=("$dir (not a package)")
		continue
	fi
	if [[ -n ${cannot[$dir]:-} ]]; then
		echo "mutation: $dir: not mutated: ${cannot[$dir]}"
		continue
	fi
	if ((ntests[$dir] == 0)); then
		echo "mutation: $dir: not mutated: no tests of its own (gremlins tests a mutant with its package's own tests only; this code is tested through its importers)"
		continue
	fi
	name=${dir//\//_}
	[[ $dir == . ]] && name=root
	work=$(mktemp -d "${TMPDIR:-/tmp}/lens-mutation-XXXXXX")
	mkdir "$work/src" "$work/tmp"
	tar --null -T "$files" -cf - | tar -C "$work/src" -xf -
	# Leave out the other packages' tests: a build constraint no build sets, so that go test
	# finds no test files there; the files stay (the root's docs test checks links to them).
	if [[ $dir == . ]]; then
		find "$work/src" -mindepth 2 -name '*_test.go' -print0 >"$work/others"
	else
		find "$work/src" -name '*_test.go' \( -not -path "$work/src/$dir/*" -o -path "$work/src/$dir/*/*" \) -print0 >"$work/others"
	fi
	while IFS= read -r -d '' f; do
		if grep -q '^//go:build ' "$f"; then
			sed -i '0,/^\/\/go:build \(.*\)$/s//\/\/go:build lens_mutation_excluded \&\& (\1)/' "$f"
		else
			{ printf '//go:build lens_mutation_excluded\n\n'; cat "$f"; } >"$f.tmp" && mv "$f.tmp" "$f"
		fi
	done <"$work/others"
	excludes=(-E '/') # subpackages: their own runs
	for f in ${ignored[$dir]}; do excludes+=(-E "^${f//./\\.}\$"); done
	read -r -a more <<<"${MUTATION_EXCLUDE:-}"
	for f in "${more[@]}"; do excludes+=(-E "$f"); done
	# gremlins runs `go` from PATH: this go runs each test run in a session of its own, so that
	# a mutant of the signal code that signals its process group (internal/supervise) kills
	# that test run, not gremlins; and `go test` runs the test binary through bounded (go test
	# -exec), which caps its memory and its life (docs/testing.md#mutation-memory).
	skip=()
	if [[ -n ${skiptests[$dir]:-} ]]; then
		echo "mutation: $dir: tests left out: ${skiptests[$dir]} (see scripts/mutation.sh)"
		skip=(-skip "$(printf %q "${skiptests[$dir]}")")
	fi
	mkdir "$work/bin"
	cat >"$work/bin/go" <<-EOF
		#!/bin/sh
		if [ "\$1" = test ]; then
		shift
		exec setsid $(printf %q "$gobin") test -exec $(printf %q "$work/bin/bounded") ${skip[*]} "\$@"
		fi
		exec setsid $(printf %q "$gobin") "\$@"
	EOF
	# The test binary's address space is bounded (ulimit -v; GOMEMLIMIT makes its collector work
	# before it gets there), and so is its life: gremlins kills the go command at a mutant's
	# timeout, and a test binary that go started lives on, orphaned; -test.timeout does not
	# bound code that runs before the tests (a package variable's initialiser), so timeout(1)
	# kills it 30 s after that timeout.
	cat >"$work/bin/bounded" <<-EOF
		#!/usr/bin/env bash
		t=
		for a; do case \$a in -test.timeout=*) t=\${a#-test.timeout=} ;; esac; done
		ulimit -v $((memlimit * 1024)) || exit 1
		export GOMEMLIMIT=$((memlimit / 2))MiB
		[[ -n \$t ]] || exec "\$@"
		secs=\$(awk -v d="\$t" 'BEGIN { s = 0
		while (match(d, /^[0-9.]+(h|m|s|ms|us|µs|ns)/)) {
		u = substr(d, 1, RLENGTH); d = substr(d, RLENGTH + 1); n = u + 0; sub(/^[0-9.]+/, "", u)
		s += n * (u == "h" ? 3600 : u == "m" ? 60 : u == "s" ? 1 : 0) }
		printf "%d", s + 1 }')
		exec timeout -s KILL \$((secs + 30)) "\$@"
	EOF
	chmod +x "$work/bin/go" "$work/bin/bounded"
	printf '\n---- [+%ds] mutation: %s (%s workers, timeout %sx the coverage run, bound %s, %s MiB per test binary)\n' \
		"$SECONDS" "$dir" "$workers" "$coeff" "$limit" "$memlimit"
	p0=$SECONDS
	rc=0
	(cd "$work/src" && env PATH="$work/bin:$PATH" GOFLAGS=-count=1 TMPDIR="$work/tmp" NO_COLOR=1 \
		timeout --kill-after=30s "$limit" nice -n 10 "$root/.bin/gremlins" unleash \
		--workers "$workers" --timeout-coefficient "$coeff" "${operators[@]}" "${excludes[@]}" \
		-o "$out/$name.json" "$work/src/$dir") >"$out/$name.log" 2>&1 || rc=$?
	secs[$dir]=$((SECONDS - p0))
	grep -E '^(Killed|Timed out|Test efficacy|Mutator coverage|Mutation testing completed)' "$out/$name.log" | sed 's/^/  /' || true
	if ((rc != 0)) || [[ ! -s $out/$name.json ]]; then
		if ((rc == 124 || rc == 137)); then
			if ((rc == 124)); then
				echo "mutation: $dir: not finished within $limit (MUTATION_PKG_LIMIT): partial figures from $out/$name.log" >&2
			else
				echo "mutation: $dir: gremlins was killed (SIGKILL) after ${secs[$dir]}s: partial figures from $out/$name.log" >&2
			fi
			reports+=("$dir=$out/$name.log")
		else
			echo "mutation: $dir: gremlins failed (exit status $rc); last lines of $out/$name.log:" >&2
			tail -n 30 "$out/$name.log" >&2
		fi
		failed+=("$dir")
	else
		reports+=("$dir=$out/$name.json")
	fi
	echo "  ($dir: ${secs[$dir]}s)"
	# What a mutant's test left running (a helper process whose test binary was killed at its
	# timeout) runs from the copy: end it with the copy.
	pkill -KILL -f "$work/" 2>/dev/null || true
	rm -rf "$work"
done

rc=0
if ((${#reports[@]})); then
	args=(-root "$root" -min "$min")
	[[ ${MUTATION_SURVIVORS:-1} == 0 ]] || args+=(-survivors)
	echo
	"$root/.bin/mutreport" "${args[@]}" "${reports[@]}" | tee "$out/summary.txt" || rc=$?
	{
		echo
		echo "seconds per package ($workers workers, nproc $(nproc)):"
		for dir in "${!secs[@]}"; do printf '  %-28s %6d\n' "$dir" "${secs[$dir]}"; done | sort
	} | tee -a "$out/summary.txt"
fi
if ((${#failed[@]})); then
	echo "mutation: no result for: ${failed[*]}" >&2
	rc=1
fi
exit "$rc"
