package lens

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nemolens/lens-go/environ"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutlog"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/logx"
)

// ErrAlreadySetUp is returned by an enabled [Setup] while the Handle of an
// earlier enabled Setup has not been shut down (SPEC §6.1), unless
// [WithAllowReinit] is given.
var ErrAlreadySetUp = errors.New("lens: telemetry is already set up in this process")

// InstrumentationName is the instrumentation scope of [Handle.Logger].
const InstrumentationName = ModulePath

// Defaults of the settings Setup reads from the environment.
const (
	// DefaultMetricExportInterval is the periodic metric export interval
	// when OTEL_METRIC_EXPORT_INTERVAL is unset or invalid.
	DefaultMetricExportInterval = 10 * time.Second
	// DefaultSpanQueueSize is the number of spans that may be pending export
	// when OTEL_BSP_MAX_QUEUE_SIZE is unset or invalid; further spans are
	// dropped ([Handle.DroppedSpans]).
	DefaultSpanQueueSize = sdktrace.DefaultMaxQueueSize
	// DefaultShutdownTimeout bounds [Handle.Shutdown] and
	// [Handle.ForceFlush] when their context has no deadline.
	DefaultShutdownTimeout = 10 * time.Second
)

// OTLP protocols, the values of OTEL_EXPORTER_OTLP[_<SIGNAL>]_PROTOCOL.
const (
	ProtocolGRPC         = "grpc"
	ProtocolHTTPProtobuf = "http/protobuf"
)

// queueSlack is how many slots of the batch processor's queue
// (OTEL_BSP_MAX_QUEUE_SIZE, as in the plain SDK) the drop gate keeps free
// for ForceFlush markers, so that the batch processor itself never has to
// drop a span behind the gate's back: the gate drops, and counts, a span
// once size − slack spans are pending (2048 − 64 = 1984 by default). Keeping
// the queue at the SDK's size, instead of enlarging it, keeps its buffer
// under the runtime's 32 KiB large-object threshold. Queues of fewer than 256
// slots keep a quarter free.
const queueSlack = 64

// gateLimit is the number of pending spans above which the gate drops.
func gateLimit(queueSize int) int64 {
	return int64(queueSize - min(queueSlack, queueSize/4))
}

// setups is the one-enabled-setup-per-process guard (SPEC §6.1): the number
// of enabled Handles not yet shut down. Like the global providers it
// guards, it is process-wide by nature.
var setups struct {
	mu     sync.Mutex
	active int
}

func acquire(allowReinit bool) error {
	setups.mu.Lock()
	defer setups.mu.Unlock()
	if setups.active > 0 && !allowReinit {
		return fmt.Errorf("%w (shut the earlier Handle down first, or pass WithAllowReinit)", ErrAlreadySetUp)
	}
	setups.active++
	return nil
}

func release() {
	setups.mu.Lock()
	defer setups.mu.Unlock()
	if setups.active > 0 {
		setups.active--
	}
}

// Shared immutable no-op values of disabled handles.
var (
	discardLogger = slog.New(slog.DiscardHandler)
	emptyResource = resource.Empty()
)

