#!/usr/bin/env bash
# All tests of lens-go, as CI runs them (.ci/run calls this script):
#   static checks (gofmt, go vet, staticcheck), unit tests with the race
#   detector, bounded fuzzing, then the end-to-end tests against a real Slurm
#   (installed from Debian's packages and started on localhost) and a real
#   Jaeger v2 (built from Go modules in tools/jaeger).
# Environment: FUZZTIME (default 200000x, executions per fuzz target: Go 1.26's
# duration-based -fuzztime can end with a spurious "context deadline exceeded",
# golang/go#75804), SKIP_E2E=1 to stop after the unit tests (refused when CI=true).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export GOFLAGS=${GOFLAGS:-}
fuzztime=${FUZZTIME:-200000x}
step() { printf '\n==> %s\n' "$*"; }

if ! command -v go >/dev/null; then
	echo "go is not installed (needs Go 1.26; see README)" >&2
	exit 1
fi

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.bin/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi

step "go vet"
go vet ./...
(cd e2e && go vet ./...)

step "staticcheck"
staticcheck=$(go env GOPATH)/bin/staticcheck
if [ ! -x "$staticcheck" ]; then
	go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi
"$staticcheck" ./...
(cd e2e && "$staticcheck" ./...)

step "unit tests (race detector)"
go test -race -count=1 ./...

step "fuzzing, $fuzztime per target"
for pkg in $(go list ./...); do
	for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -parallel 2 "$pkg"
	done
done

if [ "${SKIP_E2E:-}" = 1 ] && [ "${CI:-}" != true ]; then
	echo "SKIP_E2E=1: end-to-end tests not run"
	exit 0
fi

step "build Jaeger (tools/jaeger)"
bash scripts/build-jaeger.sh
export JAEGER_BIN="$root/.bin/jaeger"

step "end-to-end tests (real Slurm, real Jaeger)"
mkdir -p .bin
(cd e2e && go test -race -count=1 -timeout 30m -v ./...) 2>&1 | tee .bin/e2e.log
echo "all tests passed"
