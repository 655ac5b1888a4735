package lens

import (
	"github.com/nemolens/lens-go/internal/telemetry"
)

// Default values of the configuration (docs/resource.md#configuration).
const (
	// DefaultPrefix is the prefix of the configuration variables [FromEnv]
	// reads unless [WithPrefix] says otherwise.
	DefaultPrefix = telemetry.DefaultPrefix
	// DefaultServiceName is the service name used when none is configured.
	DefaultServiceName = telemetry.DefaultServiceName
	// DefaultSpanGroups is the default value of [Config.SpanGroups].
	DefaultSpanGroups = telemetry.DefaultSpanGroups
	// ExporterOTLP selects the OTLP exporters (gRPC or HTTP/protobuf, chosen
	// by OTEL_EXPORTER_OTLP_PROTOCOL and its per-signal forms).
	ExporterOTLP = telemetry.ExporterOTLP
	// ExporterConsole selects the stdout exporters, writing to the console
	// writer ([WithConsoleWriter]; os.Stdout by default).
	ExporterConsole = telemetry.ExporterConsole
)

// Config is the telemetry configuration (docs/resource.md#configuration), the
// Go form of the reference's TelemetryConfig. [FromEnv] reads it from the
// environment; a Config built in code works the same.
//
// The zero Config is the reference's defaults and means "telemetry
// disabled": [Setup] then returns no-op providers. Every zero field means its
// default, so Config{Enabled: true} exports traces and metrics over OTLP.
// Its fields:
//
//   - Enabled bool: switches telemetry on. A disabled Setup installs nothing
//     and costs next to nothing.
//   - ServiceName string: the service.name resource attribute; "" means
//     [DefaultServiceName] ("nemo"). FromEnv fills it from OTEL_SERVICE_NAME
//     (trimmed).
//   - TracesDisabled, MetricsDisabled bool: keep Setup from building the
//     tracer or meter provider (the reference's traces_enabled=false,
//     metrics_enabled=false). Default false: traces and metrics are on.
//   - LogsEnabled bool: builds a logger provider (and the log/slog bridge of
//     [Handle.Logger]). Default false.
//   - SpanGroups string: the span groups instrumentations should emit; ""
//     means [DefaultSpanGroups]. Setup carries it without interpreting it.
//   - Exporter string: [ExporterOTLP] or [ExporterConsole]; "" means "otlp".
//     It applies to every signal whose OTEL_<SIGNAL>_EXPORTER is unset; any
//     other value makes an enabled Setup fail with [ErrUnknownExporter].
//   - RunID string: the run id (nemo.run.id and the prefix of the
//     rank-derived service.instance.id), the same for every process of a run.
//     An enabled Setup fills an empty one ([NewRunID]) and hands it to the
//     processes this one starts (docs/resource.md#run-id-fill-in).
//   - User string: the user id (nemo.user.id; <prefix>_USER_ID).
//   - WandbEntity, WandbProject string: the Weights & Biases entity and
//     project (wandb.entity, wandb.project).
//
// Its method WithDefaults returns it with every empty string field
// replaced by its default (the run id stays as it is).
type Config = telemetry.Config

// DefaultConfig returns the reference's defaults with every default spelled
// out: disabled, service name "nemo", traces and metrics on, logs off, span
// groups "default", exporter "otlp", everything else empty. It behaves
// exactly as the zero Config.
func DefaultConfig() Config { return Config{}.WithDefaults() }

// Errors reported for invalid configuration values; test with errors.Is.
var (
	// ErrInvalidBool: a boolean variable holds something other than
	// 1/0, true/false, yes/no or on/off (any case).
	ErrInvalidBool = telemetry.ErrInvalidBool
	// ErrInvalidProtocol: an OTLP protocol variable holds something other
	// than "grpc" or "http/protobuf" (for example "http/json", which the
	// OpenTelemetry Go exporters do not implement).
	ErrInvalidProtocol = telemetry.ErrInvalidProtocol
	// ErrUnknownExporter: Config.Exporter is neither "otlp" nor "console",
	// or OTEL_<SIGNAL>_EXPORTER is none of "otlp", "console" and "none".
	ErrUnknownExporter = telemetry.ErrUnknownExporter
	// ErrInvalidEndpoint: an OTLP endpoint variable holds a value the
	// signal's protocol cannot use, such as HOST:PORT without a scheme for
	// OTLP/HTTP (docs/resource.md#otlp-endpoint-and-tls).
	ErrInvalidEndpoint = telemetry.ErrInvalidEndpoint
	// ErrTLSFile: an OTLP CA, client certificate or client key file cannot
	// be read or holds no usable PEM data, or a client certificate is given
	// without its key (or the key without it).
	ErrTLSFile = telemetry.ErrTLSFile
)

// ConfigError reports an environment variable whose value cannot be used:
// Var is its name (e.g. NEMO_LENS_ENABLED), Value its value as read
// (untrimmed), and Err the reason ([ErrInvalidBool], [ErrInvalidProtocol],
// [ErrUnknownExporter], …); errors.Is sees the reason.
type ConfigError = telemetry.ConfigError

// FromEnv builds a Config from the environment (the process environment, or
// the one of [WithEnv]), as the reference's TelemetryConfig.from_env does
// (docs/resource.md#configuration).
//
// For each key K of ENABLED, TRACES_ENABLED, METRICS_ENABLED, LOGS_ENABLED,
// SPAN_GROUPS, EXPORTER, RUN_ID and USER_ID (→ User) it reads <prefix>_K,
// trimmed with the Python whitespace set (docs/compatibility.md#whitespace); when that is
// empty (or absent) it reads <fallback prefix>_K the same way (when
// [WithFallbackPrefix] is given); when that is empty too the field keeps
// its default. The prefix is [DefaultPrefix] ("NEMO_LENS") unless
// [WithPrefix] says otherwise. TRACES_ENABLED=false sets TracesDisabled,
// METRICS_ENABLED=false sets MetricsDisabled.
//
// Booleans accept 1/0, true/false, yes/no and on/off in any case; any other
// non-empty value is an error. The exporter name is not validated here (an
// enabled [Setup] does that).
//
// Unprefixed: OTEL_SERVICE_NAME (trimmed; empty means "nemo") → ServiceName,
// WANDB_ENTITY and WANDB_PROJECT (not trimmed) → WandbEntity, WandbProject.
// The standard OpenTelemetry switches (OTEL_SDK_DISABLED,
// OTEL_<SIGNAL>_EXPORTER, …) are not read here but by [Setup], so that they
// also apply to a Config built in code.
//
// On invalid values the returned error joins one [*ConfigError] per bad
// variable (errors.As finds the first; errors.Is(err, ErrInvalidBool) works)
// and the Config holds the defaults for those fields and the read values for
// the others.
func FromEnv(opts ...ConfigOption) (Config, error) {
	o := newConfigOptions(opts)
	return telemetry.FromEnv(o.env, o.prefix, o.fallbackPrefix)
}
