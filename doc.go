// Package lens sets up OpenTelemetry for a Go process exactly as NVIDIA NeMo
// Lens (Python) does (SPEC §1.1, §1.7, §6, §7, §11): a configuration read
// from NEMO_LENS_* variables ([Config], [FromEnv], [ConfigFromEnv]), one
// resource assembled from the OTEL_RESOURCE_ATTRIBUTES carrier, the
// configuration, the caller's attributes and detection
// ([ResourceAttributes], [NewResource]), and tracer, meter and logger
// providers that all export that resource ([Setup], [Handle]).
//
// Go processes in a distributed job (launchers, agents, sidecars) and
// Python workers that use the reference derive the same service.instance.id
// and carry the same typed attributes, so telemetry joins on nv.dl.rank,
// nv.dl.job.uuid, nv.dl.run.uuid and slurm.* across languages.
//
// # Quick start
//
//	cfg, err := lens.FromEnv("", "")          // NEMO_LENS_*, OTEL_SERVICE_NAME, WANDB_*
//	if err != nil { … }
//	h, err := lens.Setup(ctx, cfg,
//		lens.WithResourceAttributes(attr.NewMap(
//			attr.Entry{Key: "nv.dl.rank", Value: attr.Int(rank)},
//			attr.Entry{Key: "nv.dl.world_size", Value: attr.Int(worldSize)})))
//	if err != nil { … }
//	defer func() {
//		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
//		defer cancel()
//		_ = h.Shutdown(ctx)
//	}()
//	ctx, span := h.Tracer("trainer").Start(ctx, "step")
//	h.Logger().InfoContext(ctx, "step done") // trace-correlated when logs are enabled
//	span.End()
//
// # Environment variables
//
// Read by [FromEnv]/[ConfigFromEnv] (prefix default NEMO_LENS; each value
// trimmed with the Python whitespace set, empty → <fallback prefix>_<KEY> →
// default):
//
//	Variable                      Field           Default
//	<prefix>_ENABLED              Enabled         false   (1/0, true/false, yes/no, on/off, any case)
//	<prefix>_TRACES_ENABLED       TracesEnabled   true
//	<prefix>_METRICS_ENABLED      MetricsEnabled  true
//	<prefix>_LOGS_ENABLED         LogsEnabled     false
//	<prefix>_SPAN_GROUPS          SpanGroups      "default"
//	<prefix>_EXPORTER             Exporter        "otlp"  ("otlp" or "console"; checked by Setup)
//	<prefix>_RUN_ID               RunID           ""
//	<prefix>_USER_ID              User            ""
//	OTEL_SERVICE_NAME             ServiceName     "nemo"  (trimmed)
//	WANDB_ENTITY                  WandbEntity     ""      (not trimmed)
//	WANDB_PROJECT                 WandbProject    ""      (not trimmed)
//
// Read by [ResourceAttributes] (and so by [Setup]) through [WithEnv]
// (default: the process environment, at call time): OTEL_RESOURCE_ATTRIBUTES
// (the carrier, decoded by [carrier.Parse]), OTEL_SERVICE_NAME,
// DEPLOYMENT_ENV and ENVIRONMENT, and every variable of resource detection
// (package resources: SLURM_*, LENS_SLURM_*/NV_LAUNCH_* SLUIDs,
// CUDA_VISIBLE_DEVICES, KUBERNETES_SERVICE_HOST, K8S_*, HOSTNAME). RANK,
// WORLD_SIZE and LOCAL_RANK are never read.
//
// Read by an enabled [Setup] through [WithEnv]: SLURM_JOB_ID (the run id
// when Config.RunID is empty), OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
// OTEL_EXPORTER_OTLP_METRICS_PROTOCOL, OTEL_EXPORTER_OTLP_LOGS_PROTOCOL,
// OTEL_EXPORTER_OTLP_PROTOCOL ("grpc", the default, or "http/protobuf"),
// OTEL_METRIC_EXPORT_INTERVAL (ms, default 10000), OTEL_BSP_MAX_QUEUE_SIZE
// (default 2048) and OTEL_BSP_MAX_EXPORT_BATCH_SIZE (default 512); an
// invalid number is logged and replaced by the default.
//
// Read by the OpenTelemetry SDK and exporters themselves, always from the
// process environment: OTEL_EXPORTER_OTLP_[<SIGNAL>_]{ENDPOINT, HEADERS,
// TIMEOUT, COMPRESSION, CERTIFICATE, CLIENT_CERTIFICATE, CLIENT_KEY,
// INSECURE}, OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE,
// OTEL_METRIC_EXPORT_TIMEOUT, OTEL_BSP_SCHEDULE_DELAY,
// OTEL_BSP_EXPORT_TIMEOUT, OTEL_BLRP_*, OTEL_TRACES_SAMPLER[_ARG],
// OTEL_SPAN_*_LIMIT, and — for the merge described under "What leaves the
// process" — OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME once more.
//
// # Precedence of the resource (SPEC §6.3), lowest first
//
//	#  Layer                                   Notes
//	1  SDK defaults                            telemetry.sdk.language "go", telemetry.sdk.name
//	                                           "opentelemetry", telemetry.sdk.version (added by Setup
//	                                           and NewResource, not by ResourceAttributes)
//	2  carrier, every key; OTEL_SERVICE_NAME   Lens-decoded strings; OTEL_SERVICE_NAME as service.name
//	3  Lens base map                           service.name (Config, "nemo"), service.version (Version),
//	                                           nemo.run.id, nemo.user.id, wandb.entity, wandb.project,
//	                                           deployment.environment (DEPLOYMENT_ENV, else ENVIRONMENT;
//	                                           a present-but-empty DEPLOYMENT_ENV hides ENVIRONMENT)
//	4  caller (WithResourceAttributes)         beats 2–3
//	5  detection (resources.Detect)            live host.name, process.pid, host.gpu.count; the 23
//	                                           launcher-authoritative keys (lensconv.InheritedKeys): valid
//	                                           carrier value, else local Slurm value, beat the caller;
//	                                           Kubernetes keys from the environment
//	6  type reconstruction (resources.Normalize)  carrier strings of known integer keys → int64
//	7  derived service.instance.id             "{run_id}-rank{rank}" when nv.dl.rank exists, the run id is
//	                                           non-empty and neither caller nor carrier set one
//
// The SPEC lists the derived id (row 6) before type reconstruction (row 7)
// but renders the rank after reconstruction; the port reconstructs first
// and derives second, which gives exactly that result. Without a rank a
// WARNING says that telemetry "cannot be filtered by rank" and that
// "service.instance.id is not rank-derived"; with an explicit
// service.instance.id and no rank the message is a DEBUG line containing the
// id (logger "nemo.lens.providers").
//
// # What leaves the process (SPEC §11.2)
//
// The OpenTelemetry Go SDK's providers merge resource.Environment() — the
// SDK's own parse of OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME from the
// process environment — underneath the resource they are given, and no
// provider option avoids it. Lens therefore (a) puts every carrier key,
// decoded by the Lens parser, into its resource, so Lens's value wins on
// every key both parsers produce (malformed escapes, U+FFFD replacement,
// Python-set trimming of values); (b) adds telemetry.sdk.* itself and keeps
// the resource schemaless; and (c) re-stamps the exact Lens resource on
// everything its own exporter wrappers see: every exported span, and
// metrics read by Lens's periodic reader. So spans and Lens-read metrics
// carry exactly [Handle.Resource], even when the carrier holds keys that
// only the SDK parser produces (keys edged with U+001C–U+001F, which the
// Lens parser trims and the SDK's does not) and even when [WithEnv] injects
// an environment that differs from the process's.
//
// Two paths cannot be re-stamped, because the SDK offers no way to replace
// a record's resource: log records (sdklog) and metrics read by a caller's
// reader ([WithMetricReader]). Their resource can hold, in addition to every
// Lens key with its Lens value, the keys only the SDK parser produces from
// the process environment; Setup logs a WARNING naming them when that
// happens. The SDK also reports partial-parse errors of a malformed carrier
// (for example a trailing comma) through otel.Handle, once per provider.
//
// The SDK's own default service.instance.id (a random UUID, added by
// resource.Default only under OTEL_GO_X_RESOURCE=true) is never used: Lens
// does not build on resource.Default, so without a derived or explicit id
// the exported resource has no service.instance.id, which the reference's
// tests accept ("SDK UUID or absent; never the bare run id").
//
// # Intentional divergences from the Python reference
//
//   - service.version is lens-go's module version ([Version]), "(devel)"
//     when the build carries none.
//   - A null value or an empty key in the caller's map is ignored (Python
//     would drop a None value inside the SDK with a warning).
//   - OTEL_EXPORTER_OTLP[_<SIGNAL>]_PROTOCOL values other than "grpc" and
//     "http/protobuf" are a [*ConfigError] (the Go SDK has no http/json
//     exporter).
//   - When the global propagator is still the default no-op, Setup installs
//     W3C TraceContext + Baggage, the Python SDK's default propagators,
//     unless [WithoutGlobals] is given.
//   - Ending a span never blocks: spans beyond OTEL_BSP_MAX_QUEUE_SIZE −
//     min(64, OTEL_BSP_MAX_QUEUE_SIZE/4) pending export (queued, batched or
//     being exported; the free slots are for ForceFlush markers) are dropped
//     and counted ([Handle.DroppedSpans]).
//   - [Handle.Shutdown] without a deadline is bounded by
//     [DefaultShutdownTimeout].
//   - The console exporter writes compact JSON lines (the Go stdout
//     exporters' format) to os.Stdout, not Python's console format.
//   - Integers beyond int64 are not reconstructed (SPEC §4).
//
// # Process-wide state
//
// An enabled Setup takes a process-wide guard (one active enabled Handle,
// SPEC §6.1) and, by default, the OpenTelemetry globals; [Handle.Shutdown]
// gives both back. Nothing else is global.
package lens
