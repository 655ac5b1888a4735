// Command scaledriver makes the measurements of scripts/scale-report.sh that
// a benchmark cannot make, and formats the report's tables. It is not
// shipped: it lives in its own module (tools/scale), which uses the root
// module of this checkout, and scripts/scale-report.sh builds it with
// go build -C tools/scale.
//
// Usage:
//
//	scaledriver sizetable -lens BIN [-repeat N] [-ops LIST] [-inputs LIST]
//	    the input-size table: time, CPU, allocated bytes and peak memory of
//	    the library (one fresh process per operation and input: this
//	    program's "lib" command) and of the lens command (BIN), on values of
//	    1, 16 and 64 MiB, 100,000 and 1,000,000 segments, 10,000 duplicate
//	    keys and the largest carrier a child can receive; then the growth
//	    between sizes. Markdown on stdout.
//	scaledriver lib -op OP -input NAME [-repeat N]
//	    one library operation (parse, format, check, resource, setup,
//	    setup-osenv, setup-otlp; setup-typical, whose input is always a
//	    typical worker's) on one input, in this process: one JSON line.
//	    setup-otlp and setup-typical export to OTEL_EXPORTER_OTLP_ENDPOINT,
//	    which should refuse connections.
//	scaledriver otlp
//	    the bytes the resource of a typical job adds to each OTLP trace
//	    export, beside a span's own size. Markdown on stdout.
//	scaledriver count -entries N [-ops LIST]
//	    runs Parse, Format, Check, Detect, ResourceAttributes and Setup once
//	    each on an N-entry carrier and Setup once in a typical worker, each in its
//	    own never-inlined main.measure* function, for callgrind (garbage
//	    collector off), as carrier/internal/lineardriver does.
//	scaledriver callgrind-costs FILE
//	    the inclusive instruction count of every main.measure* function in
//	    a callgrind profile written with --compress-strings=no
//	    --compress-pos=no: "NAME COUNT" lines.
//	scaledriver benchtable [-summary] FILE...
//	    Markdown tables of the scale benchmarks in `go test -bench` output:
//	    medians per case and implementation, their ratios, and the growth
//	    exponent between successive sizes.
//	scaledriver walltime -n N -- COMMAND [ARG...]
//	    runs COMMAND N times and prints the mean, median, min and max wall
//	    time and the mean user+system CPU time (used when hyperfine is not
//	    installed).
//	scaledriver inittrace [-top N] [-label TEXT] FILE...
//	    summarises GODEBUG=inittrace=1 output (one file per run): the
//	    slowest package initialisers (median clock) and the totals.
//	scaledriver blackhole [-addr HOST:PORT] [-for D]
//	    a TCP server that accepts connections and never answers (a hung
//	    collector), until it is killed or D (default 10m) has passed; prints
//	    its address.
//	scaledriver env slurm-task | carrier NAME
//	    prints the environment of a typical Slurm task (scalegen.SlurmTask,
//	    one KEY=VALUE per line), or a generated carrier.
package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/nemolens/lens-go/internal/scalegen"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "sizetable":
		err = sizeTable(args)
	case "lib":
		err = libCommand(args)

	case "otlp":
		err = otlpCommand(args)
	case "count":
		err = countCommand(args)
	case "callgrind-costs":
		err = callgrindCostsCommand(args)
	case "benchtable":
		err = benchTableCommand(args)
	case "walltime":
		err = wallTimeCommand(args)
	case "env":
		err = envCommand(args)
	case "blackhole":
		err = blackholeCommand(args)
	case "inittrace":
		err = initTraceCommand(args)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "scaledriver %s: %v\n", cmd, err)
		os.Exit(1)
	}
}

// must ends the program with err's message, for the failures inside a
// measured function, which has no error to return without changing what it
// measures.
func must(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "scaledriver: %v\n", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: scaledriver sizetable|lib|otlp|count|callgrind-costs|benchtable|walltime|inittrace|blackhole|env ... (see the package documentation)")
	os.Exit(2)
}

func envCommand(args []string) error {
	switch {
	case len(args) == 1 && args[0] == "slurm-task":
		env := scalegen.SlurmTask()
		for _, k := range slices.Sorted(maps.Keys(env)) {
			fmt.Printf("%s=%s\n", k, env[k])
		}
		return nil
	case len(args) == 2 && args[0] == "carrier":
		text, err := inputText(args[1])
		if err != nil {
			return err
		}
		_, err = os.Stdout.WriteString(text)
		return err
	}
	return fmt.Errorf("want slurm-task or carrier %s", strings.Join(inputNames, "|"))
}
