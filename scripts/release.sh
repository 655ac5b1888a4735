#!/usr/bin/env bash
# The release artifacts of lens, built reproducibly from the current checkout
# (docs/install.md#release-build): for each platform a static lens binary in
# lens_VERSION_linux_ARCH.tar.gz, with INSTALL.md, LICENSE (lens-go's,
# Apache-2.0) and THIRD_PARTY_LICENSES.txt (the licenses of the Go
# standard library and of every module linked in), the TaskProlog wrapper
# lens-taskprolog.sh and the example policy taskprolog.conf
# (docs/taskprolog.md#slurm-conf); beside it, unless --no-collector, the
# node's Collector in lens-collector_VERSION_linux_ARCH.tar.gz (built by
# scripts/build-collector.sh, the same way: docs/collector.md#build), with
# its own INSTALL.md, LICENSE, THIRD_PARTY_LICENSES.txt and the per-node
# configuration lens-collector.yaml; and SHA256SUMS of all the
# archives. The same commit (and the same uncommitted changes) gives
# byte-identical archives, wherever the checkout lies and whatever the
# caller's Go environment says.
#
# Usage: scripts/release.sh [--out DIR] [--arch amd64,arm64] [--no-collector]
#   --out DIR        where the archives and SHA256SUMS go (default dist/, which
#                    git ignores); earlier lens_*.tar.gz, lens-collector_*.tar.gz
#                    and SHA256SUMS there are replaced
#   --arch LIST      the linux architectures (default amd64,arm64)
#   --no-collector   lens alone (lens-collector's build, cold, takes tens of
#                    minutes and 1.6 GB of modules per architecture:
#                    docs/testing.md#collector)
#
# What is pinned (each changes the bytes of the binary):
#   Go toolchain  GOTOOLCHAIN=go1.26.8 (the go command fetches that version
#                 through the module proxy when the local one differs)
#   build         CGO_ENABLED=0 (static, no libc), -trimpath, -buildvcs=false,
#                 -mod=readonly, GOAMD64=v1, GOARM64=v8.0, no GOEXPERIMENT,
#                 -ldflags "-s -w -buildid=" (no symbol table, no build id)
#   stamp         -X internal/telemetry.stampVersion/stampCommit/stampModified:
#                 the version the go command would give this checkout (the
#                 semver tag on HEAD; else a pseudo-version from the nearest
#                 v0/v1 tag below it and the commit; "+dirty" when the tree has
#                 uncommitted changes or untracked files), the commit, and
#                 whether the tree was modified
#   archives      GNU tar, names sorted, owner and group 0, modes 0755/0644,
#                 every mtime the commit time; gzip -n (no name, no time)
set -euo pipefail
shopt -s inherit_errexit
export LC_ALL=C
cd "$(dirname "$0")/.."
root=$(pwd)

go_toolchain=go1.26.8
module=github.com/nemolens/lens-go
out=$root/dist
arches=(amd64 arm64)
collector=true

die() {
	echo "release.sh: $*" >&2
	exit 1
}

while (($#)); do
	case $1 in
	--out)
		[[ $# -ge 2 ]] || die "--out needs a directory"
		out=$2
		shift 2
		;;
	--arch)
		[[ $# -ge 2 ]] || die "--arch needs a list (amd64,arm64)"
		IFS=, read -r -a arches <<<"$2"
		shift 2
		;;
	--no-collector)
		collector=false
		shift
		;;
	-h | --help)
		sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
		exit 0
		;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
for a in "${arches[@]}"; do
	case $a in
	amd64 | arm64) ;;
	*) die "unsupported architecture '$a' (amd64, arm64)" ;;
	esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

# ---------------------------------------------------------------- version stamp
git rev-parse --verify -q HEAD >/dev/null || die "$root is not a git checkout with a commit: the stamp needs one"
commit=$(git rev-parse HEAD)
epoch=$(git log -1 --format=%ct HEAD)
modified=false
[[ -z $(git --no-optional-locks status --porcelain) ]] || modified=true

