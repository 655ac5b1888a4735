package telemetry

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/propagators/autoprop"
	"go.opentelemetry.io/otel/propagation"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/pytext"
)

// Exporter kinds of a signal (OTEL_<SIGNAL>_EXPORTER values).
const (
	KindOTLP    = "otlp"
	KindConsole = "console"
	KindNone    = "none"
)

// OTLP protocols (OTEL_EXPORTER_OTLP[_<SIGNAL>]_PROTOCOL values).
const (
	ProtocolGRPC         = "grpc"
	ProtocolHTTPProtobuf = "http/protobuf"
)

// Signal names as they appear in variable names.
const (
	SignalTraces  = "TRACES"
	SignalMetrics = "METRICS"
	SignalLogs    = "LOGS"
)

// Defaults and bounds of the numeric settings. A value outside [min, max]
// (or not a decimal integer) is replaced by the default, with one warning.
const (
	DefaultBSPScheduleDelay     = 5000 * time.Millisecond
	DefaultBSPExportTimeout     = 30000 * time.Millisecond
	DefaultBSPMaxQueueSize      = 2048
	DefaultBSPMaxExportBatch    = 512
	DefaultMetricExportInterval = 10000 * time.Millisecond
	DefaultMetricExportTimeout  = 30000 * time.Millisecond
	DefaultBLRPScheduleDelay    = 1000 * time.Millisecond
	DefaultBLRPExportTimeout    = 30000 * time.Millisecond
	DefaultBLRPMaxQueueSize     = 2048
	DefaultBLRPMaxExportBatch   = 512
	DefaultOTLPTimeout          = 10000 * time.Millisecond

	// MaxQueueSize bounds OTEL_BSP_MAX_QUEUE_SIZE and
	// OTEL_BLRP_MAX_QUEUE_SIZE: 1,048,576 pending spans or records is
	// already about a gigabyte; a larger queue is a typo, not a plan.
	MaxQueueSize = 1 << 20
	// MaxDuration bounds every duration setting (one day).
	MaxDuration = 24 * time.Hour
)

// Signal is the resolved configuration of one signal.
type Signal struct {
	// Kind is KindOTLP, KindConsole or KindNone.
	Kind string
	// Protocol is the OTLP protocol when Kind is KindOTLP.
	Protocol string
	// Timeout is the OTLP export timeout (OTEL_EXPORTER_OTLP[_<SIGNAL>]_TIMEOUT)
	// when that variable is invalid and replaced by the default; 0 lets the
	// exporter read the variable itself.
	Timeout time.Duration
	// ClientTimeout is the OTLP export timeout in effect: Timeout, else the
	// variable's value, else DefaultOTLPTimeout. It is the timeout of the
	// HTTP client Lens gives an OTLP/HTTP exporter (which then does not
	// read the variable itself); 0 (a Signal not read by ReadSettings)
	// stands for DefaultOTLPTimeout.
	ClientTimeout time.Duration
	// Endpoint is where an OTLP exporter sends the signal, read by Lens
	// from OTEL_EXPORTER_OTLP[_<SIGNAL>]_ENDPOINT
	// (docs/resource.md#otlp-endpoint-and-tls): for gRPC, the gRPC target
	// (DefaultGRPCEndpoint when unset); for HTTP, the full URL of the
	// signal ("" when unset: the exporter's default).
	Endpoint string
	// Insecure is a connection without TLS: for gRPC, scheme http, a unix
	// socket, or OTEL_EXPORTER_OTLP[_<SIGNAL>]_INSECURE=true for a target
	// without scheme; for HTTP, scheme http.
	Insecure bool
	// TLS is the client TLS configuration built from the CA and client
	// certificate files (OTEL_EXPORTER_OTLP[_<SIGNAL>]_CERTIFICATE,
	// _CLIENT_CERTIFICATE, _CLIENT_KEY); nil when none is set.
	TLS *tls.Config
	// EndpointVar and EndpointValue are the variable Endpoint was read
	// from and its value as written ("" when unset: the default), which
	// export errors name (docs/resource.md#endpoint-causes).
	EndpointVar, EndpointValue string
}

// Settings are the values Setup reads from the standard OpenTelemetry
// variables (the ones the OpenTelemetry Go SDK and exporters do not read
// themselves, or read without bounds).
type Settings struct {
	// SDKDisabled is OTEL_SDK_DISABLED=true (case-insensitive).
	SDKDisabled bool
	// Traces, Metrics and Logs are the per-signal exporters.
	Traces, Metrics, Logs Signal
	// Propagator is OTEL_PROPAGATORS (default tracecontext,baggage).
	Propagator propagation.TextMapPropagator
	// Propagators are the names of Propagator, for messages.
	Propagators []string

	BSPScheduleDelay, BSPExportTimeout time.Duration
	BSPMaxQueueSize, BSPMaxExportBatch int

	MetricExportInterval, MetricExportTimeout time.Duration

	BLRPScheduleDelay, BLRPExportTimeout time.Duration
	BLRPMaxQueueSize, BLRPMaxExportBatch int

	// TracePerAttempt is NEMO_LENS_TRACE_PER_ATTEMPT
	// (docs/tracing.md#trace-per-attempt).
	TracePerAttempt bool

	// Warnings are the settings that were replaced by their defaults, one
	// message each.
	Warnings []string

	// Secrets are the header values of the OTLP header variables
	// (OTEL_EXPORTER_OTLP[_<SIGNAL>]_HEADERS), which export error messages
	// never show (see ShapeError).
	Secrets []string
}

