// Package metrics is the metric signal of the telemetry engine: the metric
// exporter of every kind and protocol (one factory, [telemetry.Exporters]),
// the periodic reader of OTEL_METRIC_EXPORT_*, and the meter provider that
// package lens returns. It reads the engine's [telemetry.Settings], never
// the environment, and emits a *sdkmetric.MeterProvider whose exports carry
// exactly the Lens resource, with invalid UTF-8 replaced
// (docs/resource.md#invalid-utf-8). The lens command does not link it.
package metrics
