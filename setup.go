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

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutlog"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/internal/assembly"
	"github.com/nemolens/lens-go/internal/logx"
	"github.com/nemolens/lens-go/internal/process"
	"github.com/nemolens/lens-go/internal/telemetry"
	"github.com/nemolens/lens-go/internal/traceid"
	"github.com/nemolens/lens-go/lensconv"
)

// ErrAlreadySetUp is returned by an enabled [Setup] while the Handle of an
// earlier enabled Setup has not been shut down (docs/resource.md#setup-once), unless
// [WithAllowReinit] is given.
var ErrAlreadySetUp = errors.New("lens: telemetry is already set up in this process")

// ErrCollectorRefused is wrapped by the error of [Handle.Shutdown] when the
// collector refused the connection, which ends the final export at once
// instead of waiting out the deadline.
var ErrCollectorRefused = telemetry.ErrCollectorRefused

// ErrTLSHandshake is wrapped by the error of an OTLP/gRPC export (and of
// [Handle.Shutdown]) that ended at once because the TLS handshake with the
// collector failed for a certificate or protocol reason; the message gives
// the cause (docs/resource.md#otlp-endpoint-and-tls).
var ErrTLSHandshake = telemetry.ErrTLSHandshake

// InstrumentationName is the instrumentation scope of [Handle.Logger].
const InstrumentationName = ModulePath

// Defaults of the settings Setup reads from the environment; an invalid or
// out-of-range value is replaced by its default, with one warning.
const (
	// DefaultMetricExportInterval is the periodic metric export interval
	// when OTEL_METRIC_EXPORT_INTERVAL is unset or invalid (the reference's
	// 10 s; valid values: 1 ms to 24 h).
	DefaultMetricExportInterval = telemetry.DefaultMetricExportInterval
	// DefaultSpanQueueSize is the number of spans that may be pending export
	// when OTEL_BSP_MAX_QUEUE_SIZE is unset or invalid (valid: 1 to
	// 1,048,576); further spans are dropped and counted ([SpanCounts]).
	DefaultSpanQueueSize = telemetry.DefaultBSPMaxQueueSize
	// DefaultShutdownTimeout bounds [Handle.Shutdown] and
	// [Handle.ForceFlush] when their context has no deadline.
	DefaultShutdownTimeout = 10 * time.Second
)

// OTLP protocols, the values of OTEL_EXPORTER_OTLP[_<SIGNAL>]_PROTOCOL.
const (
	ProtocolGRPC         = telemetry.ProtocolGRPC
	ProtocolHTTPProtobuf = telemetry.ProtocolHTTPProtobuf
)

// setups is the one-enabled-setup-per-process guard (docs/resource.md#setup-once): the number
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

