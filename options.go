package lens

import (
	"io"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/assembly"
)

// Option configures [FromEnv], [Setup], [ResourceAttributes], [NewResource]
// and [Detector]. Each function documents the options it uses and ignores
// the others, so one option list can be passed to all of them.
type Option interface {
	apply(*options)
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	t              assembly.Options // resource assembly
	spanExporter   sdktrace.SpanExporter
	metricReader   sdkmetric.Reader
	metricExp      sdkmetric.Exporter
	logExporter    sdklog.Exporter
	allowReinit    bool
	consoleWriter  io.Writer
	noGlobals      bool
	prefix         string
	fallbackPrefix string
}

func newOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt.apply(&o)
		}
	}
	if o.t.Env == nil {
		o.t.Env = environ.OS{}
	}
	return o
}

// WithResourceAttributes passes the caller's resource attributes (layer 4 of
// the precedence, docs/resource.md#resource-precedence; the reference's resource_attributes=): they beat
// the carrier and the Lens base map, and lose to detection. A repeated key
// keeps its first position and takes its last value; attributes with an
// empty key, and slice-valued attributes (the carrier model has no form for
// them), are ignored. A later WithResourceAttributes adds to the earlier
// ones. Used by Setup, ResourceAttributes, NewResource and Detector.
func WithResourceAttributes(kvs ...attribute.KeyValue) Option {
	return optionFunc(func(o *options) { o.t.Attrs = append(o.t.Attrs, kvs...) })
}

// WithSpanExporter makes Setup export spans with e instead of the exporter
// the configuration names (the reference's span_exporter=). Spans still go
// through Lens's non-blocking batch processor, and the resource e sees on
// every span is exactly [Handle.Resource]. Setup's Handle shuts e down.
func WithSpanExporter(e sdktrace.SpanExporter) Option {
	return optionFunc(func(o *options) { o.spanExporter = e })
}

// WithMetricReader makes Setup register r instead of the periodic reader the
// configuration implies (the reference's metric_reader=), e.g. an
// sdkmetric.ManualReader in tests. Setup's Handle shuts r down.
//
// A reader passed here sees the meter provider's resource as the SDK builds
// it: resource.Environment() of the process merged under [Handle.Resource]
// (docs/resource.md#sdk-provider-merge). It can therefore hold extra keys that only the SDK's parser
// produces (see the package documentation, "What leaves the process").
func WithMetricReader(r sdkmetric.Reader) Option {
	return optionFunc(func(o *options) { o.metricReader = r })
}

// WithMetricExporter makes Setup export metrics with e, through Lens's
// periodic reader (OTEL_METRIC_EXPORT_INTERVAL), instead of the exporter
// the configuration names. Unlike a reader passed to [WithMetricReader], e
// sees exactly [Handle.Resource]. [WithMetricReader] takes precedence.
// Setup's Handle shuts e down.
func WithMetricExporter(e sdkmetric.Exporter) Option {
	return optionFunc(func(o *options) { o.metricExp = e })
}

// WithLogExporter makes Setup export log records with e (through an sdklog
// batch processor) instead of the exporter the configuration names. It has
// an effect only when Config.LogsEnabled is set. Setup's Handle shuts e
// down.
func WithLogExporter(e sdklog.Exporter) Option {
	return optionFunc(func(o *options) { o.logExporter = e })
}

// WithEnv sets the environment Lens reads (nil: the process environment, at
// call time): the configuration variables (FromEnv), the carrier,
// OTEL_SERVICE_NAME, DEPLOYMENT_ENV/ENVIRONMENT, the run-id sources,
// detection's variables (it replaces any detect.WithEnv given to
// [WithDetectOptions]) and the OTEL_* settings Setup reads itself (see the
// package documentation).
//
// The OTLP endpoint and TLS variables are among those Setup reads itself
// (docs/resource.md#otlp-endpoint-and-tls); the OpenTelemetry exporters
// keep reading the rest of theirs (headers, compression, timeouts) from
// the process environment.
func WithEnv(env environ.Lookuper) Option {
	return optionFunc(func(o *options) { o.t.Env = env })
}

