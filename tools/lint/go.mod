// Wrapper module that pins the Go tools scripts/test.sh runs (staticcheck), and
// benchstat for scripts/scale-report.sh, as Go `tool` dependencies. It is a
// separate module so that the root module's go.mod stays lean (OpenTelemetry only). scripts/test.sh builds the binary
// into .bin/ with `go build -C tools/lint -o ... honnef.co/go/tools/cmd/staticcheck`:
// a cold build compiles it once from the module cache, later runs only check
// that .bin/staticcheck is up to date. Bump with
//   go -C tools/lint get -tool honnef.co/go/tools/cmd/staticcheck@VERSION
// (benchstat: go -C tools/lint get -tool golang.org/x/perf/cmd/benchstat@VERSION;
// scripts/scale-report.sh builds it with go -C tools/lint build ... benchstat).
module github.com/nemolens/lens-go/tools/lint

go 1.26.0

tool (
	golang.org/x/perf/cmd/benchstat
	honnef.co/go/tools/cmd/staticcheck
)

require (
	github.com/BurntSushi/toml v1.4.1-0.20240526193622-a339e1f7089c // indirect
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
	golang.org/x/exp/typeparams v0.0.0-20231108232855-2478ac86f678 // indirect
	golang.org/x/mod v0.41.0 // indirect
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
	honnef.co/go/tools v0.8.2 // indirect
)
