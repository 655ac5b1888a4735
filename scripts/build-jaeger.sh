#!/usr/bin/env bash
# Build the pinned Jaeger v2 all-in-one binary (tools/jaeger wrapper module).
#
# Usage: scripts/build-jaeger.sh [OUT]      (default OUT: <repo>/.bin/jaeger)
#
# The go command decides whether anything needs doing: when OUT already
# matches the build inputs it is left untouched (about a second). A cold build
# (empty module and build caches) takes several minutes (4.5 min on an idle
# 2-core machine) and ~3 GB of disk; a relink from a warm cache takes seconds.
# Use the binary with: JAEGER_BIN=<OUT> go test ./... (inside e2e/).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-"$repo/.bin/jaeger"}
case "$out" in
/*) ;;
*) out="$PWD/$out" ;;
esac
go=${GO:-go}

mkdir -p "$(dirname "$out")"
# go build only touches an up-to-date OUT, so compare Go build ids, not mtimes.
buildid() { "$go" tool buildid "$1" 2>/dev/null || echo none; }
before=$(buildid "$out")
start=$(date +%s%N)

cd "$repo/tools/jaeger"
"$go" build -ldflags='-s -w' -o "$out" github.com/jaegertracing/jaeger/cmd/jaeger

end=$(date +%s%N)
after=$(buildid "$out")
ms=$(((end - start) / 1000000))
secs=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
if [ "$before" = "$after" ]; then
	state="up to date"
else
	state="built $(du -h "$out" | cut -f1)"
fi
echo "build-jaeger: $out: $state in ${secs}s"