// Setup configures telemetry for the process, as the reference's
// setup_telemetry does (docs/resource.md#resource-precedence), and returns its [Handle].
//
// Disabled (cfg.Enabled false, or OTEL_SDK_DISABLED=true): nothing is built
// or installed; the Handle's providers are no-ops and IsExporting is false.
// This costs one small allocation (a read of OTEL_SDK_DISABLED when
// enabled).
//
// Enabled:
//
//   - Only one enabled Handle may be active per process: while an earlier one
//     has not been shut down, Setup returns [ErrAlreadySetUp], unless
//     [WithAllowReinit] is given.
//   - An empty cfg.RunID is filled first with [NewRunID] and written back
//     into [Handle.Config]; the run id and the service.instance.id become
//     this process's identity, which carrier.ChildEnv, carrier.Publish and
//     lens exec hand to the processes this one starts.
//   - The resource is [NewResource]'s — the same for every provider, and
//     exactly the one [Handle.Resource] returns.
//   - The signals: traces unless cfg.TracesDisabled, metrics unless
//     cfg.MetricsDisabled, logs when cfg.LogsEnabled; a signal whose
//     OTEL_<SIGNAL>_EXPORTER is "none" is off too, unless an exporter for it
//     is given in code. Spans go through Lens's batch span processor
//     (OTEL_BSP_*): ending a span never blocks, and every span is accounted
//     for ([Handle.SpanCounts]). Metrics go through a periodic reader
//     (OTEL_METRIC_EXPORT_INTERVAL, default 10000 ms); logs through an
//     sdklog batch processor (OTEL_BLRP_*) and the log/slog bridge of
//     [Handle.Logger]. A signal that is off gets a no-op provider.
//   - Exporters: OTEL_<SIGNAL>_EXPORTER ("otlp", "console", "none") when
//     set, else cfg.Exporter ("otlp", the default, or "console"). OTLP is
//     gRPC unless OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else
//     OTEL_EXPORTER_OTLP_PROTOCOL, says "http/protobuf" (the reference's
//     default; the OpenTelemetry specification's is http/protobuf); any
//     other value — "http/json" included, which the Go exporters do not
//     implement — is one [*ConfigError]. The endpoint, insecure and TLS
//     file variables (OTEL_EXPORTER_OTLP[_<SIGNAL>]_ENDPOINT, _INSECURE,
//     _CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY) are read by Setup:
//     HOST:PORT works for gRPC; an endpoint the protocol cannot use or an
//     unusable file is one [*ConfigError] naming its variable
//     (docs/resource.md#otlp-endpoint-and-tls). Headers, compression and
//     timeouts are read by the exporters from the process environment.
//     Export errors are cut, escaped and never show header values
//     (docs/resource.md#export-errors). No connection is made during Setup. "console"
//     writes to [WithConsoleWriter] (default os.Stdout). [WithSpanExporter],
//     [WithMetricReader], [WithMetricExporter] and [WithLogExporter] replace
//     the exporter of their signal.
//   - Unless [WithoutGlobals] is given, the providers of the enabled signals
//     become the OpenTelemetry globals; the propagator of OTEL_PROPAGATORS
//     (default W3C tracecontext + baggage, the Python SDK's default) becomes
//     the global propagator when that is still the default no-op; and the
//     OpenTelemetry error handler and internal logger report through the
//     Lens logger, once per problem and without configuration values.
//     [Handle.Shutdown] puts the previous globals back when they are still
//     Lens's.
//   - When the environment holds a trace context (TRACEPARENT from lens exec
//     or a launcher, by the OpenTelemetry environment-variable carrier
//     convention), spans started without a parent continue it.
//
// An invalid or out-of-range numeric setting (OTEL_BSP_*, OTEL_BLRP_*,
// OTEL_METRIC_EXPORT_*, OTEL_EXPORTER_OTLP_*TIMEOUT) is replaced by its
// default with one warning; Setup does not fail for it. On error nothing
// stays installed and the guard is not taken.
func Setup(ctx context.Context, cfg Config, opts ...Option) (*Handle, error) {
	cfg = cfg.withDefaults()
	if !cfg.Enabled {
		return &Handle{cfg: cfg}, nil
	}
	o := newOptions(opts)
	need := telemetry.Needs{
		Traces:  !cfg.TracesDisabled && o.spanExporter == nil,
		Metrics: !cfg.MetricsDisabled && o.metricReader == nil && o.metricExp == nil,
		Logs:    cfg.LogsEnabled && o.logExporter == nil,
	}
	s, err := telemetry.ReadSettings(o.t.Env, telemetry.Config(cfg), need)
	if s.SDKDisabled {
		logx.Logger(o.t.Logger, logx.Providers).Debug("OTEL_SDK_DISABLED=true: telemetry is disabled")
		cfg.Enabled = false
		return &Handle{cfg: cfg}, nil
	}
	if err != nil {
		return nil, err
	}
	if o.t.RankFrom != "" && !detect.ValidRankFrom(o.t.RankFrom) {
		return nil, fmt.Errorf("lens: WithRankFrom(%q): want one of %s", o.t.RankFrom, strings.Join(detect.RankSources(), ", "))
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

func build(ctx context.Context, cfg Config, o *options, s *telemetry.Settings) (_ *Handle, err error) {
	diag := telemetry.NewDiagnostics(o.t.Logger)
	diag.AddSecrets(s.Secrets...)
	h := &Handle{cfg: cfg, propagator: s.Propagator, secrets: s.Secrets}
	if !o.noGlobals {
		// Before anything is built: the exporters report malformed
		// settings through the internal logger while they are created.
		h.globals = installDiagnostics(diag)
	}
	defer func() {
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), DefaultShutdownTimeout)
			defer cancel()
			_ = h.shutdownProviders(ctx)
			h.globals.restore()
		}
	}()
	for _, w := range s.Warnings {
		logx.Logger(o.t.Logger, logx.Providers).Warn(w)
	}

	if o.t.Explain == nil {
		// The origins name the source of a value that is not valid UTF-8.
		o.t.Explain = &detect.Explanation{}
	}
	var attempt traceid.Attempt // docs/tracing.md#trace-per-attempt; from the run id as configured, not one drawn at random
	if s.TracePerAttempt {
		attempt, _ = assembly.Attempt(o.t.Env, cfg.RunID)
	}
	cfg = Config(o.t.FillRunID(telemetry.Config(cfg)))
	base := assembly.SDKAttributes()
	attrs, err := assembly.ResourceAttributes(ctx, telemetry.Config(cfg), &o.t, base[:], true)
	if err != nil {
		return nil, err
	}
	attrs = validAttributes(attrs, o.t.Explain, diag.InvalidUTF8)
	res := attrs.Resource()
	h.cfg, h.attrs, h.res = cfg, attrs, res // cfg with its run id filled in

	var console io.Writer
	if s.Traces.Kind == telemetry.KindConsole || s.Metrics.Kind == telemetry.KindConsole || s.Logs.Kind == telemetry.KindConsole {
		console = telemetry.ConsoleWriter(o.consoleWriter)
	}

	if !cfg.TracesDisabled && (o.spanExporter != nil || s.Traces.Kind != telemetry.KindNone) {
		if h.tracing, err = telemetry.NewTracing(ctx, res, s, telemetry.TracingOptions{
			Exporter: o.spanExporter, Console: console, Diagnostics: diag, Env: o.t.Env, Attempt: attempt,
		}); err != nil {
			return nil, err
		}
	}
	if !cfg.MetricsDisabled && (o.metricReader != nil || o.metricExp != nil || s.Metrics.Kind != telemetry.KindNone) {
		if h.sdkMP, err = newMeterProvider(ctx, res, s, o, console, h, diag); err != nil {
			return nil, err
		}
	}
	if cfg.LogsEnabled && (o.logExporter != nil || s.Logs.Kind != telemetry.KindNone) {
		if h.sdkLP, err = newLoggerProvider(ctx, res, s, o, console, h, diag); err != nil {
			return nil, err
		}
		h.logger = otelslog.NewLogger(InstrumentationName, otelslog.WithLoggerProvider(h.sdkLP))
	}
	if h.sdkLP != nil || (h.sdkMP != nil && o.metricReader != nil) {
		warnSDKOnlyKeys(o.t.Logger, res)
	}
	h.exporting = h.tracing != nil || h.sdkMP != nil || h.sdkLP != nil
	if !o.noGlobals {
		h.globals.install(h)
	}
	id, _ := attrs.Get(lensconv.ServiceInstanceID)
	h.restoreIdentity = process.SetIdentity(process.Identity{RunID: cfg.RunID, InstanceID: id.String()})
	return h, nil
}