// Setup configures telemetry for the process, as the reference's
// setup_telemetry does (SPEC §6), and returns its [Handle].
//
// Disabled (cfg.Enabled false): nothing is read, built or installed; the
// Handle's providers are no-ops and IsExporting is false. This costs one
// small allocation.
//
// Enabled:
//
//   - Only one enabled Handle may be active per process: while an earlier one
//     has not been shut down, Setup returns [ErrAlreadySetUp], unless
//     [WithAllowReinit] is given.
//   - An empty cfg.RunID is filled first with [NewRunID] (SLURM_JOB_ID, else
//     12 random hex characters) and written back into [Handle.Config].
//   - The resource is [ResourceAttributes] over telemetry.sdk.* — the same
//     resource for every provider, and exactly the one [Handle.Resource]
//     returns.
//   - !cfg.TracesDisabled builds an sdktrace.TracerProvider whose spans go
//     through a non-blocking batch processor: when OTEL_BSP_MAX_QUEUE_SIZE
//     (default 2048) spans are pending export, further spans are dropped and
//     counted ([Handle.DroppedSpans]); ending a span never waits for the
//     collector. !cfg.MetricsDisabled builds an sdkmetric.MeterProvider with a
//     periodic reader (OTEL_METRIC_EXPORT_INTERVAL, default 10000 ms).
//     cfg.LogsEnabled builds an sdklog.LoggerProvider with a batch processor
//     and the log/slog bridge of [Handle.Logger]. A disabled signal gets a
//     no-op provider.
//   - cfg.Exporter "otlp" (or "") uses the OTLP exporters, gRPC unless
//     OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
//     says "http/protobuf" (any other value is a [*ConfigError]); endpoint,
//     headers, TLS and timeouts come from the standard OTEL_EXPORTER_OTLP_*
//     variables, read by the exporters. No connection is made during Setup:
//     gRPC connects lazily and HTTP per export, so a collector that is down
//     only costs dropped data. "console" uses the stdout exporters writing to
//     [WithConsoleWriter] (default os.Stdout). Any other value is
//     [ErrUnknownExporter]. [WithSpanExporter], [WithMetricReader] and
//     [WithLogExporter] replace the exporter of their signal.
//   - Unless [WithoutGlobals] is given, the providers of the enabled signals
//     become the OpenTelemetry globals, and — when the global propagator is
//     still the default no-op — W3C TraceContext + Baggage becomes the global
//     propagator (the Python SDK's default). [Handle.Shutdown] puts the
//     previous globals back when they are still Lens's.
//
// On error nothing stays installed and the guard is not taken.
func Setup(ctx context.Context, cfg Config, opts ...Option) (*Handle, error) {
	cfg = cfg.withDefaults()
	if !cfg.Enabled {
		return &Handle{cfg: cfg}, nil
	}
	o := newOptions(opts)
	s, err := newSettings(cfg, &o)
	if err != nil {
		return nil, err
	}
	if err := acquire(o.allowReinit); err != nil {
		return nil, err
	}
	h, err := build(ctx, cfg, &o, &s)
	if err != nil {
		release()
		return nil, err
	}
	return h, nil
}

// settings are the values Setup reads from the environment before building
// anything, so that configuration errors are reported before the guard is
// taken.
type settings struct {
	env                                        environ.Lookuper
	traceProtocol, metricProtocol, logProtocol string
	metricInterval                             time.Duration
	spanQueueSize, spanBatchSize               int
	warnings                                   []string
}

func newSettings(cfg Config, o *options) (settings, error) {
	if cfg.Exporter != ExporterOTLP && cfg.Exporter != ExporterConsole {
		return settings{}, fmt.Errorf("lens: Config.Exporter %q: %w", cfg.Exporter, ErrUnknownExporter)
	}
	s := settings{env: o.env}
	var errs []error
	if cfg.Exporter == ExporterOTLP {
		protocol := func(need bool, signal string, dst *string) {
			if !need {
				return
			}
			p, err := otlpProtocol(s.env, signal)
			if err != nil {
				errs = append(errs, err)
			}
			*dst = p
		}
		protocol(!cfg.TracesDisabled && o.spanExporter == nil, "TRACES", &s.traceProtocol)
		protocol(!cfg.MetricsDisabled && o.metricReader == nil && o.metricExp == nil, "METRICS", &s.metricProtocol)
		protocol(cfg.LogsEnabled && o.logExporter == nil, "LOGS", &s.logProtocol)
	}
	if err := errors.Join(errs...); err != nil {
		return settings{}, err
	}
	s.metricInterval = time.Duration(s.positiveInt("OTEL_METRIC_EXPORT_INTERVAL", int(DefaultMetricExportInterval/time.Millisecond))) * time.Millisecond
	s.spanQueueSize = s.positiveInt("OTEL_BSP_MAX_QUEUE_SIZE", DefaultSpanQueueSize)
	s.spanBatchSize = min(s.positiveInt("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", sdktrace.DefaultMaxExportBatchSize), s.spanQueueSize)
	return s, nil
}

// otlpProtocol resolves the OTLP protocol of one signal:
// OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else
// "grpc". Values are trimmed; a non-empty value other than "grpc" and
// "http/protobuf" is an error (the Go SDK has no http/json exporter).
func otlpProtocol(env environ.Lookuper, signal string) (string, error) {
	for _, name := range [...]string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		raw, _ := env.LookupEnv(name)
		switch v := strings.TrimSpace(raw); v {
		case "":
			continue
		case ProtocolGRPC, ProtocolHTTPProtobuf:
			return v, nil
		default:
			return "", &ConfigError{Var: name, Value: raw, Err: ErrInvalidProtocol}
		}
	}
	return ProtocolGRPC, nil
}

