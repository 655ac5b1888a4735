package telemetry

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/process"
	"github.com/nemolens/lens-go/internal/pytext"
)

// Defaults of the configuration.
const (
	DefaultPrefix      = "NEMO_LENS"
	DefaultServiceName = "nemo"
	DefaultSpanGroups  = "default"
	ExporterOTLP       = "otlp"
	ExporterConsole    = "console"
)

// Config is the NEMO_LENS configuration; package lens exports it as
// lens.Config, whose documentation describes every field.
type Config struct {
	Enabled         bool
	ServiceName     string
	TracesDisabled  bool
	MetricsDisabled bool
	LogsEnabled     bool
	SpanGroups      string
	Exporter        string
	RunID           string
	User            string
	WandbEntity     string
	WandbProject    string
}

// WithDefaults returns c with its empty string fields replaced by their
// defaults (the run id stays as it is).
func (c Config) WithDefaults() Config {
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

// Errors reported for invalid configuration values; lens re-exports them.
var (
	ErrInvalidBool     = errors.New("expected a boolean (1/0, true/false, yes/no, on/off)")
	ErrInvalidProtocol = errors.New(`expected "grpc" or "http/protobuf" (the OpenTelemetry Go exporters have no http/json)`)
	ErrUnknownExporter = errors.New(`unknown exporter (want "otlp", "console" or "none")`)
	ErrNotInteger      = errors.New("expected a decimal integer")
	ErrOutOfRange      = errors.New("out of range")
)

// errLensExporter is ErrUnknownExporter for Config.Exporter
// (NEMO_LENS_EXPORTER), which takes otlp or console only ("none" is
// OTEL_TRACES_EXPORTER's).
var errLensExporter = lensExporterError{}

type lensExporterError struct{}

func (lensExporterError) Error() string        { return `unknown exporter (want "otlp" or "console")` }
func (lensExporterError) Is(target error) bool { return target == ErrUnknownExporter }

// ConfigError reports an environment variable whose value cannot be used;
// lens.ConfigError is this type.
type ConfigError struct {
	Var   string // the variable's name, e.g. NEMO_LENS_ENABLED
	Value string // its value as read (untrimmed)
	Err   error  // the reason: ErrInvalidBool, ErrInvalidProtocol, …
}

// Error names the variable, its value (with the credentials of a URL,
// scheme://user:password@host, masked) and the reason.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("lens: %s=%q: %v", e.Var, maskUserinfo(e.Value), e.Err)
}

// Unwrap returns the reason.
func (e *ConfigError) Unwrap() error { return e.Err }

// FromEnv builds a Config from env as the reference's
// TelemetryConfig.from_env does; lens.FromEnv documents the rules.
func FromEnv(env environ.Lookuper, prefix, fallbackPrefix string) (Config, error) {
	env = environ.Or(env)
	if prefix == "" {
		prefix = DefaultPrefix
	}
	var cfg Config
	var errs []error

	get := func(key string) (name, raw, value string) {
		name = prefix + "_" + key
		raw, _ = env.LookupEnv(name)
		value = pytext.TrimSpace(raw)
		if value == "" && fallbackPrefix != "" {
			name = fallbackPrefix + "_" + key
			raw, _ = env.LookupEnv(name)
			value = pytext.TrimSpace(raw)
		}
		return name, raw, value
	}
	boolean := func(key string, dst *bool, invert bool) {
		name, raw, value := get(key)
		if value == "" {
			return
		}
		b, ok := ParseBool(value)
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
	// A run id a lens-go parent drew and handed down yields to a launcher's
	// (docs/resource.md#run-id-launcher).
	cfg.RunID = process.Configured(env, cfg.RunID, pytext.TrimSpace)
	text("USER_ID", &cfg.User)

	if v, _ := env.LookupEnv("OTEL_SERVICE_NAME"); pytext.TrimSpace(v) != "" {
		cfg.ServiceName = pytext.TrimSpace(v)
	}
	cfg.WandbEntity, _ = env.LookupEnv("WANDB_ENTITY")
	cfg.WandbProject, _ = env.LookupEnv("WANDB_PROJECT")
	return cfg.WithDefaults(), errors.Join(errs...)
}

// ParseBool accepts the reference's boolean spellings in any case: 1/0,
// true/false, yes/no, on/off.
func ParseBool(s string) (value, ok bool) {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off":
		return false, true
	}
	return false, false
}