semver='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$'
# highest_tag ARGS...: the highest v0/v1 semver tag that git tag ARGS lists
# (prereleases below their release).
highest_tag() {
	git -c versionsort.suffix=- tag --sort=-v:refname --list 'v[01].*' "$@" |
		grep -E "$semver" | head -n 1 || true
}
# The go command's rules (cmd/go, "Pseudo-versions"): the tag on HEAD, else
# a pseudo-version after the highest tag that is an ancestor of HEAD.
version=$(highest_tag --points-at HEAD)
if [[ -z $version ]]; then
	base=$(highest_tag --merged HEAD)
	stamp="$(TZ=UTC date -d "@$epoch" +%Y%m%d%H%M%S)-${commit:0:12}"
	if [[ -z $base ]]; then
		version=v0.0.0-$stamp
	elif [[ $base =~ $semver ]] && [[ -n ${BASH_REMATCH[4]} ]]; then
		version=$base.0.$stamp # v1.2.3-pre -> v1.2.3-pre.0.TIME-REV
	else
		[[ $base =~ $semver ]]
		version=v${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.$((BASH_REMATCH[3] + 1))-0.$stamp
	fi
fi
[[ $modified == false ]] || version+=+dirty

# ---------------------------------------------------------------- build
export GOTOOLCHAIN=$go_toolchain
gov=$(go env GOVERSION) || die "go $go_toolchain is not available (GOTOOLCHAIN=$go_toolchain)"
[[ $gov == "$go_toolchain" ]] || die "go env GOVERSION says $gov, want $go_toolchain"
work=$(mktemp -d "${TMPDIR:-/tmp}/lens-release.XXXXXX")
trap 'rm -rf "$work"' EXIT

xpkg=$module/internal/telemetry
ldflags="-s -w -buildid= -X $xpkg.stampVersion=$version -X $xpkg.stampCommit=$commit -X $xpkg.stampModified=$modified"
echo "release.sh: lens $version (commit $commit, modified $modified), $gov, linux/${arches[*]} -> $out"

# third_party BINARY: the license texts of the Go standard library and of
# every module BINARY links (from the module cache).
third_party() {
	local modcache path ver dir f esc
	modcache=$(go env GOMODCACHE)
	printf 'Third-party licenses of the %s binary (%s).\n' "$(basename "$1")" "$version"
	printf '\n==== Go standard library and runtime (%s)\n\n' "$gov"
	cat "$(go env GOROOT)/LICENSE"
	while read -r path ver; do
		if [[ $path == "$module" ]]; then # lens-go itself, replaced by this checkout (lens-collector)
			printf '\n==== %s (this repository, LICENSE)\n\n' "$path"
			cat "$root/LICENSE"
			continue
		fi
		esc=$(sed 's/[A-Z]/!\L&/g' <<<"$path@$ver")
		dir=$modcache/$esc
		f=$({ find "$dir" -maxdepth 1 -type f \( -iname 'LICENSE*' -o -iname 'LICENCE*' -o -iname 'COPYING*' \) 2>/dev/null || true; } | sort | head -n 1)
		[[ -n $f ]] || die "no license file for $path@$ver in $dir (run go mod download)"
		printf '\n==== %s %s (%s)\n\n' "$path" "$ver" "$(basename "$f")"
		cat "$f"
	done < <(go version -m "$1" | awk '$1 == "dep" {print $2, $3}')
}

install_note() { # ARCH
	cat <<EOF
# lens $version for linux/$1

A static binary (no libc, no Go needed) of the lens command of lens-go
($module), commit $commit.

    sha256sum -c --ignore-missing SHA256SUMS    # beside the downloaded archive
    tar -xzf lens_${version}_linux_$1.tar.gz
    install -D -m 0755 lens_${version}_linux_$1/lens /shared/tools/lens/$version/linux_$1/lens
    /shared/tools/lens/$version/linux_$1/lens --version

lens-taskprolog.sh and taskprolog.conf are Slurm's TaskProlog wrapper
(naming the path above) and an example policy: docs/taskprolog.md.

Putting it on a cluster's shared path, a module file for Lmod or
Environment Modules, and pinning the version in a job script:
https://$module/blob/$commit/docs/install.md

lens-go is licensed under the Apache License 2.0 (LICENSE); the licenses
of the Go standard library and of every module linked into the binary are
in THIRD_PARTY_LICENSES.txt.
EOF
}

[[ -f LICENSE ]] || die "$root has no LICENSE file: every archive carries lens-go's license"

collector_note() { # ARCH
	cat <<EOF
# lens-collector $version for linux/$1

A static binary of lens-collector, the OpenTelemetry Collector distribution
with lens-go's lens processor ($module/collector), commit $commit: it gives
telemetry from the node's processes, and the GPU series of DCGM exporter,
the resource of the job that runs them.

    sha256sum -c --ignore-missing SHA256SUMS    # beside the downloaded archive
    tar -xzf lens-collector_${version}_linux_$1.tar.gz
    install -D -m 0755 lens-collector_${version}_linux_$1/lens-collector /usr/local/bin/lens-collector
    lens-collector --version
    lens-collector --config lens-collector_${version}_linux_$1/lens-collector.yaml   # as root: docs/collector.md#privileges

lens-collector.yaml is the per-node configuration of the guide: OTLP from
the node's processes, DCGM exporter and node exporter scraped, everything
forwarded to the site's Collector (edit its endpoint). The guide:
https://$module/blob/$commit/docs/collector.md

lens-go is licensed under the Apache License 2.0 (LICENSE); the licenses
of the Go standard library and of every module linked into the binary are
in THIRD_PARTY_LICENSES.txt.
EOF
}

rm -f "$out"/lens_*.tar.gz "$out"/lens-collector_*.tar.gz "$out/SHA256SUMS"
for arch in "${arches[@]}"; do
	name=lens_${version}_linux_$arch
	dir=$work/$name
	mkdir -p "$dir"
	env CGO_ENABLED=0 GOOS=linux GOARCH="$arch" GOAMD64=v1 GOARM64=v8.0 GOEXPERIMENT= \
		GOFLAGS="-mod=readonly -buildvcs=false" \
		go build -trimpath -ldflags="$ldflags" -o "$dir/lens" ./cmd/lens
	third_party "$dir/lens" >"$dir/THIRD_PARTY_LICENSES.txt"
	install_note "$arch" >"$dir/INSTALL.md"
	cp LICENSE "$dir/LICENSE"
	# The TaskProlog's two files (docs/taskprolog.md#slurm-conf), so that no
	# compute node needs a clone: the wrapper naming this version's shared
	# copy (docs/install.md#shared-path), and the example policy.
	sed "s|^LENS=[^ ]*|LENS=/shared/tools/lens/$version/linux_$arch/lens|" examples/lens-taskprolog.sh >"$dir/lens-taskprolog.sh"
	cp examples/taskprolog.conf "$dir/taskprolog.conf"
	chmod 0755 "$dir" "$dir/lens" "$dir/lens-taskprolog.sh"
	find "$dir" -type f ! -name lens ! -name lens-taskprolog.sh -exec chmod 0644 {} +
	tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=gnu \
		-C "$work" -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
	[[ $collector == true ]] || continue

	name=lens-collector_${version}_linux_$arch
	dir=$work/$name
	mkdir -p "$dir"
	env -u LENS_COLLECTOR_TAGS GOARCH="$arch" LENS_COLLECTOR_VERSION="$version" bash scripts/build-collector.sh "$dir" >/dev/null
	(cd collector && third_party "$dir/lens-collector") >"$dir/THIRD_PARTY_LICENSES.txt"
	collector_note "$arch" >"$dir/INSTALL.md"
	cp LICENSE "$dir/LICENSE"
	cp examples/lens-collector.yaml "$dir/lens-collector.yaml"
	chmod 0755 "$dir" "$dir/lens-collector"
	find "$dir" -type f ! -name lens-collector -exec chmod 0644 {} +
	tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=gnu \
		-C "$work" -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
done
(cd "$out" && LC_ALL=C sha256sum -- lens*_*.tar.gz >SHA256SUMS)
cat "$out/SHA256SUMS"