// metricExporters are the metric exporters of every kind and protocol.
func metricExporters(console io.Writer) telemetry.Exporters[sdkmetric.Exporter] {
	return telemetry.Exporters[sdkmetric.Exporter]{
		Console: func() (sdkmetric.Exporter, error) { return stdoutmetric.New(stdoutmetric.WithWriter(console)) },
		HTTP: func(ctx context.Context, sig telemetry.Signal) (sdkmetric.Exporter, error) {
			return otlpmetrichttp.New(ctx, telemetry.HTTPOptions[otlpmetrichttp.Option]{
				Timeout: otlpmetrichttp.WithTimeout, EndpointURL: otlpmetrichttp.WithEndpointURL, TLS: otlpmetrichttp.WithTLSClientConfig,
			}.For(sig)...)
		},
		GRPC: func(ctx context.Context, sig telemetry.Signal, guard *telemetry.RefusalGuard) (sdkmetric.Exporter, error) {
			return otlpmetricgrpc.New(ctx, telemetry.GRPCOptions[otlpmetricgrpc.Option]{
				Endpoint: otlpmetricgrpc.WithEndpoint, TLSCredentials: otlpmetricgrpc.WithTLSCredentials,
				Timeout: otlpmetricgrpc.WithTimeout, DialOptions: otlpmetricgrpc.WithDialOption,
			}.For(sig, guard)...)
		},
	}
}

