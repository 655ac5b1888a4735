#!/usr/bin/env bash
# Build the real backends of the end-to-end tests from their Go module pins
# (docs/backends.md#building):
#   jaeger      Jaeger v2 all-in-one       tools/jaeger       (github.com/jaegertracing/jaeger v1.76.0)
#   otelcol     the log receiver           tools/jaeger       (./otelcol: OTLP receiver + contrib file exporter,
#                                                              on Jaeger's module graph: collector v0.140.0)
#   prometheus  Prometheus 3.16.0          tools/prometheus   (github.com/prometheus/prometheus v0.316.0,
#                                                              -tags remove_all_sd: no service-discovery plugins)
#
# Usage: scripts/build-backends.sh [NAME...]   (default: all three, in this order)
# Environment: BIN_DIR (default <repo>/.bin), GO (default go).
#
# The backends are test fixtures: they are compiled without optimisation or
# inlining (-gcflags='all=-N -l'), which takes a quarter less CPU than an
# optimised build (docs/backends.md#building); the end-to-end tests pass the same.
# The go command decides whether anything needs doing: a binary that matches
# its build inputs is left untouched (about a second each). otelcol after
# jaeger compiles only what Jaeger does not have (one contrib module). Cold
# and warm costs: docs/backends.md#building.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bindir=${BIN_DIR:-"$repo/.bin"}
case "$bindir" in
/*) ;;
*) bindir="$PWD/$bindir" ;;
esac
go=${GO:-go}
mkdir -p "$bindir"

# build NAME MODULE_DIR PACKAGE [GO BUILD FLAGS...]
build() {
	local name=$1 dir=$2 pkg=$3 out=$bindir/$1 before after start end ms state
	shift 3
	# go build only touches an up-to-date OUT, so compare Go build ids, not mtimes.
	before=$("$go" tool buildid "$out" 2>/dev/null || echo none)
	start=$(date +%s%N)
	(cd "$repo/$dir" && "$go" build "$@" -gcflags='all=-N -l' -ldflags='-s -w' -o "$out" "$pkg")
	end=$(date +%s%N)
	after=$("$go" tool buildid "$out" 2>/dev/null || echo none)
	ms=$(((end - start) / 1000000))
	if [ "$before" = "$after" ]; then
		state="up to date"
	else
		state="built $(du -h "$out" | cut -f1)"
	fi
	printf 'build-backends: %s: %s in %d.%03ds\n' "$out" "$state" $((ms / 1000)) $((ms % 1000))
}

names=("$@")
((${#names[@]})) || names=(jaeger otelcol prometheus)
for n in "${names[@]}"; do
	case $n in
	jaeger) build jaeger tools/jaeger github.com/jaegertracing/jaeger/cmd/jaeger ;;
	otelcol) build otelcol tools/jaeger ./otelcol ;;
	prometheus) build prometheus tools/prometheus github.com/prometheus/prometheus/cmd/prometheus -tags remove_all_sd ;;
	*)
		echo "build-backends: unknown backend '$n' (jaeger, otelcol, prometheus)" >&2
		exit 2
		;;
	esac
done
