// Package telemetry is the telemetry engine behind package lens (the root
// package) and the lens command: the NEMO_LENS configuration ([Config],
// [FromEnv]), the settings of the standard OTEL_* variables
// ([ReadSettings]), the OTLP options and the one exporter factory of every
// signal ([Exporters], [DefaultProtocol]), the trace signal (the span
// pipeline with exact accounting, [NewTracing]) and the diagnostics routing.
// Its subpackages metrics and logs build the other two signals from the same
// settings and factory; the lens command links this package only, so it
// does not link the metric and log SDKs.
//
// It reads the environment it is given (environ.Lookuper) and never the
// resource: package internal/assembly builds that. Package lens exports its
// Config, SpanCounts and ConfigError as aliases. The rules are in
// docs/resource.md#configuration.
package telemetry
