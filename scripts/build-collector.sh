#!/usr/bin/env bash
# Builds lens-collector, the OpenTelemetry Collector with the lens processor
# (docs/collector.md), from collector/cmd/lens-collector (a nested module:
# collector/go.mod, with lens-go replaced by this checkout).
#
# Usage: scripts/build-collector.sh DIR
#   Writes DIR/lens-collector for GOOS/GOARCH (default linux/the host's).
#
# The build is the lens command's (scripts/release.sh): CGO_ENABLED=0
# (static, no libc), -trimpath, -buildvcs=false, -mod=readonly,
# -ldflags "-s -w -buildid=" and a version stamp, so that two builds of one
# commit are byte-identical. LENS_COLLECTOR_VERSION sets the stamp (default:
# git describe of HEAD, else "(devel)").
#
# Service discovery of the Prometheus receiver: static, file, http,
# kubernetes and dns (-tags remove_all_sd,enable_kubernetes_sd,enable_dns_sd,
# Prometheus's own build tags). The cloud providers' discovery (AWS, Azure,
# GCE, OpenStack, Consul, ... 25 in all) is left out: a node's Collector
# scrapes its own node's exporters, and their SDKs are half of the sources to
# compile (docs/collector.md#build). LENS_COLLECTOR_TAGS replaces the tags
# (LENS_COLLECTOR_TAGS= builds every discovery).
set -euo pipefail

die() { echo "build-collector.sh: $*" >&2; exit 1; }
(($# == 1)) || die "usage: scripts/build-collector.sh DIR"
out=$1
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

tags=${LENS_COLLECTOR_TAGS-remove_all_sd,enable_kubernetes_sd,enable_dns_sd}
version=${LENS_COLLECTOR_VERSION:-$(git -C "$root" describe --tags --always --dirty 2>/dev/null || echo '(devel)')}
arch=${GOARCH:-$(go env GOARCH)}
os=${GOOS:-linux}

echo "build-collector.sh: lens-collector $version, $(go env GOVERSION), $os/$arch, tags \"$tags\" -> $out/lens-collector"
env -C "$root/collector" CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" GOAMD64=v1 GOARM64=v8.0 GOEXPERIMENT= \
	GOFLAGS="-mod=readonly -buildvcs=false" \
	go build -trimpath -tags="$tags" -ldflags="-s -w -buildid= -X main.version=$version" \
	-o "$out/lens-collector" ./cmd/lens-collector
ls -l "$out/lens-collector"