// Needs says which signals need an exporter built from the environment
// (enabled in the configuration and not given an exporter in code).
type Needs struct {
	Traces, Metrics, Logs bool
}

// ReadSettings reads the settings from env for cfg. Invalid exporter names,
// protocols, propagators, OTLP endpoints and TLS files are errors (one
// *ConfigError per variable, each reported once even when several signals
// share the variable); invalid or out-of-range numbers are warnings and get
// their defaults.
func ReadSettings(env environ.Lookuper, cfg Config, need Needs) (Settings, error) {
	env = environ.Or(env)
	r := settingsReader{env: env}
	var s Settings
	if cfg.Exporter != ExporterOTLP && cfg.Exporter != ExporterConsole && cfg.Exporter != "" {
		// Name the variable the user set when the value is the one it holds
		// (FromEnv read it there); a Config built in code keeps the field name.
		name := DefaultPrefix + "_EXPORTER"
		if raw, ok := env.LookupEnv(name); ok && pytext.TrimSpace(raw) == cfg.Exporter {
			r.errs = append(r.errs, &ConfigError{Var: name, Value: raw, Err: errLensExporter})
		} else {
			r.errs = append(r.errs, fmt.Errorf("lens: Config.Exporter %q: %w", cfg.Exporter, errLensExporter))
		}
	}

	if raw, ok := env.LookupEnv("OTEL_SDK_DISABLED"); ok {
		switch v := strings.ToLower(strings.TrimSpace(raw)); v {
		case "true":
			s.SDKDisabled = true
		case "", "false":
		default:
			r.warnf("OTEL_SDK_DISABLED=%q is neither true nor false; treated as false", raw)
		}
	}

	if raw, _ := env.LookupEnv(TracePerAttemptEnv); pytext.TrimSpace(raw) != "" {
		b, ok := ParseBool(pytext.TrimSpace(raw))
		if !ok {
			r.fail(TracePerAttemptEnv, raw, ErrInvalidBool)
		}
		s.TracePerAttempt = b
	}

	s.Traces = r.signal(SignalTraces, cfg, need.Traces)
	s.Metrics = r.signal(SignalMetrics, cfg, need.Metrics)
	s.Logs = r.signal(SignalLogs, cfg, need.Logs)

	s.Propagators = []string{"tracecontext", "baggage"}
	if raw, _ := env.LookupEnv("OTEL_PROPAGATORS"); strings.TrimSpace(raw) != "" {
		s.Propagators = nil
		for name := range strings.SplitSeq(raw, ",") {
			if name = strings.TrimSpace(name); name != "" {
				s.Propagators = append(s.Propagators, name)
			}
		}
	}
	p, err := autoprop.TextMapPropagator(s.Propagators...)
	if err != nil {
		raw, _ := env.LookupEnv("OTEL_PROPAGATORS")
		r.fail("OTEL_PROPAGATORS", raw, err)
		p = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	s.Propagator = p

	s.BSPScheduleDelay = r.millis("OTEL_BSP_SCHEDULE_DELAY", DefaultBSPScheduleDelay, 0)
	s.BSPExportTimeout = r.millis("OTEL_BSP_EXPORT_TIMEOUT", DefaultBSPExportTimeout, 1)
	s.BSPMaxQueueSize = r.count("OTEL_BSP_MAX_QUEUE_SIZE", DefaultBSPMaxQueueSize, MaxQueueSize)
	s.BSPMaxExportBatch = r.count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", min(DefaultBSPMaxExportBatch, s.BSPMaxQueueSize), s.BSPMaxQueueSize)
	s.MetricExportInterval = r.millis("OTEL_METRIC_EXPORT_INTERVAL", DefaultMetricExportInterval, 1)
	s.MetricExportTimeout = r.millis("OTEL_METRIC_EXPORT_TIMEOUT", DefaultMetricExportTimeout, 1)
	s.BLRPScheduleDelay = r.millis("OTEL_BLRP_SCHEDULE_DELAY", DefaultBLRPScheduleDelay, 1)
	s.BLRPExportTimeout = r.millis("OTEL_BLRP_EXPORT_TIMEOUT", DefaultBLRPExportTimeout, 1)
	s.BLRPMaxQueueSize = r.count("OTEL_BLRP_MAX_QUEUE_SIZE", DefaultBLRPMaxQueueSize, MaxQueueSize)
	s.BLRPMaxExportBatch = r.count("OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", min(DefaultBLRPMaxExportBatch, s.BLRPMaxQueueSize), s.BLRPMaxQueueSize)

	s.Warnings = r.warnings
	s.Secrets = headerSecrets(env, environ.OS{})
	return s, errors.Join(r.errs...)
}

type settingsReader struct {
	env      environ.Lookuper
	errs     []error
	failed   map[string]bool // variables already reported
	warnings []string
	warned   map[string]bool
}

func (r *settingsReader) fail(name, raw string, reason error) {
	if r.failed[name] {
		return
	}
	if r.failed == nil {
		r.failed = map[string]bool{}
	}
	r.failed[name] = true
	r.errs = append(r.errs, &ConfigError{Var: name, Value: raw, Err: reason})
}

func (r *settingsReader) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if r.warned[msg] {
		return
	}
	if r.warned == nil {
		r.warned = map[string]bool{}
	}
	r.warned[msg] = true
	r.warnings = append(r.warnings, msg)
}

