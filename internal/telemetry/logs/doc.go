// Package logs is the log signal of the telemetry engine: the log exporter
// of every kind and protocol (one factory, [telemetry.Exporters]), the batch
// processor of OTEL_BLRP_*, and the logger provider that package lens
// returns. It reads the engine's [telemetry.Settings], never the
// environment, and emits an *sdklog.LoggerProvider whose records are
// exported with invalid UTF-8 replaced (docs/resource.md#invalid-utf-8).
// The lens command does not link it.
package logs
