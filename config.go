package lens

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nemolens/lens-go/carrier"
)

// Default values of the configuration (SPEC §7).
const (
	// DefaultPrefix is the prefix of the configuration variables read by
	// [FromEnv] when it is given the empty prefix.
	DefaultPrefix = "NEMO_LENS"
	// DefaultServiceName is the service name used when none is configured.
	DefaultServiceName = "nemo"
	// DefaultSpanGroups is the default value of [Config.SpanGroups].
	DefaultSpanGroups = "default"
	// ExporterOTLP selects the OTLP exporters (gRPC or HTTP/protobuf, chosen
	// by OTEL_EXPORTER_OTLP_PROTOCOL and its per-signal forms).
	ExporterOTLP = "otlp"
	// ExporterConsole selects the stdout exporters, writing to the console
	// writer ([WithConsoleWriter]; os.Stdout by default).
	ExporterConsole = "console"
)

// Config is the telemetry configuration (SPEC §7), the Go form of the
// reference's TelemetryConfig.
//
// The zero Config is the reference's defaults (SPEC §7) and means "telemetry
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
	// Exporter is "otlp" or "console"; "" means "otlp". Any other value makes
	// an enabled Setup fail with [ErrUnknownExporter].
	Exporter string
	// RunID is the run id (nemo.run.id and the prefix of the rank-derived
	// service.instance.id). An enabled Setup fills an empty one (SPEC §6.2;
	// see [NewRunID]).
	RunID string
	// User is the user id (nemo.user.id). FromEnv reads it from <prefix>_USER_ID.
	User string
	// WandbEntity is the Weights & Biases entity (wandb.entity).
	WandbEntity string
	// WandbProject is the Weights & Biases project (wandb.project).
	WandbProject string
}

// DefaultConfig returns the reference's defaults (SPEC §7) with every
// default spelled out: disabled, service name "nemo", traces and metrics on,
// logs off, span groups "default", exporter "otlp", everything else empty.
// It behaves exactly as the zero Config.
func DefaultConfig() Config { return Config{}.withDefaults() }

// withDefaults returns c with its empty string fields replaced by their
// defaults (the run id stays as it is).
func (c Config) withDefaults() Config {
	if c.ServiceName == "" {
		c.ServiceName = DefaultServiceName
	}
	if c.SpanGroups == "" {
		c.SpanGroups = DefaultSpanGroups
	}
	if c.Exporter == "" {
		c.Exporter = ExporterOTLP
	}
	return c
}

// Errors reported for invalid configuration values; test with errors.Is.
var (
	// ErrInvalidBool: a boolean variable holds something other than
	// 1/0, true/false, yes/no or on/off (any case).
	ErrInvalidBool = errors.New("expected a boolean (1/0, true/false, yes/no, on/off)")
	// ErrInvalidProtocol: an OTLP protocol variable holds something other
	// than "grpc" or "http/protobuf".
	ErrInvalidProtocol = errors.New(`expected "grpc" or "http/protobuf"`)
	// ErrUnknownExporter: Config.Exporter is neither "otlp" nor "console".
	ErrUnknownExporter = errors.New(`unknown exporter (want "otlp" or "console")`)
)

// ConfigError reports an environment variable whose value cannot be used.
// Err wraps the reason ([ErrInvalidBool], [ErrInvalidProtocol]).
type ConfigError struct {
	Var   string // the variable's name, e.g. NEMO_LENS_ENABLED
	Value string // its value as read (untrimmed)
	Err   error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("lens: %s=%q: %v", e.Var, e.Value, e.Err)
}

// Unwrap returns the reason.
func (e *ConfigError) Unwrap() error { return e.Err }

// FromEnv builds a Config from the environment (the process environment, or
// the one of [WithEnv]), as the reference's TelemetryConfig.from_env does
// (SPEC §7).
//
// For each key K of ENABLED, TRACES_ENABLED, METRICS_ENABLED, LOGS_ENABLED,
// SPAN_GROUPS, EXPORTER, RUN_ID and USER_ID (→ User) it reads <prefix>_K,
// trimmed with the Python whitespace set ([carrier.TrimSpace]); when that is
// empty (or absent) it reads <fallback prefix>_K the same way (when
// [WithFallbackPrefix] is given); when that is empty too the field keeps
// its default. The prefix is [DefaultPrefix] ("NEMO_LENS") unless
// [WithPrefix] says otherwise.
//
// Booleans accept 1/0, true/false, yes/no and on/off in any case; any other
// non-empty value is an error. The exporter name is not validated here (an
// enabled [Setup] does that).
//
// Unprefixed: OTEL_SERVICE_NAME (trimmed; empty means "nemo") → ServiceName,
// WANDB_ENTITY and WANDB_PROJECT (not trimmed) → WandbEntity, WandbProject.
// The standard OpenTelemetry switches (OTEL_SDK_DISABLED,
// OTEL_<SIGNAL>_EXPORTER) are not read here but by [Setup], so that they
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
	env := o.env
	prefix := o.prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	fallbackPrefix := o.fallbackPrefix
	var cfg Config
	var errs []error

	get := func(key string) (name, raw, value string) {
		name = prefix + "_" + key
		raw, _ = env.LookupEnv(name)
		value = carrier.TrimSpace(raw)
		if value == "" && fallbackPrefix != "" {
			name = fallbackPrefix + "_" + key
			raw, _ = env.LookupEnv(name)
			value = carrier.TrimSpace(raw)
		}
		return name, raw, value
	}
	boolean := func(key string, dst *bool, invert bool) {
		name, raw, value := get(key)
		if value == "" {
			return
		}
		b, ok := parseBool(value)
		if !ok {
			errs = append(errs, &ConfigError{Var: name, Value: raw, Err: ErrInvalidBool})
			return
		}
		*dst = b != invert
	}
	text := func(key string, dst *string) {
		if _, _, value := get(key); value != "" {
			*dst = value
		}
	}

	boolean("ENABLED", &cfg.Enabled, false)
	boolean("TRACES_ENABLED", &cfg.TracesDisabled, true)
	boolean("METRICS_ENABLED", &cfg.MetricsDisabled, true)
	boolean("LOGS_ENABLED", &cfg.LogsEnabled, false)
	text("SPAN_GROUPS", &cfg.SpanGroups)
	text("EXPORTER", &cfg.Exporter)
	text("RUN_ID", &cfg.RunID)
	text("USER_ID", &cfg.User)

	if v, _ := env.LookupEnv("OTEL_SERVICE_NAME"); carrier.TrimSpace(v) != "" {
		cfg.ServiceName = carrier.TrimSpace(v)
	}
	cfg.WandbEntity, _ = env.LookupEnv("WANDB_ENTITY")
	cfg.WandbProject, _ = env.LookupEnv("WANDB_PROJECT")
	return cfg.withDefaults(), errors.Join(errs...)
}

// parseBool accepts the reference's boolean spellings in any case.
func parseBool(s string) (value, ok bool) {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off":
		return false, true
	}
	return false, false
}
