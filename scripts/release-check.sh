#!/usr/bin/env bash
# The release checks (docs/install.md#release-checks), run by scripts/test.sh's
# release stage:
#   1. scripts/release.sh twice, from the checkout and from a copy of it in
#      another directory: the archives and SHA256SUMS must be byte-identical;
#      the archives must be deterministic tarballs (names sorted, owner 0,
#      mtime the commit time) holding lens, INSTALL.md, the licenses and
#      the TaskProlog's wrapper and example policy
#   2. the version stamp against the go command's own (a build with
#      -buildvcs=true in a clone, untagged, with a tag below HEAD and with a
#      tag on HEAD): needs a tree without uncommitted changes
#   3. the arm64 binary under qemu-aarch64-static (user-mode emulation, run
#      explicitly, no binfmt needed): go test ./cmd/lens -run
#      'TestCLIVectors|TestRelease' with LENS_TEST_BINARY naming it
#   4. the amd64 binary in an empty root (a directory holding only the binary,
#      chroot: no libc, no /etc, no /proc): the same tests (needs root)
#   5. the module files of examples/modulefiles/ loaded by Lmod (Debian's lmod;
#      scripts/test.sh installs it as root): lens on PATH is the release binary
# (these five with --no-collector: lens's archives).
#
# scripts/release-check.sh --collector (scripts/test.sh's collector stage):
# the lens-collector archive for amd64, built twice as in 1 (byte-identical),
# deterministic, holding the static binary, its INSTALL.md, the licenses
# (one section per module the binary links) and lens-collector.yaml, which
# the binary itself validates; its --version is the archive's version. The
# arm64 archive is not built here: a cross-build of the Collector's graph
# costs as much as the amd64 one (docs/testing.md#collector).
# Work files: .bin/release/ (git ignores .bin/). CI=true makes a check that
# cannot run (a dirty tree, no qemu, not root) fail instead of being skipped.
set -euo pipefail
shopt -s inherit_errexit
export LC_ALL=C
cd "$(dirname "$0")/.."
root=$(pwd)
what=lens
case ${1:-} in
--collector) what=collector ;;
'') ;;
*)
	echo "usage: scripts/release-check.sh [--collector]" >&2
	exit 2
	;;
esac
work=$root/.bin/release
[[ $what == lens ]] || work=$root/.bin/release-collector
rm -rf "$work"
mkdir -p "$work"

ci=${CI:-}
t0=$SECONDS
step() { printf '\n-- [%ds] release-check: %s\n' $((SECONDS - t0)) "$*"; }
fail() {
	echo "release-check: FAILED: $*" >&2
	exit 1
}
cannot() { # REASON: skip outside CI, fail in CI
	if [[ $ci == true ]]; then
		fail "$1 (CI=true: this check must run)"
	fi
	echo "release-check: SKIPPED: $1"
}

commit=$(git rev-parse HEAD)
epoch=$(git log -1 --format=%ct HEAD)
modified=false
[[ -z $(git --no-optional-locks status --porcelain) ]] || modified=true

# ---------------------------------------------------------------- 1. reproducible
if [[ $what == lens ]]; then
	release_args=(--no-collector)
else
	release_args=(--arch amd64)
fi
step "release build A (this checkout)"
bash scripts/release.sh "${release_args[@]}" --out "$work/a"

step "release build B (a copy of the checkout in $work/src, same git repository)"
mkdir -p "$work/src"
git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do
	[[ -e $f || -L $f ]] && printf '%s\0' "$f"
done | tar --null -T - -cf - | tar -xf - -C "$work/src"
GIT_DIR=$(git rev-parse --absolute-git-dir) GIT_WORK_TREE=$work/src bash "$work/src/scripts/release.sh" "${release_args[@]}" --out "$work/b"

step "compare A and B"
if ! diff <(cd "$work/a" && ls) <(cd "$work/b" && ls) || ! cmp "$work/a/SHA256SUMS" "$work/b/SHA256SUMS"; then
	fail "two builds of the same tree differ"
