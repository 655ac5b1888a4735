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

// The options are typed by the functions that use them, so that an option
// passed where it does nothing is a compile error:
//
//   - a [ConfigOption] configures [FromEnv];
//   - a [ResourceOption] configures the resource: [ResourceAttributes],
//     [NewResource], [Detector] and [Setup] (every ResourceOption is also a
//     [SetupOption]);
//   - a [SetupOption] configures [Setup] only;
//   - [WithEnv] is all three ([EnvOption]).
//
// Their methods are unexported: only this package makes options.

// ConfigOption configures [FromEnv]: [WithEnv], [WithPrefix],
// [WithFallbackPrefix].
type ConfigOption interface {
	applyConfig(*configOptions)
}

// SetupOption configures [Setup]: every [ResourceOption], and
// [WithSpanExporter], [WithMetricReader], [WithMetricExporter],
// [WithLogExporter], [WithAllowReinit], [WithConsoleWriter],
// [WithoutGlobals].
type SetupOption interface {
	applySetup(*setupOptions)
}

// ResourceOption configures the resource of [ResourceAttributes],
// [NewResource], [Detector] and [Setup]: [WithEnv],
// [WithResourceAttributes], [WithRankFrom], [WithDetectOptions],
// [WithExplanation], [WithLogger].
type ResourceOption interface {
	SetupOption
	applyResource(*assembly.Options)
}

// EnvOption is the option of [WithEnv], which every function takes.
type EnvOption interface {
	ConfigOption
	ResourceOption
}

// configOptions are FromEnv's.
type configOptions struct {
	env            environ.Lookuper
	prefix         string
	fallbackPrefix string
}

// setupOptions are Setup's: the resource's, and the exporters and globals.
type setupOptions struct {
	t             assembly.Options // resource assembly
	spanExporter  sdktrace.SpanExporter
	metricReader  sdkmetric.Reader
	metricExp     sdkmetric.Exporter
	logExporter   sdklog.Exporter
	allowReinit   bool
	consoleWriter io.Writer
	noGlobals     bool
}

type configOption func(*configOptions)

func (f configOption) applyConfig(o *configOptions) { f(o) }

type setupOption func(*setupOptions)

func (f setupOption) applySetup(o *setupOptions) { f(o) }

type resourceOption func(*assembly.Options)

func (f resourceOption) applyResource(o *assembly.Options) { f(o) }
func (f resourceOption) applySetup(o *setupOptions)        { f(&o.t) }

type envOption struct{ env environ.Lookuper }

func (e envOption) applyConfig(o *configOptions)      { o.env = e.env }
func (e envOption) applyResource(o *assembly.Options) { o.Env = e.env }
func (e envOption) applySetup(o *setupOptions)        { o.t.Env = e.env }

func newConfigOptions(opts []ConfigOption) configOptions {
	var o configOptions
	for _, opt := range opts {
		if opt != nil {
			opt.applyConfig(&o)
		}
	}
	return o
}

func newResourceOptions(opts []ResourceOption) assembly.Options {
	var o assembly.Options
	for _, opt := range opts {
		if opt != nil {
			opt.applyResource(&o)
		}
	}
	if o.Env == nil {
		o.Env = environ.OS{}
	}
	return o
}