// WithDetectOptions passes options to resource detection (package detect):
// host name, PID, GPU probe, Kubernetes secrets path, logger. Its logger
// defaults to the one of [WithLogger]; its environment is always the one of
// [WithEnv].
func WithDetectOptions(opts ...detect.Option) Option {
	return optionFunc(func(o *options) { o.t.Detect = append(o.t.Detect, opts...) })
}

// WithExplanation records in e where every resource attribute came from
// (the carrier, the configuration, the caller, detection, derivation), as
// lens resource --explain prints it. Used by ResourceAttributes,
// NewResource, Detector and Setup.
func WithExplanation(e *detect.Explanation) Option {
	return optionFunc(func(o *options) { o.t.Explain = e })
}

// WithLogger sets the logger for Lens's own messages (the rank warning,
// configuration warnings, export failures); nil means slog.Default() at the
// time of logging. Messages carry a "logger" attribute with the reference's
// logger name.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(o *options) { o.t.Logger = l })
}

// WithAllowReinit lets an enabled Setup succeed while another enabled
// Handle is still active (the reference's _allow_reinit, meant for tests).
// The Handles may shut down in any order: each Shutdown leaves the globals
// of a live Handle installed (docs/resource.md#setup-once).
func WithAllowReinit() Option {
	return optionFunc(func(o *options) { o.allowReinit = true })
}

// WithConsoleWriter sets where the "console" exporter writes (default
// os.Stdout, as the reference's console exporters and the OpenTelemetry Go
// stdout exporters do). Writes are serialised, so w need not be safe for
// concurrent use.
func WithConsoleWriter(w io.Writer) Option {
	return optionFunc(func(o *options) { o.consoleWriter = w })
}

// WithoutGlobals keeps Setup from installing its providers, its propagator,
// its error handler and its internal logger as the OpenTelemetry globals
// (otel.SetTracerProvider, otel.SetMeterProvider, otel.SetLoggerProvider,
// otel.SetTextMapPropagator, otel.SetErrorHandler, otel.SetLogger). Use the
// Handle's accessors instead.
func WithoutGlobals() Option {
	return optionFunc(func(o *options) { o.noGlobals = true })
}

// WithPrefix sets the prefix of the configuration variables [FromEnv] reads
// (default [DefaultPrefix], "NEMO_LENS"): <prefix>_ENABLED, <prefix>_RUN_ID, ….
func WithPrefix(prefix string) Option {
	return optionFunc(func(o *options) { o.prefix = prefix })
}

// WithFallbackPrefix sets a second prefix [FromEnv] tries for every
// configuration variable that is empty or absent under the first (the
// reference's fallback_prefix).
func WithFallbackPrefix(prefix string) Option {
	return optionFunc(func(o *options) { o.fallbackPrefix = prefix })
}

// Launchers whose variables [WithRankFrom] reads.
const (
	// RankFromSlurm reads SLURM_PROCID, SLURM_NTASKS and SLURM_LOCALID.
	RankFromSlurm = detect.RankFromSlurm
	// RankFromTorchrun reads RANK, WORLD_SIZE and LOCAL_RANK.
	RankFromTorchrun = detect.RankFromTorchrun
	// RankFromK8sIndex reads JOB_COMPLETION_INDEX (an Indexed Job; rank only).
	RankFromK8sIndex = detect.RankFromK8sIndex
)

// WithRankFrom takes nv.dl.rank, nv.dl.world_size and nv.dl.local_rank from
// the variables of a launcher ([RankFromSlurm], [RankFromTorchrun],
// [RankFromK8sIndex]) as caller attributes (integers, strict rule); those of
// [WithResourceAttributes] win over them. A variable that is missing or not
// an integer gives no attribute and a warning. This is opt-in and never the
// default: the Python reference never reads RANK or SLURM_PROCID, so a
// process that uses it reports what a Python process of the same job does
// only if that one is given the same values. Used by Setup,
// ResourceAttributes, NewResource and Detector.
func WithRankFrom(launcher string) Option {
	return optionFunc(func(o *options) { o.t.RankFrom = launcher })
}