fi
for f in "$work"/a/*; do cmp "$f" "$work/b/${f##*/}" || fail "${f##*/} differs between the two builds"; done
(cd "$work/a" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS does not match the archives"
echo "identical: $(cd "$work/a" && ls | tr '\n' ' ')"

# check_tarball ARCHIVE "FILES" "EXECUTABLES": ARCHIVE (NAME.tar.gz) holds
# NAME/ and NAME/FILE for each of FILES, in that order; every entry owned by
# 0/0 with the commit time, the directory and EXECUTABLES rwxr-xr-x, the rest
# rw-r--r--; no time in the gzip header.
check_tarball() {
	local archive=$1 name want got f
	name=$(basename "$archive" .tar.gz)
	want="$name/"
	for f in $2; do want+="|$name/$f"; done
	got=$(tar -tzf "$archive" | paste -sd '|')
	[[ $got == "$want" ]] || fail "$archive holds $got, want $want (in this order)"
	# tar --full-time -tv: MODE OWNER/GROUP SIZE DATE TIME NAME
	tar --numeric-owner --full-time -tvzf "$archive" | while read -r mode owner _ day time path; do
		when=$(TZ=UTC date -d "$day $time UTC" +%s)
		[[ $owner == 0/0 && $when == "$epoch" ]] || fail "$path: owner $owner, mtime $when; want 0/0 and $epoch (the commit time)"
		if [[ $path == */ || " $3 " == *" ${path##*/} "* ]]; then
			[[ $mode == ?rwxr-xr-x ]] || fail "$path: mode $mode, want rwxr-xr-x"
		else
			[[ $mode == -rw-r--r-- ]] || fail "$path: mode $mode, want rw-r--r--"
		fi
	done || exit 1 # fail ended the loop's subshell
	[[ $(od -An -tx1 -j4 -N4 "$archive" | tr -d ' ') == 00000000 ]] ||
		fail "$archive: the gzip header holds a time (gzip -n writes none)"
}

if [[ $what == collector ]]; then
	archives=("$work"/a/lens-collector_*_linux_amd64.tar.gz)
	[[ ${#archives[@]} == 1 && -f ${archives[0]} ]] || fail "want one lens-collector_*_linux_amd64.tar.gz in $work/a"
	name=$(basename "${archives[0]}" .tar.gz)
	version=${name#lens-collector_}
	version=${version%_linux_amd64}
	[[ -f $work/a/lens_${version}_linux_amd64.tar.gz ]] || fail "no lens archive of version $version beside ${archives[0]}"
	check_tarball "${archives[0]}" "INSTALL.md LICENSE THIRD_PARTY_LICENSES.txt lens-collector lens-collector.yaml" lens-collector
	x=$work/x
	mkdir -p "$x"
	tar -xzf "${archives[0]}" -C "$x" --strip-components=1
	cmp -s LICENSE "$x/LICENSE" || fail "${archives[0]}: LICENSE is not the repository's"
	cmp -s examples/lens-collector.yaml "$x/lens-collector.yaml" || fail "${archives[0]}: lens-collector.yaml is not examples/lens-collector.yaml"
	grep -q "lens-collector_${version}_linux_amd64.tar.gz" "$x/INSTALL.md" || fail "INSTALL.md does not name the archive"
	grep -q "Go standard library" "$x/THIRD_PARTY_LICENSES.txt" || fail "THIRD_PARTY_LICENSES.txt lacks the Go license"
	deps=$(go version -m "$x/lens-collector" | awk '$1 == "dep"' | wc -l)
	sections=$(grep -c '^==== ' "$x/THIRD_PARTY_LICENSES.txt")
	((deps > 100 && sections == deps + 1)) ||
		fail "THIRD_PARTY_LICENSES.txt has $sections sections, want the Go license and one per linked module ($deps)"
	if command -v readelf >/dev/null && LC_ALL=C readelf -lW "$x/lens-collector" | grep -q INTERP; then
		fail "lens-collector asks for a dynamic loader"
	fi
	got=$("$x/lens-collector" --version) || fail "lens-collector --version failed"
	[[ $got == *" version $version" ]] || fail "lens-collector --version says '$got', want version $version"
	"$x/lens-collector" validate --config="$x/lens-collector.yaml" || fail "lens-collector rejects its own lens-collector.yaml"
	echo "lens-collector $version: archive, licenses ($deps modules), --version and its configuration checked"
	exit 0
fi

# The archives: name, contents, and deterministic headers.
version=
for arch in amd64 arm64; do
	archives=("$work"/a/lens_*_linux_"$arch".tar.gz)
	[[ ${#archives[@]} == 1 && -f ${archives[0]} ]] || fail "want one lens_*_linux_$arch.tar.gz in $work/a"
	name=$(basename "${archives[0]}" .tar.gz)
	v=${name#lens_}
	v=${v%_linux_"$arch"}
	[[ -z $version || $version == "$v" ]] || fail "archives name two versions: $version, $v"
	version=$v
	check_tarball "${archives[0]}" "INSTALL.md LICENSE THIRD_PARTY_LICENSES.txt lens lens-taskprolog.sh taskprolog.conf" "lens lens-taskprolog.sh"
	mkdir -p "$work/x/$arch"
	tar -xzf "${archives[0]}" -C "$work/x/$arch" --strip-components=1
	cmp -s LICENSE "$work/x/$arch/LICENSE" || fail "${archives[0]}: LICENSE is not the repository's"
	grep -q "Apache License" "$work/x/$arch/LICENSE" && grep -q "Version 2.0, January 2004" "$work/x/$arch/LICENSE" ||
		fail "${archives[0]}: LICENSE is not the Apache License 2.0"
	grep -q "Go standard library" "$work/x/$arch/THIRD_PARTY_LICENSES.txt" || fail "THIRD_PARTY_LICENSES.txt lacks the Go license"
	grep -q "^==== go.opentelemetry.io/otel " "$work/x/$arch/THIRD_PARTY_LICENSES.txt" || fail "THIRD_PARTY_LICENSES.txt lacks go.opentelemetry.io/otel"
	cmp -s examples/taskprolog.conf "$work/x/$arch/taskprolog.conf" || fail "${archives[0]}: taskprolog.conf is not examples/taskprolog.conf"
	[[ $(grep '^LENS=' "$work/x/$arch/lens-taskprolog.sh") == "LENS=/shared/tools/lens/$version/linux_$arch/lens" ]] &&
		diff <(grep -v '^LENS=' examples/lens-taskprolog.sh) <(grep -v '^LENS=' "$work/x/$arch/lens-taskprolog.sh") >/dev/null ||
		fail "${archives[0]}: lens-taskprolog.sh is not examples/lens-taskprolog.sh naming /shared/tools/lens/$version/linux_$arch/lens"
	# Static: no program interpreter (dynamic loader) in the ELF program headers.
	if ! command -v readelf >/dev/null; then
		echo "readelf (binutils) is missing: the ELF headers are not checked (the empty-root run below still is)"
	elif LC_ALL=C readelf -lW "$work/x/$arch/lens" | grep -q INTERP; then
		fail "$arch binary asks for a dynamic loader"
	fi
done
echo "version $version, commit $commit, modified $modified"
[[ $version == *+dirty ]] && [[ $modified == true ]] || [[ $version != *+dirty && $modified == false ]] ||
	fail "version $version and modified=$modified disagree"

# ---------------------------------------------------------------- 2. the stamp against the go command's
# gostamp DIR: the main-module version the go command stamps into a build of DIR.
gostamp() {
	env -C "$1" CGO_ENABLED=0 GOFLAGS="-buildvcs=true -mod=readonly" go build -trimpath -o "$work/gostamp" ./cmd/lens
	go version -m "$work/gostamp" | awk '$1 == "mod" {print $3}'
}
# relversion DIR: the version line of a release build (amd64) of DIR.
relversion() {
	bash "$1/scripts/release.sh" --no-collector --arch amd64 --out "$work/rel-$2" >/dev/null
	tar -xzOf "$work"/rel-"$2"/lens_*_linux_amd64.tar.gz --wildcards '*/lens' >"$work/rel-$2/lens"
	chmod +x "$work/rel-$2/lens"
	"$work/rel-$2/lens" --version | head -n 1
}
if [[ $modified == true ]]; then
	git --no-optional-locks status --porcelain | head -n 20
	cannot "the tree has uncommitted changes or untracked files (above): the stamp is not compared with the go command's (commit first)"
else
	step "the version stamp against the go command's (a clone in $work/clone)"
	# The common git directory: the repository itself, also from a git worktree.
	git clone -q --shared --no-checkout "$(cd "$(git rev-parse --git-common-dir)" && pwd)" "$work/clone"
	git -C "$work/clone" checkout -q --detach "$commit"
	got=$(gostamp "$work/clone")
	[[ $got == "$version" ]] || fail "release.sh stamps $version, the go command $got"
	echo "the repository's tags: $version (both)"
	git -C "$work/clone" tag -l | xargs -r git -C "$work/clone" tag -d >/dev/null
	if [[ -n $(git tag -l) ]]; then
		got=$(gostamp "$work/clone")
		rel=$(relversion "$work/clone" untagged)
		[[ $got == v0.0.0-* && $rel == "lens $got" ]] || fail "untagged: release build says '$rel', the go command $got"
		echo "untagged: $got (both)"
	fi
	if git -C "$work/clone" rev-parse -q --verify HEAD~1 >/dev/null; then
		git -C "$work/clone" tag v1.4.0 HEAD~1
		got=$(gostamp "$work/clone")
		rel=$(relversion "$work/clone" below)
		[[ $got == v1.4.1-0.* && $rel == "lens $got" ]] || fail "tag v1.4.0 below HEAD: release build says '$rel', the go command $got"
		echo "tag v1.4.0 below HEAD: $got (both)"
	fi
	git -C "$work/clone" tag v1.5.0-rc.1 HEAD
	got=$(gostamp "$work/clone")
	rel=$(relversion "$work/clone" head)
	[[ $got == v1.5.0-rc.1 && $rel == "lens v1.5.0-rc.1" ]] || fail "tag v1.5.0-rc.1 on HEAD: release build says '$rel', the go command $got"
	echo "tag v1.5.0-rc.1 on HEAD: $got (both)"
	# The go command records each version it derived from a tag in the module
	# cache (cache/download/MODULE/@v/VERSION.info, by commit) and reuses the
	# record in any later build of that commit, tags or not: the tags above
	# live only in the throwaway clone, so their records go with it (else
	# TestInstallDocs and a user's go install of this commit say v1.5.0-rc.1).
	rm -f "$(go env GOMODCACHE)/cache/download/github.com/nemolens/lens-go/@v/"{v1.4.1-0.*-"${commit:0:12}",v1.5.0-rc.1}.info
fi

# ---------------------------------------------------------------- 3, 4. where it runs
# smoke PLATFORM WRAPPER SELF: the CLI vector tests and the release tests of
# cmd/lens against the binary WRAPPER runs.
smoke() {
	chmod +x "$2"
	env LENS_TEST_BINARY="$2" LENS_RELEASE_PLATFORM="$1" LENS_RELEASE_VERSION="$version" \
		LENS_RELEASE_COMMIT="$commit" LENS_RELEASE_MODIFIED="$modified" LENS_RELEASE_SELF="$3" \
		go test -count=1 -run '^(TestCLIVectors|TestRelease)' ./cmd/lens -v >"$work/smoke-${1#linux/}.log" 2>&1 || {
		grep -E -- '^(=== RUN|--- FAIL|FAIL|panic)|_test.go' "$work/smoke-${1#linux/}.log" | grep -v '^=== RUN' | tail -n 60 >&2
		fail "smoke tests of the $1 binary (log: $work/smoke-${1#linux/}.log)"
	}
	printf '%s: %d tests passed, %d skipped (log: %s)\n' "$1" \
		"$(grep -c -- '--- PASS' "$work/smoke-${1#linux/}.log")" "$(grep -c -- '--- SKIP' "$work/smoke-${1#linux/}.log" || true)" \
		"$work/smoke-${1#linux/}.log"
}

step "arm64 binary under user-mode emulation"
qemu=$(command -v qemu-aarch64-static || true)
if [[ -z $qemu ]]; then
	cannot "qemu-aarch64-static is missing (Debian package qemu-user-static; scripts/test.sh installs it as root)"
else
	out=$("$qemu" "$work/x/arm64/lens" --version)
	echo "$out"
	[[ $out == *"platform: linux/arm64"* ]] || fail "the arm64 binary says: $out"
	printf '#!/bin/sh\nexec %q %q "$@"\n' "$qemu" "$work/x/arm64/lens" >"$work/lens-arm64"
	smoke linux/arm64 "$work/lens-arm64" ""
fi

step "amd64 binary in an empty root"
if [[ $(id -u) != 0 ]]; then
	cannot "not root: chroot into the empty root needs root"
else
	mkdir -p "$work/root"
	cp "$work/x/amd64/lens" "$work/root/lens"
	echo "the root holds: $(cd "$work/root" && find . | sort | paste -sd ' ')"
	out=$("$(command -v chroot || echo /usr/sbin/chroot)" "$work/root" /lens --version)
	echo "$out"
	[[ $out == *"platform: linux/amd64"* ]] || fail "the amd64 binary says: $out"
	printf '#!/bin/sh\nexec %q %q /lens "$@"\n' "$(command -v chroot || echo /usr/sbin/chroot)" "$work/root" >"$work/lens-amd64-root"
	smoke linux/amd64 "$work/lens-amd64-root" /lens
fi
step "the module files of examples/modulefiles/lens under Lmod"
lmod=/usr/share/lmod/lmod/libexec/lmod
if [[ ! -x $lmod ]]; then
	cannot "Lmod is missing (Debian package lmod; scripts/test.sh installs it as root)"
else
	# The files with their shared path replaced by one holding this release's
	# binaries, copied as lens/VERSION(.lua): their version is their file name.
	for arch in amd64 arm64; do install -D "$work/x/$arch/lens" "$work/shared/$version/linux_$arch/lens"; done
	for f in version.lua version; do
		rm -rf "$work/modules"
		mkdir -p "$work/modules/lens"
		sed "s#/shared/tools/lens#$work/shared#" "examples/modulefiles/lens/$f" >"$work/modules/lens/$version${f#version}"
		got=$(env -i PATH=/usr/bin:/bin MODULEPATH="$work/modules" bash -c '
			set -e
			eval "$("$1" bash load "lens/$2")"
			printf "%s|%s|%s\n" "$(command -v lens)" "$LENS_VERSION" "$(lens --version | head -n 1)"' _ "$lmod" "$version")
		machine=$(uname -m | sed 's/x86_64/amd64/;s/aarch64/arm64/')
		want="$work/shared/$version/linux_$machine/lens|$version|lens $version"
		[[ $got == "$want" ]] || fail "module load lens/$version ($f): $got, want $want"
		echo "$f: $got"
	done
fi
step "done"