func newSetupOptions(opts []SetupOption) setupOptions {
	var o setupOptions
	for _, opt := range opts {
		if opt != nil {
			opt.applySetup(&o)
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
// ones.
func WithResourceAttributes(kvs ...attribute.KeyValue) ResourceOption {
	return resourceOption(func(o *assembly.Options) { o.Attrs = append(o.Attrs, kvs...) })
}

// WithSpanExporter makes Setup export spans with e instead of the exporter
// the configuration names (the reference's span_exporter=). Spans still go
// through Lens's non-blocking batch processor, and the resource e sees on
// every span is exactly [Handle.Resource]. Setup's Handle shuts e down.
func WithSpanExporter(e sdktrace.SpanExporter) SetupOption {
	return setupOption(func(o *setupOptions) { o.spanExporter = e })
}

// WithMetricReader makes Setup register r instead of the periodic reader the
// configuration implies (the reference's metric_reader=), e.g. an
// sdkmetric.ManualReader in tests. Setup's Handle shuts r down.
//
// A reader passed here sees the meter provider's resource as the SDK builds
// it: resource.Environment() of the process merged under [Handle.Resource]
// (docs/resource.md#sdk-provider-merge). It can therefore hold extra keys that only the SDK's parser
// produces (see the package documentation, "What leaves the process").
func WithMetricReader(r sdkmetric.Reader) SetupOption {
	return setupOption(func(o *setupOptions) { o.metricReader = r })
}

// WithMetricExporter makes Setup export metrics with e, through Lens's
// periodic reader (OTEL_METRIC_EXPORT_INTERVAL), instead of the exporter
// the configuration names. Unlike a reader passed to [WithMetricReader], e
// sees exactly [Handle.Resource]. [WithMetricReader] takes precedence.
// Setup's Handle shuts e down.
func WithMetricExporter(e sdkmetric.Exporter) SetupOption {
	return setupOption(func(o *setupOptions) { o.metricExp = e })
}

// WithLogExporter makes Setup export log records with e (through an sdklog
// batch processor) instead of the exporter the configuration names. It has
// an effect only when Config.LogsEnabled is set. Setup's Handle shuts e
// down.
func WithLogExporter(e sdklog.Exporter) SetupOption {
	return setupOption(func(o *setupOptions) { o.logExporter = e })
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
func WithEnv(env environ.Lookuper) EnvOption { return envOption{env: env} }

// WithDetectOptions passes options to resource detection (package detect):
// host name, PID, GPU probe, Kubernetes secrets path, logger. Its logger
// defaults to the one of [WithLogger]; its environment is always the one of
// [WithEnv].
func WithDetectOptions(opts ...detect.Option) ResourceOption {
	return resourceOption(func(o *assembly.Options) { o.Detect = append(o.Detect, opts...) })
}

// WithExplanation records in e where every resource attribute came from
// (the carrier, the configuration, the caller, detection, derivation), as
// lens resource --explain prints it.
func WithExplanation(e *detect.Explanation) ResourceOption {
	return resourceOption(func(o *assembly.Options) { o.Explain = e })
}

// WithLogger sets the logger for Lens's own messages (the rank warning,
// configuration warnings, export failures); nil means slog.Default() at the
// time of logging. Messages carry a "logger" attribute with the reference's
// logger name.
func WithLogger(l *slog.Logger) ResourceOption {
	return resourceOption(func(o *assembly.Options) { o.Logger = l })
}

// WithAllowReinit lets an enabled Setup succeed while another enabled
// Handle is still active (the reference's _allow_reinit, meant for tests).
// The Handles may shut down in any order: each Shutdown leaves the globals
// of a live Handle installed (docs/resource.md#setup-once).
func WithAllowReinit() SetupOption {
	return setupOption(func(o *setupOptions) { o.allowReinit = true })
}

// WithConsoleWriter sets where the "console" exporter writes (default
// os.Stdout, as the reference's console exporters and the OpenTelemetry Go
// stdout exporters do). Writes are serialised, so w need not be safe for
// concurrent use.
func WithConsoleWriter(w io.Writer) SetupOption {
	return setupOption(func(o *setupOptions) { o.consoleWriter = w })
}

// WithoutGlobals keeps Setup from installing its providers, its propagator,
// its error handler and its internal logger as the OpenTelemetry globals
// (otel.SetTracerProvider, otel.SetMeterProvider, otel.SetLoggerProvider,
// otel.SetTextMapPropagator, otel.SetErrorHandler, otel.SetLogger). Use the
// Handle's accessors instead.
func WithoutGlobals() SetupOption {
	return setupOption(func(o *setupOptions) { o.noGlobals = true })
}

// WithPrefix sets the prefix of the configuration variables [FromEnv] reads
// (default [DefaultPrefix], "NEMO_LENS"): <prefix>_ENABLED, <prefix>_RUN_ID, ….
func WithPrefix(prefix string) ConfigOption {
	return configOption(func(o *configOptions) { o.prefix = prefix })
}

// WithFallbackPrefix sets a second prefix [FromEnv] tries for every
// configuration variable that is empty or absent under the first (the
// reference's fallback_prefix).
func WithFallbackPrefix(prefix string) ConfigOption {
	return configOption(func(o *configOptions) { o.fallbackPrefix = prefix })
}

// Launchers whose variables [WithRankFrom] reads.
const (
	// RankFromSlurm reads SLURM_PROCID, SLURM_NTASKS and SLURM_LOCALID.
	RankFromSlurm = detect.RankFromSlurm
	// RankFromTorchrun reads RANK, WORLD_SIZE and LOCAL_RANK.
	RankFromTorchrun = detect.RankFromTorchrun
	// RankFromK8sIndex reads JOB_COMPLETION_INDEX (an Indexed Job; rank only).
	RankFromK8sIndex = detect.RankFromK8sIndex
	// RankFromMPI reads Open MPI's OMPI_COMM_WORLD_RANK, _SIZE and
	// _LOCAL_RANK, else MPICH's and Intel MPI's PMI_RANK, PMI_SIZE and
	// MPI_LOCALRANKID, else PMIx's PMIX_RANK (rank only).
	RankFromMPI = detect.RankFromMPI
)

// WithRankFrom takes nv.dl.rank, nv.dl.world_size and nv.dl.local_rank from
// the variables of a launcher ([RankFromSlurm], [RankFromTorchrun],
// [RankFromK8sIndex], [RankFromMPI]) as caller attributes (integers, strict rule); those of
// [WithResourceAttributes] win over them. A variable that is missing or not
// an integer gives no attribute and a warning. This is opt-in and never the
// default: the Python reference never reads RANK or SLURM_PROCID, so a
// process that uses it reports what a Python process of the same job does
// only if that one is given the same values.
func WithRankFrom(launcher string) ResourceOption {
	return resourceOption(func(o *assembly.Options) { o.RankFrom = launcher })
}

// WithGPUDevices adds lens-go's GPU identity to the resource: the
// nv.gpu.visible.* lists of the GPUs this process may use
// (detect.VisibleGPUs: the NVIDIA driver's procfs, else nvidia-smi, mapped
// through CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES and Slurm's GPU
// variables; docs/detection.md#gpu-devices), keys that a query can join with
// the DCGM exporter's series (docs/backends.md#gpu-join). It is opt-in: the
// Python reference has no such keys
// (docs/compatibility.md#divergence-gpu-devices). Detection's options
// (WithDetectOptions: detect.WithNvidiaProcfs, detect.WithNvidiaSMI) and the
// environment apply. A failure leaves the keys out and is logged as a
// warning naming its source; no NVIDIA driver leaves them out silently.
// The resource waits for it: reading the driver's procfs takes microseconds,
// the nvidia-smi fallback up to its 5-second timeout (bounded by the
// context).
func WithGPUDevices() ResourceOption {
	return resourceOption(func(o *assembly.Options) { o.GPUDevices = true })
}
