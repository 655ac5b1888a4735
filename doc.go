// Package lens sets up OpenTelemetry for a Go process exactly as NVIDIA NeMo
// Lens (Python) does: a configuration read from NEMO_LENS_* variables
// ([Config], [FromEnv]), one resource assembled from the
// OTEL_RESOURCE_ATTRIBUTES carrier, the configuration, the caller's
// attributes and detection ([ResourceAttributes], [NewResource],
// [Detector]), and tracer, meter and logger providers that all export that
// resource ([Setup], [Handle]). The rules, and every intentional divergence
// from the reference, are stated in the repository's docs/resource.md and
// docs/compatibility.md.
//
// Go processes in a distributed job (launchers, agents, sidecars,
// checkpoint workers) and Python workers that use the reference carry the
// same typed attributes and join up in one trace view, filterable by
// nv.dl.rank, nv.dl.job.uuid, nv.dl.run.uuid, slurm.* and nemo.run.id.
//
// # Quick start
//
//	cfg, err := lens.FromEnv() // NEMO_LENS_*, OTEL_SERVICE_NAME, WANDB_*
//	if err != nil { … }
//	h, err := lens.Setup(ctx, cfg, lens.WithResourceAttributes(
//		attribute.Int(lensconv.NVDLRank, rank),
//		attribute.Int(lensconv.NVDLWorldSize, worldSize)))
//	if err != nil { … }
//	defer func() {
//		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
//		defer cancel()
//		_ = h.Shutdown(ctx)
//	}()
//	ctx, span := h.Tracer("trainer").Start(ctx, "step")
//	h.Logger().InfoContext(ctx, "step done") // trace-correlated when logs are on
//	span.End()
//
// Starting the processes of a job (see "The job as a whole" below):
//
//	cmd := exec.CommandContext(ctx, "python", "train.py")
//	cmd.Env, err = carrier.ChildEnv(ctx, attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.Int(k)}))
//
// # The job as a whole
//
// Every process of a run reports the same nemo.run.id, its own
// service.instance.id, and spans of one trace, whoever starts it:
//
//   - Run identity: an enabled Setup fills an empty run id (SLURM_JOB_ID,
//     else TORCHELASTIC_RUN_ID, else a random id drawn once per process;
//     [NewRunID]) and hands it to the processes this one starts:
//     carrier.ChildEnv and carrier.Publish set NEMO_LENS_RUN_ID in the
//     child's environment unless it already holds one, and so does lens
//     exec. Processes no common parent starts (nodes, pods) need the same
//     NEMO_LENS_RUN_ID, or torchrun's --rdzv-id.
//   - Instance ids: "{run_id}-rank{rank}" (the reference's rule), an
//     explicit id, or else a random UUID v4 drawn once per process. The lens
//     exec wrapper reports "<the command's id>.lens-exec.<pid>", and a child
//     started with carrier.ChildEnv that would repeat its parent's id gets
//     "<parent id>.<n>" in its carrier, so no two processes share one.
//   - Trace context: carrier.ChildEnv(ctx, …) writes the span context of ctx
//     as TRACEPARENT/TRACESTATE (the OpenTelemetry environment-variable
//     convention, envcar's normalisation), and a Setup-ed process continues
//     the trace it finds there: spans started without a parent get it as
//     their remote parent.
//   - Ranks: never derived by default (the reference never reads RANK);
//     [WithRankFrom] takes them from Slurm, torchrun or an Indexed Job when
//     asked.
//
// docs/resource.md#run-identity-across-processes has the details.
//
// # Environment variables
//
// Read by [FromEnv] (prefix NEMO_LENS unless [WithPrefix]; each value
// trimmed with the Python whitespace set; empty → <fallback prefix>_<KEY> →
// default):
//
//	Variable                      Field            Default
//	<prefix>_ENABLED              Enabled          false   (1/0, true/false, yes/no, on/off, any case)
//	<prefix>_TRACES_ENABLED       TracesDisabled   traces on (false sets TracesDisabled)
//	<prefix>_METRICS_ENABLED      MetricsDisabled  metrics on (false sets MetricsDisabled)
//	<prefix>_LOGS_ENABLED         LogsEnabled      false
//	<prefix>_SPAN_GROUPS          SpanGroups       "default"
//	<prefix>_EXPORTER             Exporter         "otlp"  ("otlp" or "console"; checked by Setup)
//	<prefix>_RUN_ID               RunID            ""      (filled by Setup)
//	<prefix>_USER_ID              User             ""
//	OTEL_SERVICE_NAME             ServiceName      "nemo"  (trimmed)
//	WANDB_ENTITY                  WandbEntity      ""      (not trimmed)
//	WANDB_PROJECT                 WandbProject     ""      (not trimmed)
//
// Read by [ResourceAttributes] (and so by Setup, NewResource and Detector)
// through [WithEnv] (default: the process environment, at call time):
// OTEL_RESOURCE_ATTRIBUTES (the carrier, decoded by carrier.Parse),
// OTEL_SERVICE_NAME, DEPLOYMENT_ENV and ENVIRONMENT, and every variable of
// detection (package detect: SLURM_*, the LENS_SLURM_*/NV_LAUNCH_* SLUIDs,
// CUDA_VISIBLE_DEVICES, KUBERNETES_SERVICE_HOST, K8S_*, HOSTNAME). RANK,
// WORLD_SIZE and LOCAL_RANK are read only with [WithRankFrom].
//
// Read by an enabled Setup through [WithEnv]: SLURM_JOB_ID and
// TORCHELASTIC_RUN_ID (the run id), TRACEPARENT/TRACESTATE/BAGGAGE (the
// parent trace context), and the standard OpenTelemetry switches, with this
// precedence (docs/resource.md#standard-otel-switches):
//
//	1  OTEL_SDK_DISABLED=true               nothing is set up, whatever NEMO_LENS_ENABLED says
//	2  Config.Enabled false                 nothing is set up
//	3  Config.TracesDisabled, …             the signal is off
//	4  an exporter given in code            that signal uses it (WithSpanExporter, …)
//	5  OTEL_<SIGNAL>_EXPORTER               none: off; otlp or console: beats NEMO_LENS_EXPORTER
//	6  Config.Exporter (NEMO_LENS_EXPORTER) otlp (default) or console
//	7  OTEL_EXPORTER_OTLP[_<SIGNAL>]_PROTOCOL  the OTLP protocol (docs/resource.md#configuration)
//
// and OTEL_PROPAGATORS (default tracecontext,baggage), OTEL_BSP_*,
// OTEL_BLRP_*, OTEL_METRIC_EXPORT_INTERVAL (default 10000 ms, the
// reference's), OTEL_METRIC_EXPORT_TIMEOUT and
// OTEL_EXPORTER_OTLP[_<SIGNAL>]_TIMEOUT, each range-checked: an invalid or
// out-of-range value gets its default and one warning.
//
// Read by the OpenTelemetry exporters and SDK themselves, always from the
// process environment: OTEL_EXPORTER_OTLP_[<SIGNAL>_]{ENDPOINT, HEADERS,
// COMPRESSION, CERTIFICATE, CLIENT_CERTIFICATE, CLIENT_KEY, INSECURE},
// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE,
// OTEL_TRACES_SAMPLER[_ARG], OTEL_SPAN_*_LIMIT, and — for the merge
// described under "What leaves the process" — OTEL_RESOURCE_ATTRIBUTES and
// OTEL_SERVICE_NAME once more.
//
// # Precedence of the resource, lowest first
//
//	#  Layer                                   Notes
//	1  SDK defaults                            telemetry.sdk.language "go", telemetry.sdk.name
//	                                           "opentelemetry", telemetry.sdk.version (NewResource,
//	                                           Detector and Setup; not ResourceAttributes)
//	2  carrier, every key; OTEL_SERVICE_NAME   Lens-decoded strings; OTEL_SERVICE_NAME as service.name
//	3  Lens base map                           service.name (Config, "nemo"), service.version (Version),
//	                                           nemo.run.id, nemo.user.id, wandb.entity, wandb.project,
//	                                           deployment.environment (DEPLOYMENT_ENV, else ENVIRONMENT;
//	                                           a present-but-empty DEPLOYMENT_ENV hides ENVIRONMENT)
//	4  caller (WithResourceAttributes)         beats 2–3; WithRankFrom's ranks come first
//	5  detection (detect.All)                  live host.name, process.pid, host.gpu.count; the 23
//	                                           launcher-authoritative keys (lensconv.InheritedKeys): valid
//	                                           carrier value, else local Slurm value, beat the caller;
//	                                           Kubernetes keys from the environment
//	6  type reconstruction (detect.Normalize)  carrier strings of known integer keys → int64
//	7  derived service.instance.id             "{run_id}-rank{rank}" when nv.dl.rank exists, the run id is
//	                                           non-empty and neither caller nor carrier set one; else, in
//	                                           the exported resource only, a random UUID v4
//
// Without a rank a WARNING says that telemetry "cannot be filtered by rank"
// and that "service.instance.id is not rank-derived"; with an explicit
// service.instance.id and no rank the message is a DEBUG line containing the
// id (logger "nemo.lens.providers"). docs/resource.md#resource-precedence
// states each layer.
//
// # What leaves the process
//
// The OpenTelemetry Go SDK's providers merge resource.Environment() — the
// SDK's own parse of OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME from
// the process environment — underneath the resource they are given, and no
// provider option avoids it. Lens therefore (a) puts every carrier key,
// decoded by the Lens parser, into its resource; (b) adds telemetry.sdk.*
// itself and keeps the resource schemaless; and (c) builds the tracer
// provider and its own meter provider without a resource and stamps the
// exact Lens resource on everything its span pipeline and periodic reader
// export, so spans and Lens-read metrics carry exactly [Handle.Resource] and
// the SDK parses the carrier once per process instead of once per provider.
//
// Two paths cannot be re-stamped, because the SDK offers no way to replace a
// record's resource: log records (sdklog) and metrics read by a caller's
// reader ([WithMetricReader]). Their resource can hold, in addition to every
// Lens key with its Lens value, the keys only the SDK parser produces from
// the process environment; Setup logs a WARNING naming them when that
// happens. The SDK's reports about its own parse of a malformed carrier
// (a trailing comma, an invalid escape) go to the Lens logger at DEBUG,
// once.
//
// # Spans, accounting and exit
//
// Spans go through Lens's batch span processor (OTEL_BSP_*): ending a span
// never blocks, any number of concurrent ForceFlush calls is safe, and every
// sampled span is accounted for ([Handle.SpanCounts]: Ended = Exported +
// Dropped + Failed + Pending; a span not ended, or ended only after
// Shutdown, is Open). [Handle.Shutdown] is bounded by its deadline
// ([DefaultShutdownTimeout] when none) and ends at once, with one error
// wrapping [ErrCollectorRefused], when the collector refuses the
// connection, over gRPC and HTTP.
//
// # Diagnostics
//
// Unless [WithoutGlobals] is given, Setup routes the OpenTelemetry error
// handler and the SDK's internal logger through the Lens logger
// ([WithLogger]): each problem is reported once, and configuration values
// (OTLP header values, credentials in URLs) are never printed.
//
// # Process-wide state
//
// An enabled Setup takes a process-wide guard (one active enabled Handle,
// unless [WithAllowReinit]), records this process's identity (its run id
// and service.instance.id, which the child-environment helpers hand down)
// and, by default, the OpenTelemetry globals; [Handle.Shutdown] gives them
// back while they are still its own, so that with [WithAllowReinit] a live
// Handle's providers stay installed and a shut-down provider never stays
// global (docs/resource.md#setup-once; the SDK's internal logger cannot be
// read back, so it stays routed through the Lens logger). The random run id and instance id are drawn at
// most once per process. Nothing else is global.
//
// # Intentional divergences from the Python reference
//
// Each is stated, with its reason, in docs/compatibility.md#intentional-divergences:
// int64 integers; raw bytes that are not UTF-8 (exported with U+FFFD in
// their place); service.version is lens-go's module version ([Version]);
// null values and empty keys of the caller's attributes are ignored; the run id falls back to TORCHELASTIC_RUN_ID
// before a random id; wrappers and children get distinct instance ids, and
// a process without one gets a random UUID v4; OTLP protocols other than
// grpc and http/protobuf are an error; the default propagator is W3C trace
// context and baggage; ending a span never blocks; Shutdown is bounded; the
// console exporter writes the Go stdout exporters' JSON lines.
package lens