// positiveInt reads an SDK tuning variable. As the OpenTelemetry SDKs do,
// an invalid value is reported (WARN, logged by build) and the default is
// used.
func (s *settings) positiveInt(name string, def int) int {
	raw, ok := s.env.LookupEnv(name)
	v := strings.TrimSpace(raw)
	if !ok || v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		s.warnings = append(s.warnings, fmt.Sprintf("%s=%q is not a positive integer; using %d", name, raw, def))
		return def
	}
	return n
}

func build(ctx context.Context, cfg Config, o *options, s *settings) (_ *Handle, err error) {
	for _, w := range s.warnings {
		logx.Logger(o.logger, logx.Providers).Warn(w)
	}
	if cfg.RunID == "" {
		cfg.RunID = NewRunID(s.env)
	}
	sdkAttrs := sdkAttributes()
	attrs, err := resourceAttributes(ctx, cfg, o, sdkAttrs[:])
	if err != nil {
		return nil, err
	}
	res := attrs.Resource()
	h := &Handle{cfg: cfg, attrs: attrs, res: res, enabled: true}
	defer func() {
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), DefaultShutdownTimeout)
			defer cancel()
			_ = h.shutdownProviders(ctx)
		}
	}()

	var console io.Writer
	if cfg.Exporter == ExporterConsole {
		w := o.consoleWriter
		if w == nil {
			w = os.Stdout
		}
		console = &syncWriter{w: w}
	}

	if !cfg.TracesDisabled {
		exp := o.spanExporter
		if exp == nil {
			if exp, err = newSpanExporter(ctx, s.traceProtocol, console); err != nil {
				return nil, fmt.Errorf("lens: span exporter: %w", err)
			}
		}
		p := &spanPipeline{q: spanQueue{limit: gateLimit(s.spanQueueSize)}}
		p.exp.next, p.exp.res, p.exp.q = exp, res, &p.q
		bsp := sdktrace.NewBatchSpanProcessor(&p.exp,
			sdktrace.WithMaxQueueSize(s.spanQueueSize),
			sdktrace.WithMaxExportBatchSize(s.spanBatchSize))
		p.gate.next, p.gate.q = bsp, &p.q
		h.spans = p
		h.sdkTP = sdktrace.NewTracerProvider(
			sdktrace.WithResource(res),
			sdktrace.WithSpanProcessor(&p.gate))
	}
	if !cfg.MetricsDisabled {
		reader := o.metricReader
		if reader == nil {
			exp := o.metricExp
			if exp == nil {
				if exp, err = newMetricExporter(ctx, s.metricProtocol, console); err != nil {
					return nil, fmt.Errorf("lens: metric exporter: %w", err)
				}
			}
			reader = sdkmetric.NewPeriodicReader(metricExporter{Exporter: exp, res: res},
				sdkmetric.WithInterval(s.metricInterval))
		}
		h.sdkMP = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(reader))
	}
	if cfg.LogsEnabled {
		exp := o.logExporter
		if exp == nil {
			if exp, err = newLogExporter(ctx, s.logProtocol, console); err != nil {
				return nil, fmt.Errorf("lens: log exporter: %w", err)
			}
		}
		h.sdkLP = sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
		h.logger = otelslog.NewLogger(InstrumentationName, otelslog.WithLoggerProvider(h.sdkLP))
	}
	if cfg.LogsEnabled || (!cfg.MetricsDisabled && o.metricReader != nil) {
		warnSDKOnlyKeys(o.logger, res)
	}
	if !o.noGlobals {
		h.globals = installGlobals(h)
	}
	return h, nil
}

// warnSDKOnlyKeys reports the keys that the SDK's own parse of the process
// environment adds to the resource of the providers whose data Lens cannot
// re-stamp (logs, a caller's metric reader).
func warnSDKOnlyKeys(logger *slog.Logger, res *resource.Resource) {
	if extra := sdkOnlyKeys(os.Getenv(carrier.EnvVar), res); len(extra) > 0 {
		logx.Logger(logger, logx.Providers).Warn("the OpenTelemetry SDK's own parse of "+carrier.EnvVar+
			" adds resource attributes that Lens does not produce to log records and to metrics read by a caller's reader",
			"keys", strings.Join(extra, ","))
	}
}

