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

// Config is the telemetry configuration (docs/resource.md#configuration), the Go form of the
// reference's TelemetryConfig.
//
// The zero Config is the reference's defaults (docs/resource.md#configuration) and means "telemetry
// disabled": [Setup] then returns no-op providers. Every zero field means
// its default: ServiceName "" is [DefaultServiceName] ("nemo"), Exporter ""
// is [ExporterOTLP], SpanGroups "" is [DefaultSpanGroups], and the signal
// switches are named so that false is the default (traces and metrics on,
// logs off). Config{Enabled: true} therefore exports traces and metrics over
// OTLP, exactly as the defaults say.
type Config struct {
	// Enabled switches telemetry on. A disabled Setup installs nothing and
	// costs next to nothing. Default false.
	Enabled bool
	// ServiceName is the service.name resource attribute. "" means "nemo".
	// [FromEnv] fills it from OTEL_SERVICE_NAME (trimmed).
	ServiceName string
	// TracesDisabled keeps Setup from building a tracer provider (the
	// reference's traces_enabled=false; <prefix>_TRACES_ENABLED=false).
	// Default false: traces are on.
	TracesDisabled bool
	// MetricsDisabled keeps Setup from building a meter provider (the
	// reference's metrics_enabled=false; <prefix>_METRICS_ENABLED=false).
	// Default false: metrics are on.
	MetricsDisabled bool
	// LogsEnabled builds a logger provider (and the log/slog bridge of
	// [Handle.Logger]). Default false.
	LogsEnabled bool
	// SpanGroups names the span groups instrumentations should emit
	// ("default"). Setup does not interpret it; it is carried for the
	// instrumentations that read the configuration.
	SpanGroups string
	// Exporter is "otlp" or "console"; "" means "otlp". It applies to every
	// signal whose OTEL_<SIGNAL>_EXPORTER is unset (see the package
	// documentation, "Standard OpenTelemetry switches"). Any other value
	// makes an enabled Setup fail with [ErrUnknownExporter].
	Exporter string
	// RunID is the run id (nemo.run.id and the prefix of the rank-derived
	// service.instance.id), the same for every process of a run. An enabled
	// Setup fills an empty one (see [NewRunID]) and hands it to the
	// processes this one starts (see the package documentation, "Run
	// identity across processes").
	RunID string
	// User is the user id (nemo.user.id). FromEnv reads it from <prefix>_USER_ID.
	User string
	// WandbEntity is the Weights & Biases entity (wandb.entity).
	WandbEntity string
	// WandbProject is the Weights & Biases project (wandb.project).
	WandbProject string
}

// DefaultConfig returns the reference's defaults (docs/resource.md#configuration) with every
// default spelled out: disabled, service name "nemo", traces and metrics on,
// logs off, span groups "default", exporter "otlp", everything else empty.
// It behaves exactly as the zero Config.
func DefaultConfig() Config { return Config{}.withDefaults() }

// withDefaults returns c with its empty string fields replaced by their
// defaults (the run id stays as it is).
func (c Config) withDefaults() Config { return Config(telemetry.Config(c).WithDefaults()) }

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
//
// Options used: WithEnv, WithPrefix, WithFallbackPrefix.
func FromEnv(opts ...Option) (Config, error) {
	o := newOptions(opts)
	c, err := telemetry.FromEnv(o.t.Env, o.prefix, o.fallbackPrefix)
	return Config(c), err
}