// logExporters are the log exporters of every kind and protocol.
func logExporters(console io.Writer) telemetry.Exporters[sdklog.Exporter] {
	return telemetry.Exporters[sdklog.Exporter]{
		Console: func() (sdklog.Exporter, error) { return stdoutlog.New(stdoutlog.WithWriter(console)) },
		HTTP: func(ctx context.Context, sig telemetry.Signal) (sdklog.Exporter, error) {
			return otlploghttp.New(ctx, telemetry.HTTPOptions[otlploghttp.Option]{
				Timeout: otlploghttp.WithTimeout, EndpointURL: otlploghttp.WithEndpointURL, TLS: otlploghttp.WithTLSClientConfig,
			}.For(sig)...)
		},
		GRPC: func(ctx context.Context, sig telemetry.Signal, guard *telemetry.RefusalGuard) (sdklog.Exporter, error) {
			return otlploggrpc.New(ctx, telemetry.GRPCOptions[otlploggrpc.Option]{
				Endpoint: otlploggrpc.WithEndpoint, TLSCredentials: otlploggrpc.WithTLSCredentials,
				Timeout: otlploggrpc.WithTimeout, DialOptions: otlploggrpc.WithDialOption,
				// otlploggrpc parses its endpoint variable itself to decide on
				// security, and reports a HOST:PORT as invalid.
				EndpointURL: otlploggrpc.WithEndpointURL, Insecure: otlploggrpc.WithInsecure,
			}.For(sig, guard)...)
		},
	}
}

func newMeterProvider(ctx context.Context, res *resource.Resource, s *telemetry.Settings, o *options, console io.Writer, h *Handle, diag *telemetry.Diagnostics) (*sdkmetric.MeterProvider, error) {
	if o.metricReader != nil {
		// A caller's reader reads the provider's resource as the SDK builds
		// it (see WithMetricReader).
		return sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(o.metricReader)), nil
	}
	exp := o.metricExp
	var guard *telemetry.RefusalGuard
	if exp == nil {
		var err error
		if exp, guard, err = metricExporters(console).New(ctx, s.Metrics, s.Secrets); err != nil {
			return nil, fmt.Errorf("lens: metric exporter: %w", err)
		}
	}
	h.guards = append(h.guards, guard)
	reader := sdkmetric.NewPeriodicReader(&metricExporter{Exporter: exp, res: res, guard: guard, invalid: diag.InvalidUTF8},
		sdkmetric.WithInterval(s.MetricExportInterval), sdkmetric.WithTimeout(s.MetricExportTimeout))
	// No WithResource: the SDK would parse OTEL_RESOURCE_ATTRIBUTES once
	// more; the exporter wrapper stamps res on every export instead.
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), nil
}

func newLoggerProvider(ctx context.Context, res *resource.Resource, s *telemetry.Settings, o *options, console io.Writer, h *Handle, diag *telemetry.Diagnostics) (*sdklog.LoggerProvider, error) {
	exp := o.logExporter
	var guard *telemetry.RefusalGuard
	if exp == nil {
		var err error
		if exp, guard, err = logExporters(console).New(ctx, s.Logs, s.Secrets); err != nil {
			return nil, fmt.Errorf("lens: log exporter: %w", err)
		}
	}
	h.guards = append(h.guards, guard)
	proc := sdklog.NewBatchProcessor(&logExporter{Exporter: exp, guard: guard, invalid: diag.InvalidUTF8},
		sdklog.WithMaxQueueSize(s.BLRPMaxQueueSize),
		sdklog.WithExportMaxBatchSize(s.BLRPMaxExportBatch),
		sdklog.WithExportInterval(s.BLRPScheduleDelay),
		sdklog.WithExportTimeout(s.BLRPExportTimeout))
	// Log records cannot be given another resource on the way out, so the
	// provider gets it (and the SDK merges its own parse of the process
	// environment under it; see the package documentation).
	return sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(proc)), nil
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
