#!/usr/bin/env bash
# The scale report of lens-go (docs/performance.md): what lens-go costs against the size of
# its input and per task of a large job, beside the OpenTelemetry Go SDK and single-pass floors.
# It prints Markdown on stdout (progress goes to stderr) and, with -o, writes it to a file too.
# Sections, in order:
#   machine  nproc, CPU, memory, load average and the share of the CPUs busy with other work,
#            at the start (the end of the report adds the CPU other processes used during the run)
#   bench    the scale benchmarks (BenchmarkScale* of carrier, detect and the root package:
#            Parse, Format, Extend, DuplicateKeys, Check, Detect, Setup) with -count N: a
#            summary, one table per operation (medians, ratios, growth exponents) and the
#            benchstat tables (golang.org/x/perf/cmd/benchstat, pinned in tools/lint)
#   counts   instruction counts (callgrind, GC off, GODEBUG=asyncpreemptoff=1): every carrier
#            operation at 1,000 → 16,000 entries and 1 → 16 KiB values (the driver of
#            carrier/linear_test.go), Parse, Format, Check, Detect, ResourceAttributes and Setup
#            at 10,000, 100,000 and 1,000,000 entries (not 1,000,000 with --quick), and the
#            first Setup of a typical worker
#   cli      instructions of one lens process per task (cachegrind, as callgrind aborts on most
#            runs of lens exec): lens env --stage task, lens detect, lens exec --
#            /bin/true with telemetry off and on against a refusing collector (gRPC, HTTP),
#            a static Go hello world; default and CGO_ENABLED=0 builds; this tree and the
#            "before" revision (built in a temporary git worktree, removed afterwards)
#   init     GODEBUG=inittrace=1 of lens env --stage task: the slowest package initialisers
#   otlp     the bytes the resource of a typical job adds to every OTLP trace export
#   size     the input-size table: time and peak RSS of the library and of lens on values of
#            1, 16 and 64 MiB, 100,000 and 1,000,000 segments, 10,000 duplicate keys and the
#            largest carrier a child can receive (131,046 bytes), and the growth between sizes
#   exit     wall time of lens exec -- true at exit: telemetry off, a refusing collector (gRPC,
#            HTTP) and a hung one (--flush-timeout 1s); hyperfine when installed, else a loop
#   rank     what a 10,000-rank job pays, worked out from the figures above
# Cost: on a quiet 2-core machine about 15 min with the defaults (the benchmarks ~7.5 min of
# it, Valgrind ~6 min, the input-size table ~1 min), and about 3 min with --quick; other work
# on the machine, or a cold build cache (benchstat's module is downloaded once), add to it.
# Nothing here is part of scripts/test.sh. Disk: up to ~400 MB in a temporary directory (the
# binaries, and the 64 MiB inputs of the size table), removed at the end, plus the builds of
# the before revision and of benchstat in the Go build cache.
# As root it installs Debian's valgrind, time and hyperfine with apt-get when they are missing
# (and says so); otherwise the sections that need them say what is missing.
#
# Usage: scripts/scale-report.sh [-o FILE] [--quick] [--count N] [--benchtime D]
#                                [--only S,S...] [--skip S,S...] [--before REV]
#   -o FILE      also write the report to FILE
#   --quick      a smoke run: -count 1, -benchtime 50ms, one run per cell, fewer repetitions
#   --count N    benchmark runs per case (default 6; benchstat wants 6 for its intervals)
#   --benchtime D  -benchtime of the benchmarks (default 200ms)
#   --only/--skip  sections to run / to leave out (names above)
#   --before REV the revision of the "before" figures (default b2da489)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export GOFLAGS=${GOFLAGS:-}

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

all_sections=(machine bench counts cli init otlp size exit rank)
out_file='' quick='' count=6 benchtime=200ms before_rev=b2da489
declare -A want=() skip=()
while (($#)); do
	case $1 in
	-o) out_file=${2:?-o needs a file}; shift 2 ;;
	--quick) quick=1; count=1; benchtime=50ms; shift ;;
	--count) count=${2:?}; shift 2 ;;
	--benchtime) benchtime=${2:?}; shift 2 ;;
	--before) before_rev=${2:?}; shift 2 ;;
	--only | --skip)
		IFS=, read -r -a names <<<"${2:?$1 needs section names}"
		for n in "${names[@]}"; do
			[[ " ${all_sections[*]} " == *" $n "* ]] || {
				echo "scale-report.sh: unknown section '$n' (sections: ${all_sections[*]})" >&2
				exit 2
			}
			if [[ $1 == --only ]]; then want[$n]=1; else skip[$n]=1; fi
		done
		shift 2
		;;
	-h | --help) usage; exit 0 ;;
	*) echo "scale-report.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
