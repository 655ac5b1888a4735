package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"

	"github.com/nemolens/lens-go/environ"
)

func main() {
	env := environ.OS{}
	// The library packages log through slog.Default where no logger can be
	// injected; lens keeps them at LENS_LOG_LEVEL (default error) on stderr.
	slog.SetDefault(newLogger(os.Stderr, env))
	a := &app{
		stdin:      os.Stdin,
		stdout:     os.Stdout,
		stderr:     os.Stderr,
		env:        env,
		notify:     signal.Notify,
		stopNotify: signal.Stop,
	}
	os.Exit(a.main(context.Background(), os.Args[1:]))
}
