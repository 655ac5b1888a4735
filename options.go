package lens

import (
	"io"
	"log/slog"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/resources"
)

// Option configures [Setup], [ResourceAttributes] and [NewResource]. Options
// that only concern providers are ignored by the resource functions.
type Option func(*options)

type options struct {
	attrs         *attr.Map
	spanExporter  sdktrace.SpanExporter
	metricReader  sdkmetric.Reader
	metricExp     sdkmetric.Exporter
	logExporter   sdklog.Exporter
	env           carrier.Lookuper
	detect        resources.Options
	logger        *slog.Logger
	allowReinit   bool
	consoleWriter io.Writer
	noGlobals     bool
}

func newOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// environ returns the environment to read: WithEnv's, else the detection
// options' Env, else the process environment.
func (o *options) environ() carrier.Lookuper {
	switch {
	case o.env != nil:
		return o.env
	case o.detect.Env != nil:
		return o.detect.Env
	}
	return carrier.OSEnv{}
}

// WithResourceAttributes passes the caller's resource attributes (layer 4 of
// the precedence, SPEC §6.3; the reference's resource_attributes=): they beat
// the carrier and the Lens base map, and lose to detection. The map is read
// during the call and not retained. Null values and empty keys are ignored.
// A later WithResourceAttributes replaces an earlier one.
func WithResourceAttributes(m *attr.Map) Option {
	return func(o *options) { o.attrs = m }
}

// WithSpanExporter makes Setup export spans with e instead of the exporter
// Config.Exporter names (the reference's span_exporter=). Spans still go
// through Lens's non-blocking batch processor, and the resource e sees on
// every span is exactly [Handle.Resource]. Setup's Handle shuts e down.
func WithSpanExporter(e sdktrace.SpanExporter) Option {
	return func(o *options) { o.spanExporter = e }
}

// WithMetricReader makes Setup register r instead of the periodic reader
// Config.Exporter implies (the reference's metric_reader=), e.g. an
// sdkmetric.ManualReader in tests. Setup's Handle shuts r down.
//
// A reader passed here sees the meter provider's resource as the SDK builds
// it: resource.Environment() of the process merged under [Handle.Resource]
// (SPEC §11.2). It can therefore hold extra keys that only the SDK's parser
// produces (see the package documentation, "What leaves the process").
func WithMetricReader(r sdkmetric.Reader) Option {
	return func(o *options) { o.metricReader = r }
}

// WithMetricExporter makes Setup export metrics with e, through Lens's
// periodic reader (OTEL_METRIC_EXPORT_INTERVAL), instead of the exporter
// Config.Exporter names. Unlike a reader passed to [WithMetricReader], e
// sees exactly [Handle.Resource]. [WithMetricReader] takes precedence.
// Setup's Handle shuts e down.
func WithMetricExporter(e sdkmetric.Exporter) Option {
	return func(o *options) { o.metricExp = e }
}

// WithLogExporter makes Setup export log records with e (through an
// sdklog batch processor) instead of the exporter Config.Exporter names. It
// has an effect only when Config.LogsEnabled is set. Setup's Handle shuts e
// down.
func WithLogExporter(e sdklog.Exporter) Option {
	return func(o *options) { o.logExporter = e }
}

// WithEnv sets the environment Lens reads (nil: the process environment):
// the carrier, OTEL_SERVICE_NAME, DEPLOYMENT_ENV/ENVIRONMENT, SLURM_JOB_ID for
// the run id, detection's variables (unless [WithDetectOptions] sets its own
// Env), OTEL_EXPORTER_OTLP[_<SIGNAL>]_PROTOCOL, OTEL_METRIC_EXPORT_INTERVAL
// and OTEL_BSP_MAX_QUEUE_SIZE / OTEL_BSP_MAX_EXPORT_BATCH_SIZE.
//
// The OpenTelemetry SDK and its exporters keep reading their own variables
// (OTEL_EXPORTER_OTLP_ENDPOINT, headers, timeouts, OTEL_TRACES_SAMPLER, …)
// from the process environment; see the package documentation.
func WithEnv(env carrier.Lookuper) Option {
	return func(o *options) { o.env = env }
}

// WithDetectOptions sets the options of resource detection: host name, PID,
// GPU probe, Kubernetes secrets path, logger and Explain. Its Env is used
// when [WithEnv] is not given; [WithEnv] overrides it. Its Logger defaults to
// the logger of [WithLogger].
func WithDetectOptions(d resources.Options) Option {
	return func(o *options) { o.detect = d }
}

// WithLogger sets the logger for Lens's own messages (the rank warning,
// configuration warnings); nil means slog.Default() at the time of logging.
// Messages carry a "logger" attribute with the reference's logger name.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithAllowReinit lets an enabled Setup succeed while another enabled
// Handle is still active (the reference's _allow_reinit, meant for tests).
func WithAllowReinit() Option {
	return func(o *options) { o.allowReinit = true }
}

// WithConsoleWriter sets where the "console" exporter writes (default
// os.Stdout, as the reference's console exporters and the OpenTelemetry Go
// stdout exporters do). Writes are serialised, so w need not be safe for
// concurrent use.
func WithConsoleWriter(w io.Writer) Option {
	return func(o *options) { o.consoleWriter = w }
}

// WithoutGlobals keeps Setup from installing its providers as the
// OpenTelemetry globals (otel.SetTracerProvider, otel.SetMeterProvider,
// otel.SetLoggerProvider, otel.SetTextMapPropagator). Use the Handle's
// accessors instead.
func WithoutGlobals() Option {
	return func(o *options) { o.noGlobals = true }
}
