// Command signals is the instrumented program of the metrics and logs
// end-to-end test (e2e/backends_test.go). It does what an instrumented Go
// program does with metrics and logs, and nothing else:
//
//	cfg, _ := lens.FromEnv()                               // NEMO_LENS_*, OTEL_*
//	h, _ := lens.Setup(ctx, cfg, lens.WithRankFrom("slurm")) // ranks from SLURM_PROCID etc.
//	h.Meter(Scope).Int64Counter(Counter).Add(ctx, -steps)
//	h.Logger().Info(LogMessage, "steps", -steps)
//	h.Shutdown(ctx)                                        // flushes both
//
// The test chooses everything through the environment (run id, Slurm
// variables, carrier, exporter endpoints) and reads the result back from the
// backends. It exits 1 with the error on stderr when Setup or Shutdown fails.
//
// Usage:
//
//	signals [-steps N]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/nemolens/lens-go"
)

// Names the test queries for.
const (
	Scope      = "github.com/nemolens/lens-go/e2e/cmd/signals"
	Counter    = "lens.e2e.steps" // Prometheus: lens_e2e_steps_total
	LogMessage = "steps done"
)

func main() {
	steps := flag.Int64("steps", 1, "value added to the counter (and logged)")
	flag.Parse()
	if err := run(*steps); err != nil {
		fmt.Fprintln(os.Stderr, "signals:", err)
		os.Exit(1)
	}
}

func run(steps int64) error {
	ctx := context.Background()
	cfg, err := lens.FromEnv()
	if err != nil {
		return err
	}
	h, err := lens.Setup(ctx, cfg, lens.WithRankFrom(lens.RankFromSlurm))
	if err != nil {
		return err
	}
	c, err := h.Meter(Scope).Int64Counter(Counter)
	if err != nil {
		return err
	}
	c.Add(ctx, steps)
	h.Logger().InfoContext(ctx, LogMessage, "steps", steps)
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return h.Shutdown(sctx)
}
