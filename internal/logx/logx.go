// Package logx names the loggers of lens-go. Every message goes through
// log/slog's default logger at call time (never captured at package
// initialisation), tagged with the Python reference's logger name so that
// people comparing Go and Python logs find the same sources.
package logx

import "log/slog"

// Logger names, as in the Python reference (docs/compatibility.md#log-messages).
const (
	Attributes = "nemo.lens.resources.attributes"
	Semconv    = "nemo.lens.semconv.resources"
	Slurm      = "nemo.lens.resources.slurm"
	Local      = "nemo.lens.resources.local"
	Providers  = "nemo.lens.providers"
)

// Logger returns l when it is not nil, else slog.Default(), with a "logger"
// attribute naming the source.
func Logger(l *slog.Logger, name string) *slog.Logger {
	if l == nil {
		l = slog.Default()
	}
	return l.With(slog.String("logger", name))
}