// sdkOnlyKeys returns, quoted and sorted, the keys the OpenTelemetry Go
// SDK's parser (sdk/resource fromEnv, v1.47.0) reads from text that res does
// not hold. It mirrors that parser's key rules: the variable is trimmed
// with strings.TrimSpace, split on every ',', cut at the first '=' (pieces
// without '=' are skipped), the key is strings.TrimSpace'd and an empty key
// is dropped. (OTEL_SERVICE_NAME only ever adds service.name, which res
// always holds.)
func sdkOnlyKeys(text string, res *resource.Resource) []string {
	var extra []string
	for p := range strings.SplitSeq(strings.TrimSpace(text), ",") {
		k, _, ok := strings.Cut(p, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			continue
		}
		if _, held := res.Set().Value(attribute.Key(k)); !held {
			extra = append(extra, strconv.Quote(k))
		}
	}
	slices.Sort(extra)
	return slices.Compact(extra)
}

func newSpanExporter(ctx context.Context, protocol string, console io.Writer) (sdktrace.SpanExporter, error) {
	switch {
	case console != nil:
		return stdouttrace.New(stdouttrace.WithWriter(console))
	case protocol == ProtocolHTTPProtobuf:
		return otlptracehttp.New(ctx)
	default:
		return otlptracegrpc.New(ctx)
	}
}

func newMetricExporter(ctx context.Context, protocol string, console io.Writer) (sdkmetric.Exporter, error) {
	switch {
	case console != nil:
		return stdoutmetric.New(stdoutmetric.WithWriter(console))
	case protocol == ProtocolHTTPProtobuf:
		return otlpmetrichttp.New(ctx)
	default:
		return otlpmetricgrpc.New(ctx)
	}
}

func newLogExporter(ctx context.Context, protocol string, console io.Writer) (sdklog.Exporter, error) {
	switch {
	case console != nil:
		return stdoutlog.New(stdoutlog.WithWriter(console))
	case protocol == ProtocolHTTPProtobuf:
		return otlploghttp.New(ctx)
	default:
		return otlploggrpc.New(ctx)
	}
}

// lensPropagator marks the propagator Setup installs, so that Shutdown can
// tell whether the global is still Lens's (propagators built by
// propagation.NewCompositeTextMapPropagator are slices and cannot be
// compared).
type lensPropagator struct{ propagation.TextMapPropagator }

// installedGlobals remembers what Setup replaced.
type installedGlobals struct {
	tp         trace.TracerProvider
	mp         metric.MeterProvider
	lp         log.LoggerProvider
	propagator propagation.TextMapPropagator
	ours       *lensPropagator
}

func installGlobals(h *Handle) *installedGlobals {
	g := &installedGlobals{}
	if h.sdkTP != nil {
		g.tp = otel.GetTracerProvider()
		otel.SetTracerProvider(h.sdkTP)
	}
	if h.sdkMP != nil {
		g.mp = otel.GetMeterProvider()
		otel.SetMeterProvider(h.sdkMP)
	}
	if h.sdkLP != nil {
		g.lp = otel.GetLoggerProvider()
		otel.SetLoggerProvider(h.sdkLP)
	}
	if prev := otel.GetTextMapPropagator(); len(prev.Fields()) == 0 {
		g.propagator = prev
		g.ours = &lensPropagator{propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
		otel.SetTextMapPropagator(g.ours)
	}
	return g
}

// restore puts back the previous globals that are still Lens's.
func (g *installedGlobals) restore(h *Handle) {
	if g == nil {
		return
	}
	if h.sdkTP != nil && otel.GetTracerProvider() == trace.TracerProvider(h.sdkTP) {
		otel.SetTracerProvider(g.tp)
	}
	if h.sdkMP != nil && otel.GetMeterProvider() == metric.MeterProvider(h.sdkMP) {
		otel.SetMeterProvider(g.mp)
	}
	if h.sdkLP != nil && otel.GetLoggerProvider() == log.LoggerProvider(h.sdkLP) {
		otel.SetLoggerProvider(g.lp)
	}
	if g.ours != nil {
		if cur, ok := otel.GetTextMapPropagator().(*lensPropagator); ok && cur == g.ours {
			otel.SetTextMapPropagator(g.propagator)
		}
	}
}