if ((${#want[@]} == 0)); then for n in "${all_sections[@]}"; do want[$n]=1; done; fi
for n in "${!skip[@]}"; do unset "want[$n]"; done
on() { [[ -n ${want[$1]:-} ]]; }

reps=5 size_repeat=3 exit_runs=20
if [[ -n $quick ]]; then reps=1 size_repeat=1 exit_runs=5; fi

# ---------------------------------------------------------------- output, progress, clean-up
tmp=$(mktemp -d /tmp/scale-report.XXXXXX)
report=$tmp/report.md
worktree=
bh_pid=
cleanup() {
	if [[ -n $worktree ]]; then git -C "$root" worktree remove --force "$worktree" 2>/dev/null || true; git -C "$root" worktree prune 2>/dev/null || true; fi
	if [[ -n $bh_pid ]]; then kill "$bh_pid" 2>/dev/null || true; wait "$bh_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
say() { printf '[%4ds] %s\n' "$SECONDS" "$*" >&2; }
md() { printf '%s\n' "$@" >>"$report"; }
mdcat() { cat >>"$report"; }
: >"$report"
declare -A fig=() # figures for the rank section

# ---------------------------------------------------------------- load before anything runs
load() { cut -d' ' -f1-3 /proc/loadavg; }
# The share of all CPUs busy with other work over 5 s while this script waits.
cpu_busy() {
	local a b
	a=$(awk '/^cpu / {print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
	sleep 5
	b=$(awk '/^cpu / {print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); busy = y[1]-x[1]; idle = y[2]-x[2];
		printf "%.0f %%", (busy+idle > 0 ? 100*busy/(busy+idle) : 0) }'
}
load_start=$(load)
busy_start=$(cpu_busy)
# CPU seconds of all processes since boot (USER_HZ is 100 on Linux).
stat_busy() { awk '/^cpu / {printf "%.2f", ($2+$3+$4+$7+$8)/100}' /proc/stat; }
run_busy0=$(stat_busy)
run_start=$SECONDS

# ---------------------------------------------------------------- tools
is_root() { [[ $(id -u) == 0 ]]; }
apt_install() { # PACKAGE: install a Debian package when root, saying so
	if is_root && command -v apt-get >/dev/null; then
		say "installing Debian's $1 with apt-get (it stays installed: apt-get remove $1)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null 2>&1 ||
			{ apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null 2>&1; } || true
	fi
}
need() { # COMMAND PACKAGE
	command -v "$1" >/dev/null || apt_install "$2"
	command -v "$1" >/dev/null
}
if on counts || on cli; then need valgrind valgrind || say "valgrind is missing (Debian package valgrind): the instruction counts are left out"; fi
if on size; then [[ -x /usr/bin/time ]] || apt_install time; fi
if on exit; then need hyperfine hyperfine || say "hyperfine is missing: the exit timings use a loop of $exit_runs runs"; fi

say "building lens (default and CGO_ENABLED=0), the drivers and a hello world in $tmp"
go build -o "$tmp/lens" ./cmd/lens
CGO_ENABLED=0 go build -o "$tmp/lens-static" ./cmd/lens
go build -C tools/scale -o "$tmp/scaledriver" .
go build -o "$tmp/lineardriver" ./carrier/internal/lineardriver
mkdir -p "$tmp/hello"
printf 'module hello\n\ngo 1.26\n' >"$tmp/hello/go.mod"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello, world") }\n' >"$tmp/hello/main.go"
(cd "$tmp/hello" && CGO_ENABLED=0 go build -o "$tmp/hello-bin" .)
driver=$tmp/scaledriver

have_before=
if on cli || on init; then
	if git -C "$root" rev-parse --verify -q "$before_rev^{commit}" >/dev/null; then
		worktree=$tmp/before
		say "building lens at $before_rev in a temporary git worktree"
		git -C "$root" worktree add --detach -q "$worktree" "$before_rev"
		(cd "$worktree" && go build -o "$tmp/lens-before" ./cmd/lens && CGO_ENABLED=0 go build -o "$tmp/lens-before-static" ./cmd/lens)
		git -C "$root" worktree remove --force "$worktree"
		git -C "$root" worktree prune
		worktree=
		have_before=1
	else
		say "revision $before_rev is not in this clone: no before figures"
	fi
fi

# A port on which nothing listens: connections are refused.
refusing=
for port in 1 9 4 6; do
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then refusing=127.0.0.1:$port; break; fi
done
: "${refusing:=127.0.0.1:1}"



# ---------------------------------------------------------------- machine
md "# lens-go scale report" ""
md "Generated by \`scripts/scale-report.sh${quick:+ --quick}\` on $(date -u '+%Y-%m-%d %H:%M UTC') from $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- 2>/dev/null || echo ' (with uncommitted changes)'), $(go version | cut -d' ' -f3-4)."
md ""
if on machine; then
	cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
	mem=$(awk '/MemTotal/ {printf "%.0f GB", $2/1e6}' /proc/meminfo)
	md "**Machine:** $(nproc) CPUs ($cpu), $mem of memory, $(uname -sr). At the start: load average $load_start (1, 5, 15 min), $busy_start of the CPUs busy with other work (sampled over 5 s before anything ran)."
	md ""
fi

# ---------------------------------------------------------------- bench
if on bench; then
	say "scale benchmarks: -count $count -benchtime $benchtime (carrier, detect, root; one package at a time)"
	go test -p 1 -run '^$' -bench '^BenchmarkScale' -benchtime "$benchtime" -count "$count" ./carrier ./detect . >"$tmp/bench.txt" 2>"$tmp/bench.err" &
	bench_pid=$!
	while kill -0 "$bench_pid" 2>/dev/null; do
		sleep 30
		kill -0 "$bench_pid" 2>/dev/null && say "  benchmarks: $(grep -c '^Benchmark' "$tmp/bench.txt" || true) results so far"
	done
	wait "$bench_pid" || { cat "$tmp/bench.err" "$tmp/bench.txt" >&2; exit 1; }
	# A benchmark that logs splits its result line, which is then lost.
	broken=$(grep '^Benchmark' "$tmp/bench.txt" | grep -vc 'ns/op' || true)
	((broken == 0)) || say "warning: $broken benchmark result lines are interrupted by other output and not counted"
	md "## Scale benchmarks" ""
	md "Time per operation against the carrier's size — 1 to 10,000 entries of 10-byte values, then 10 entries of 1 KiB to 100 KiB — beside the OpenTelemetry Go SDK (\`resource.New\` with \`WithFromEnv\`; for Detect also \`WithHost\`, \`WithProcessPID\`, \`WithTelemetrySDK\`) and a *floor*: a single pass in the benchmark file that does the same kind of work without the reference's rules. Setup is beside one \`carrier.Parse\` of the same text. Medians of $count runs, \`-benchtime $benchtime\`; **times are wall-clock on a shared machine** (the instruction counts below are not). *k* is the growth exponent against the next smaller case measured — ten times fewer entries, or the previous value size (time ∝ size^k: 1 is linear, 2 quadratic; fixed costs make it less than 1 at small sizes)."
	md ""
	"$driver" benchtable -summary "$tmp/bench.txt" | mdcat
	md "" "<details><summary>Every case: one table per operation (medians, ratios, growth)</summary>" ""
	"$driver" benchtable "$tmp/bench.txt" | mdcat
	md "</details>" ""
	say "benchstat"
	sed -E 's#^(Benchmark[^ \t]*)/(lens|otel-sdk|floor|lens-setup|lens-setup-osenv|carrier-parse)(-[0-9]+)?([ \t])#\1/impl=\2\3\4#' "$tmp/bench.txt" >"$tmp/bench-impl.txt"
	if go -C tools/lint build -o "$tmp/benchstat" golang.org/x/perf/cmd/benchstat 2>"$tmp/benchstat.err"; then
		md "<details><summary>benchstat (columns: implementations; rows: cases)</summary>" "" '```text'
		"$tmp/benchstat" -col /impl "$tmp/bench-impl.txt" | mdcat
		md '```' "" "</details>" ""
	else
		say "benchstat did not build (see below); its tables are left out"
		cat "$tmp/benchstat.err" >&2
	fi
fi

# ---------------------------------------------------------------- counts
callgrind_costs() { # OUTFILE ARGS...: run under callgrind, print "name cost" lines
	local out=$1
	shift
	env GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off GOMAXPROCS=1 OTEL_EXPORTER_OTLP_ENDPOINT="http://$refusing" \
		valgrind --tool=callgrind --callgrind-out-file="$out" --compress-strings=no --compress-pos=no "$@" >/dev/null 2>"$out.err" ||
		{ cat "$out.err" >&2; return 1; }
	"$driver" callgrind-costs "$out"
}
if on counts && command -v valgrind >/dev/null; then
	say "instruction counts: carrier operations (lineardriver, 4 runs under callgrind)"
	pids=()
	for run in "1000 10" "16000 10" "16 1024" "16 16384"; do
		read -r n size <<<"$run"
		callgrind_costs "$tmp/cg.lin.$n.$size" "$tmp/lineardriver" -entries "$n" -size "$size" >"$tmp/lin.$n.$size" &
		pids+=($!)
	done
	sizes=(10000 100000)
	[[ -z $quick ]] && sizes+=(1000000)
	say "instruction counts: Parse, Format, Check, Detect, ResourceAttributes, Setup at ${sizes[*]} entries"
	for n in "${sizes[@]}"; do
		callgrind_costs "$tmp/cg.cnt.$n" "$driver" count -entries "$n" >"$tmp/cnt.$n" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || { say "a callgrind run failed"; exit 1; }; done
	md "## Instruction counts" ""
	md "Counted by Valgrind's callgrind (inclusive instructions of each operation's own never-inlined function, the allocator included; garbage collector off, \`GOMAXPROCS=1\`, \`GODEBUG=asyncpreemptoff=1\`): they do not depend on the machine's load. *ratio* is the instruction ratio divided by the input ratio: about 1 or less is linear (carrier/linear_test.go fails above 2)."
	md ""
	commas='function c(n,  s) { s = sprintf("%.0f", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s); return s }'
	md "| operation | 1,000 entries | 16,000 entries | ratio (÷16) | 16 × 1 KiB | 16 × 16 KiB | ratio (÷16) |" "|---|---|---|---|---|---|---|"
	join -j1 <(sort "$tmp/lin.1000.10") <(sort "$tmp/lin.16000.10") | join -j1 - <(sort "$tmp/lin.16.1024") | join -j1 - <(sort "$tmp/lin.16.16384") |
		awk "$commas"'{ n=$1; sub(/^main\.measure/, "", n); if (n == "QuadraticCanary") n = n " (deliberately quadratic)";
			printf "| %s | %s | %s | %.2f | %s | %s | %.2f |\n", n, c($2), c($3), $3/$2/16, c($4), c($5), $5/$4/16 }' | mdcat
	md ""
	if [[ -n $quick ]]; then
		md "| operation | 10,000 entries | 100,000 entries | ratio (÷10) |" "|---|---|---|---|"
		join -j1 <(sort "$tmp/cnt.10000") <(sort "$tmp/cnt.100000") | grep -v SetupTypical |
			awk "$commas"'{ n=$1; sub(/^main\.measure/, "", n); printf "| %s | %s | %s | %.2f |\n", n, c($2), c($3), $3/$2/10 }' | mdcat
	else
		md "| operation | 10,000 entries | 100,000 entries | ratio (÷10) | 1,000,000 entries | ratio (÷10) |" "|---|---|---|---|---|---|"
		join -j1 <(sort "$tmp/cnt.10000") <(sort "$tmp/cnt.100000") | join -j1 - <(sort "$tmp/cnt.1000000") | grep -v SetupTypical |
			awk "$commas"'{ n=$1; sub(/^main\.measure/, "", n); printf "| %s | %s | %s | %.2f | %s | %.2f |\n", n, c($2), c($3), $3/$2/10, c($4), $4/$3/10 }' | mdcat
	fi
	typical=$(awk '$1 == "main.measureSetupTypical" {print $2}' "$tmp/cnt.10000")
	fig[setup_instr]=$typical
	md "" "Parse, Format (of the parsed map), Check (every key required, two forbidden, duplicates), ResourceAttributes and Setup (with \`lens.WithEnv\`, a discarding span exporter and a manual metric reader) get a carrier of N entries of 10-byte escaped values; Detect the Slurm task of a 10,000-rank job with the launcher's carrier followed by the N entries. The first \`lens.Setup\` of a typical worker (\`scalegen.Worker\`: the configuration from its environment, OTLP/gRPC traces and metrics, globals installed; Shutdown not counted): **$(awk "$commas"' BEGIN { print c(ARGV[1]) }' "$typical") instructions**."
	md ""
fi

# ---------------------------------------------------------------- cli
icount() { # ENV-FILE BINARY ARGS...: median instruction count of $reps runs (cachegrind)
	local envfile=$1
	shift
	local i vals=()
	local -a envs
	mapfile -t envs <"$envfile"
	for ((i = 0; i < reps; i++)); do
		vals+=("$(env -i "${envs[@]}" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null </dev/null |
			awk '/I *refs:/ {gsub(",", "", $NF); print $NF}')")
	done
	printf '%s\n' "${vals[@]}" | sort -n | awk '{v[NR]=$1} END {if (NR == 0 || v[1] == "") print "-"; else print v[int((NR+1)/2)]}'
}
if on cli && command -v valgrind >/dev/null; then
	say "instruction counts of lens per task ($reps runs each, median; cachegrind)"
	printf '%s\n' PATH=/usr/bin:/bin GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off >"$tmp/env.empty"
	{ "$driver" env slurm-task | grep -v '^PATH='; printf '%s\n' PATH=/usr/bin:/bin GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off; } >"$tmp/env.slurm"
	tel=(NEMO_LENS_ENABLED=true "OTEL_EXPORTER_OTLP_ENDPOINT=http://$refusing")
	for e in empty slurm; do
		cat "$tmp/env.$e" >"$tmp/env.$e.grpc"
		printf '%s\n' "${tel[@]}" >>"$tmp/env.$e.grpc"
		cat "$tmp/env.$e.grpc" >"$tmp/env.$e.http"
		echo OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf >>"$tmp/env.$e.http"
	done
	bins=(lens lens-static)
	[[ -n $have_before ]] && bins=(lens-before lens-before-static lens lens-static)
	declare -A cnt=()
	for e in empty slurm; do
		for b in "${bins[@]}"; do
			cnt[$e.$b.env]=$(icount "$tmp/env.$e" "$tmp/$b" env --stage task) &&
				cnt[$e.$b.detect]=$(icount "$tmp/env.$e" "$tmp/$b" detect) &&
				cnt[$e.$b.exec]=$(icount "$tmp/env.$e" "$tmp/$b" exec -- /bin/true) &&
				cnt[$e.$b.grpc]=$(icount "$tmp/env.$e.grpc" "$tmp/$b" exec -- /bin/true) &&
				cnt[$e.$b.http]=$(icount "$tmp/env.$e.http" "$tmp/$b" exec -- /bin/true)
			say "  $e environment, $b: env ${cnt[$e.$b.env]}, detect ${cnt[$e.$b.detect]}, exec ${cnt[$e.$b.exec]}, grpc ${cnt[$e.$b.grpc]}, http ${cnt[$e.$b.http]}"
		done
	done
	hello=$(icount "$tmp/env.empty" "$tmp/hello-bin")
	M() { awk -v n="$1" 'BEGIN { if (n == "-" || n == "") print "—"; else printf "%.2f M", n/1e6 }'; }
	md "## lens per task: instructions" ""
	md "Instructions executed by one lens process (all its threads; the command that \`lens exec\` starts is not counted), median of $reps runs under \`env -i PATH=/usr/bin:/bin GODEBUG=asyncpreemptoff=1 valgrind --tool=cachegrind --cache-sim=no\` (callgrind counts the same instructions, but aborts on most runs of \`lens exec\` with an assertion in its signal handling, threads.c:247; valgrind warns about syscall 434, pidfd_open, harmlessly). *Empty* is that environment alone; *Slurm task* adds the environment of rank 1234 of a 10,000-task job with the launcher's 19-entry carrier. Telemetry on: \`NEMO_LENS_ENABLED=true\`, \`OTEL_EXPORTER_OTLP_ENDPOINT=http://$refusing\` (nothing listens: the connection is refused), gRPC or \`OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf\`. Counts vary by a few per cent from run to run (goroutine scheduling)."
	md ""
	md "| build | environment | \`lens env --stage task\` | \`lens detect\` | \`lens exec -- /bin/true\` | exec, telemetry on, gRPC (refused) | exec, telemetry on, HTTP (refused) |" "|---|---|---|---|---|---|---|"
	declare -A label=([lens-before]="before ($before_rev), default" [lens-before-static]="before ($before_rev), CGO_ENABLED=0" [lens]="now, default" [lens-static]="now, CGO_ENABLED=0")
	for e in empty slurm; do
		for b in "${bins[@]}"; do
			md "| ${label[$b]} | $([[ $e == empty ]] && echo empty || echo 'Slurm task') | $(M "${cnt[$e.$b.env]}") | $(M "${cnt[$e.$b.detect]}") | $(M "${cnt[$e.$b.exec]}") | $(M "${cnt[$e.$b.grpc]}") | $(M "${cnt[$e.$b.http]}") |"
		done
	done
	md "| static Go hello world (\`fmt.Println\`) | empty | $(M "$hello") | | | | |"
	md ""
	linkage() { file -b "$1" 2>/dev/null | grep -o 'dynamically linked\|statically linked' || echo "?"; }
	mb() { stat -c %s "$1" | awk '{printf "%.1f MB", $1/1e6}'; }
	md "Builds: default $(linkage "$tmp/lens"), $(mb "$tmp/lens"); CGO_ENABLED=0 $(linkage "$tmp/lens-static"), $(mb "$tmp/lens-static")$([[ -n $have_before ]] && echo "; before ($before_rev, default) $(mb "$tmp/lens-before")")."
	md ""
	fig[exec_instr]=${cnt[slurm.lens.exec]}
	fig[exec_grpc_instr]=${cnt[slurm.lens.grpc]}
	fig[exec_static_instr]=${cnt[slurm.lens-static.exec]}
	fig[env_instr]=${cnt[slurm.lens.env]}
fi

# ---------------------------------------------------------------- init
if on init; then
	say "GODEBUG=inittrace=1"
	md "## Package initialisation at start-up" ""
	for b in lens ${have_before:+lens-before}; do
		for ((i = 0; i < 5; i++)); do
			env -i PATH=/usr/bin:/bin GODEBUG=inittrace=1 "$tmp/$b" env --stage task 2>"$tmp/init.$b.$i" >/dev/null
		done
		lbl="\`lens env --stage task\`, $([[ $b == lens ]] && echo 'now' || echo "before ($before_rev)")"
		"$driver" inittrace -top 8 -label "$lbl" "$tmp"/init."$b".* | mdcat
	done
	md "Clock times are wall-clock (noisy on a shared machine); bytes and allocations are exact."
	md ""
fi

# ---------------------------------------------------------------- otlp
if on otlp; then
	say "OTLP export sizes"
	md "## Bytes the resource adds to each OTLP export" ""
	env -u OTEL_RESOURCE_ATTRIBUTES -u OTEL_SERVICE_NAME "$driver" otlp 2>"$tmp/otlp.fig" | mdcat
	for kv in $(tail -1 "$tmp/otlp.fig"); do fig[otlp_${kv%%=*}]=${kv#*=}; done
fi

# ---------------------------------------------------------------- size
if on size; then
	say "input-size table (one process per cell, $size_repeat runs each)"
	md "## Input size: time and peak memory" ""
	env -u OTEL_RESOURCE_ATTRIBUTES OTEL_EXPORTER_OTLP_ENDPOINT="http://$refusing" \
		"$driver" sizetable -lens "$tmp/lens" -repeat "$size_repeat" -progress 2>"$tmp/size.err" | mdcat ||
		{ cat "$tmp/size.err" >&2; exit 1; }
	cat "$tmp/size.err" >&2
	OTEL_EXPORTER_OTLP_ENDPOINT="http://$refusing" "$driver" lib -op setup-typical -input launcher=516B >"$tmp/setup-typical.json"
	fig[setup_cpu_ns]=$(grep -o '"CPUNS":[0-9]*' "$tmp/setup-typical.json" | cut -d: -f2)
	fig[setup_wall_ns]=$(grep -o '"FirstNS":[0-9]*' "$tmp/setup-typical.json" | cut -d: -f2)
	md "A typical worker's first \`lens.Setup\` (OTLP/gRPC traces and metrics, in a fresh process): $(awk -v w="${fig[setup_wall_ns]}" -v c="${fig[setup_cpu_ns]}" 'BEGIN {printf "%.2f ms wall, %.2f ms CPU", w/1e6, c/1e6}')."
	md ""
fi

# ---------------------------------------------------------------- exit
if on exit; then
	say "exit timings of lens exec -- true"
	"$driver" blackhole -for 10m >"$tmp/blackhole.addr" &
	bh_pid=$!
	for ((i = 0; i < 50; i++)); do [[ -s $tmp/blackhole.addr ]] && break; sleep 0.1; done
	hung=$(head -1 "$tmp/blackhole.addr")
	base=(env -i PATH=/usr/bin:/bin)
	on_=(NEMO_LENS_ENABLED=true)
	declare -A cmdline=(
		[off]="${base[*]} $tmp/lens exec -- true"
		[grpc]="${base[*]} ${on_[*]} OTEL_EXPORTER_OTLP_ENDPOINT=http://$refusing $tmp/lens exec -- true"
		[http]="${base[*]} ${on_[*]} OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf OTEL_EXPORTER_OTLP_ENDPOINT=http://$refusing $tmp/lens exec -- true"
		[hung-grpc]="${base[*]} ${on_[*]} OTEL_EXPORTER_OTLP_ENDPOINT=http://$hung $tmp/lens exec --flush-timeout 1s -- true"
		[hung-http]="${base[*]} ${on_[*]} OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf OTEL_EXPORTER_OTLP_ENDPOINT=http://$hung $tmp/lens exec --flush-timeout 1s -- true"
	)
	declare -A desc=(
		[off]="telemetry off"
		[grpc]="telemetry on, gRPC, collector refuses"
		[http]="telemetry on, HTTP, collector refuses"
		[hung-grpc]="telemetry on, gRPC, collector hangs, \`--flush-timeout 1s\`"
		[hung-http]="telemetry on, HTTP, collector hangs, \`--flush-timeout 1s\`"
	)
	md "## At exit: lens exec's flush" ""
	md "| \`lens exec -- true\` | mean | median | min | max | CPU (user+sys) |" "|---|---|---|---|---|---|"
	tool=
	for k in off grpc http hung-grpc hung-http; do
		n=$exit_runs
		[[ $k == hung-* ]] && n=$((exit_runs < 5 ? exit_runs : 5))
		if command -v hyperfine >/dev/null; then
			tool="hyperfine (--warmup 2)"
			hyperfine -N --warmup 2 --runs "$n" --export-csv "$tmp/hf.$k.csv" "${cmdline[$k]}" >/dev/null 2>"$tmp/hf.$k.err" ||
				{ cat "$tmp/hf.$k.err" >&2; exit 1; }
			# command,mean,stddev,median,user,system,min,max
			line=$(tail -1 "$tmp/hf.$k.csv" | awk -F, '{printf "mean=%s median=%s min=%s max=%s cpu=%s", $(NF-6), $(NF-4), $(NF-1), $NF, $(NF-3)+$(NF-2)}')
		else
			tool="a loop of runs (scaledriver walltime)"
			# shellcheck disable=SC2086
			line=$("$driver" walltime -n "$n" -- ${cmdline[$k]})
		fi
		declare -A t=()
		for kv in $line; do t[${kv%%=*}]=${kv#*=}; done
		ms() { awk -v s="$1" 'BEGIN {printf "%.1f ms", s*1000}'; }
		md "| ${desc[$k]} ($n runs) | $(ms "${t[mean]}") | $(ms "${t[median]}") | $(ms "${t[min]}") | $(ms "${t[max]}") | $(ms "${t[cpu]}") |"
		fig[exit_${k}_s]=${t[median]}
		fig[exit_${k}_cpu]=${t[cpu]}
	done
	kill "$bh_pid" 2>/dev/null || true
	wait "$bh_pid" 2>/dev/null || true
	bh_pid=
	md "" "Measured with $tool; the hung collector accepts connections and never answers (\`scaledriver blackhole\`). Wall times are from a shared machine."
	md ""
fi

# ---------------------------------------------------------------- rank
if on rank; then
	md "## What a 10,000-rank job pays" ""
	awk -v ranks=10000 -v exec_i="${fig[exec_instr]:-}" -v exec_g="${fig[exec_grpc_instr]:-}" -v setup_i="${fig[setup_instr]:-}" \
		-v exec_cpu="${fig[exit_off_cpu]:-}" -v exec_wall="${fig[exit_off_s]:-}" -v grpc_wall="${fig[exit_grpc_s]:-}" -v http_wall="${fig[exit_http_s]:-}" \
		-v setup_cpu="${fig[setup_cpu_ns]:-}" -v res_b="${fig[otlp_resource_bytes]:-}" -v res_z="${fig[otlp_resource_gzip_bytes]:-}" \
		-v def_b="${fig[otlp_sdk_default_bytes]:-}" -v span_b="${fig[otlp_span_bytes]:-}" -v req1_b="${fig[otlp_request1_bytes]:-}" -v nattr="${fig[otlp_attributes]:-}" '
	function have(v) { return v != "" && v != "-" }
	BEGIN {
		print "Per rank, at start: one `lens exec --rank-from slurm -- WORKER` (the launcher carrier it extends has 19 entries, 516 B; the worker receives 22 entries, 574 B — far below the 131,046 B an environment string can hold, and every operation is linear up to that size and beyond) and one `lens.Setup` in the worker."
		if (have(exec_i) && have(setup_i)) {
			printf "In instructions: %.2f M for lens exec (telemetry off; %.2f M with telemetry on) and %.2f M for Setup, so **%.1f G instructions summed over 10,000 ranks** (%.1f G with lens exec telemetry on).", exec_i/1e6, exec_g/1e6, setup_i/1e6, ranks*(exec_i+setup_i)/1e9, ranks*(exec_g+setup_i)/1e9
		}
		if (have(exec_cpu) && have(setup_cpu)) {
			printf " In CPU time: %.1f ms for lens exec (user+system, measured) and %.2f ms for a cold Setup: **%.0f CPU seconds summed over the job**, about %.1f ms per rank, spread over the ranks'"'"' own cores (wall time per rank: %.1f ms for lens exec).", exec_cpu*1000, setup_cpu/1e6, ranks*(exec_cpu+setup_cpu/1e9), (exec_cpu+setup_cpu/1e9)*1000, exec_wall*1000
		}
		print ""
		print ""
		if (have(res_b)) {
			printf "Per export: every OTLP export request carries the resource once — %d attributes, **%d B** (%d B gzip-compressed; the SDK'"'"'s default resource is %d B), next to %d B per span. Requests go by time more than by span: a rank'"'"'s spans leave at least every 5 s while any are pending (OTEL_BSP_SCHEDULE_DELAY), at most 512 to a request (OTEL_BSP_MAX_EXPORT_BATCH_SIZE), and its metrics every 10 s (OTEL_METRIC_EXPORT_INTERVAL; a metrics request carries the same resource). A rank that always has a span pending sends 17,280 span requests and 8,640 metric requests a day: %.0f MB of resource a day per rank, **%.0f GB a day for 10,000 ranks** (%.0f GB gzip-compressed). In a full batch of 512 spans the resource is %.1f %% of the request, in a batch of one span %.0f %%: fuller batches (a longer OTEL_BSP_SCHEDULE_DELAY) make it cheaper.\n", nattr, res_b, res_z, def_b, span_b, 25920*res_b/1e6, ranks*25920*res_b/1e9, ranks*25920*res_z/1e9, 100*res_b/(res_b+512*span_b), 100*res_b/(res_b+req1_b)
			print ""
		}
		if (have(grpc_wall)) {
			printf "At exit: lens exec shuts telemetry down after the command exits, within --flush-timeout (default 5 s) whatever the collector does (a hung collector: the measured runs end after the 1 s given). A collector that refuses the connection ends it at once: lens exec -- true took %.1f ms (gRPC) and %.1f ms (HTTP) against %.1f ms with telemetry off. A Go worker'"'"'s Handle.Shutdown is bounded by its context (DefaultShutdownTimeout, 10 s, when it has none) and also returns at once on a refusal (ErrCollectorRefused). So a job whose collector is down loses no time at exit; one whose collector hangs loses at most --flush-timeout per rank, in parallel across ranks.\n", grpc_wall*1000, http_wall*1000, exec_wall*1000
		}
	}' | mdcat
	md ""
fi

run_busy1=$(stat_busy)
run_secs=$((SECONDS - run_start))
# This script's CPU and that of every child it waited for (bash's times).
times >"$tmp/times" # in this shell: a command substitution would report its own
ours=$(awk '{ for (i = 1; i <= NF; i++) { split($i, p, "m"); t += p[1]*60 + p[2] } } END { printf "%.2f", t }' "$tmp/times")
other=$(awk -v a="$run_busy0" -v b="$run_busy1" -v o="$ours" -v w="$run_secs" -v n="$(nproc)" \
	'BEGIN { x = b - a - o; if (x < 0) x = 0; printf "%.0f CPU-seconds (%.0f %% of the %d CPUs over %d s)", x, (w > 0 ? 100*x/(w*n) : 0), n, w }')
load_end=$(load)
busy_end=$(cpu_busy)
md "---" "" "Load average at the start: $load_start, at the end: $load_end (1, 5, 15 min). Other work on the machine: $busy_start of the CPUs busy at the start and $busy_end at the end (5-s samples while this script was idle); during the run, processes other than this script's used $other. Reproduce: \`scripts/scale-report.sh${quick:+ --quick} -o report.md\` ($((SECONDS / 60)) min $((SECONDS % 60)) s here)."
cat "$report"
if [[ -n $out_file ]]; then
	cp "$report" "$out_file"
	say "report written to $out_file"
fi
say "done in $((SECONDS / 60)) min $((SECONDS % 60)) s"
