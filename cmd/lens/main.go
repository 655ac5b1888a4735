package main

import (
	"context"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/supervise"
	"github.com/nemolens/lens-go/internal/telemetry"
)

func main() {
	if isGPUProbe(os.Args) {
		// Another lens's GPU probe process (gpuprobe.go): nothing else.
		os.Exit(gpuProbeMain(os.Args, environ.OS{}, os.Stdout))
	}
	// lens exec handles signals from its first instruction to its exit: what
	// arrives before the command starts is passed on once it runs.
	var signals *supervise.Signals
	if len(os.Args) > 1 && os.Args[1] == execCommand.name {
		signals = supervise.Notify()
	}
	env := environ.OS{}
	// The library packages log through slog.Default where no logger can be
	// injected; lens keeps them at LENS_LOG_LEVEL (default error) on stderr.
	slog.SetDefault(newLogger(os.Stderr, env))
	logger := newLogger(os.Stderr, env)
	diag := telemetry.NewDiagnostics(logger)
	// lens owns its process: nothing the OpenTelemetry SDK reports reaches
	// stderr except through the logger, once, without values.
	otel.SetErrorHandler(diag)
	otel.SetLogger(diag.Logger())
	a := &app{
		stdin:   os.Stdin,
		stdout:  os.Stdout,
		stderr:  os.Stderr,
		env:     env,
		signals: signals,
		logger:  logger,
		diag:    diag,
	}
	if len(os.Args) > 1 && os.Args[1] == reckonCommand.name {
		// lens reckon kills sacct's process group before it ends.
		a.reckonSignals = make(chan os.Signal, 1)
		notifyReckon(a.reckonSignals)
	}
	code := a.main(context.Background(), taskPrologArgs(os.Args[0], os.Args[1:], env))
	if a.dieBy != 0 {
		// The command was killed by a signal: lens's parent sees the same.
		supervise.Die(a.dieBy)
	}
	os.Exit(code)
}