// signal resolves the exporter of one signal: OTEL_<SIGNAL>_EXPORTER when
// set, else cfg.Exporter; the protocol when it is OTLP. Errors are recorded
// only for signals that need an exporter from the environment.
func (r *settingsReader) signal(signal string, cfg Config, need bool) Signal {
	var s Signal
	name := "OTEL_" + signal + "_EXPORTER"
	raw, _ := r.env.LookupEnv(name)
	switch v := strings.ToLower(strings.TrimSpace(raw)); v {
	case "":
		switch cfg.Exporter {
		case ExporterOTLP, "":
			s.Kind = KindOTLP
		case ExporterConsole:
			s.Kind = KindConsole
		default: // reported once by ReadSettings
			s.Kind = KindNone
			return s
		}
	case KindOTLP, KindConsole, KindNone:
		s.Kind = v
	default:
		if need {
			reason := ErrUnknownExporter
			if strings.Contains(v, ",") {
				reason = fmt.Errorf("%w; lens supports one exporter per signal", ErrUnknownExporter)
			}
			r.fail(name, raw, reason)
		}
		s.Kind = KindNone
		return s
	}
	if s.Kind != KindOTLP {
		return s
	}
	s.Protocol = DefaultProtocol
	for _, pname := range [...]string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		praw, _ := r.env.LookupEnv(pname)
		v := strings.TrimSpace(praw)
		if v == "" {
			continue
		}
		if v != ProtocolGRPC && v != ProtocolHTTPProtobuf {
			if need {
				r.fail(pname, praw, ErrInvalidProtocol)
			}
			break
		}
		s.Protocol = v
		break
	}
	if need {
		s.ClientTimeout = DefaultOTLPTimeout
		for _, tname := range [...]string{"OTEL_EXPORTER_OTLP_" + signal + "_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"} {
			traw, ok := r.env.LookupEnv(tname)
			if !ok || strings.TrimSpace(traw) == "" {
				continue
			}
			if d, err := parseMillis(traw, 1); err != nil {
				r.warnf("%s=%q: %v; using %v", tname, traw, err, DefaultOTLPTimeout)
				s.Timeout = DefaultOTLPTimeout
			} else {
				s.ClientTimeout = d
			}
			break
		}
		r.connection(signal, &s)
	}
	return s
}

// millis reads a duration in milliseconds in [low ms, MaxDuration].
func (r *settingsReader) millis(name string, def time.Duration, low int64) time.Duration {
	raw, ok := r.env.LookupEnv(name)
	if !ok || strings.TrimSpace(raw) == "" {
		return def
	}
	d, err := parseMillis(raw, low)
	if err != nil {
		r.warnf("%s=%q: %v; using %d", name, raw, err, def.Milliseconds())
		return def
	}
	return d
}

func parseMillis(raw string, low int64) (time.Duration, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err != nil {
		return 0, ErrNotInteger
	}
	if n < low || n > MaxDuration.Milliseconds() {
		return 0, fmt.Errorf("%w (%d to %d ms)", ErrOutOfRange, low, MaxDuration.Milliseconds())
	}
	return time.Duration(n) * time.Millisecond, nil
}

// count reads a positive count in [1, high].
func (r *settingsReader) count(name string, def, high int) int {
	raw, ok := r.env.LookupEnv(name)
	if !ok || strings.TrimSpace(raw) == "" {
		return def
	}
	n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	switch {
	case err != nil:
		r.warnf("%s=%q: %v; using %d", name, raw, ErrNotInteger, def)
		return def
	case n < 1 || n > int64(high) || n > math.MaxInt32:
		r.warnf("%s=%q: %v (1 to %d); using %d", name, raw, ErrOutOfRange, high, def)
		return def
	}
	return int(n)
}
