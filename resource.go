package lens

import (
	"context"

	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/assembly"
	"github.com/nemolens/lens-go/internal/process"
	"github.com/nemolens/lens-go/internal/telemetry"
)

// ModulePath is the module whose version becomes service.version.
const ModulePath = telemetry.ModulePath

// DevelVersion is the service.version reported when the build carries no
// module version for lens-go (go run/go test inside the module, or a build
// without module information).
const DevelVersion = telemetry.DevelVersion

// Version returns lens-go's own module version, the value of the
// service.version attribute (docs/resource.md#service-version: "the Go port uses its own module
// version"). It is read from the binary's build information
// (runtime/debug.ReadBuildInfo): the main module's version when lens-go is
// the main module, else the version of the lens-go dependency (the
// replacement's version when it is replaced). A release build of the lens
// command (scripts/release.sh) stamps its version with the linker instead,
// docs/install.md#stamp; the stamp applies only when lens-go is the main
// module. When the build information has none, Version returns
// [DevelVersion], "(devel)".
func Version() string { return telemetry.Version() }

// NewRunID returns the run id an enabled [Setup] gives a Config whose RunID
// is empty (docs/resource.md#run-id-fill-in, extended): SLURM_JOB_ID from env (nil: the process
// environment) when it is non-empty — the raw value, not the array form —;
// else TORCHELASTIC_RUN_ID when non-empty and not torchrun's default "none"
// (every worker of a multi-node torchrun job has the same one; the Python
// reference draws a random id here instead: an intentional divergence,
// docs/compatibility.md#run-id-torchelastic); else 12 lowercase hex
// characters from crypto/rand, drawn once per process, so that every Setup,
// NewResource, Detector and child environment of one process agrees.
func NewRunID(env environ.Lookuper) string {
	id, _ := process.FillRunID(env)
	return id
}

// ResourceAttributes returns the resource attributes Lens hands to the
// OpenTelemetry SDK for cfg (docs/resource.md#resource-precedence): the map before the SDK-level
// telemetry.sdk.* attributes are laid underneath (see [NewResource] for the
// complete exported resource). It does not fill an empty cfg.RunID (only
// [Setup], [NewResource] and [Detector] do, docs/resource.md#run-id-fill-in); use [NewRunID] to do
// what they do.
//
// Layers, lowest first; a later layer overwrites equal keys:
//
//  1. (SDK defaults: telemetry.sdk.*, added by [NewResource] and [Setup].)
//  2. Every key of the carrier (OTEL_RESOURCE_ATTRIBUTES, decoded by
//     [carrier.Parse], all values strings), then OTEL_SERVICE_NAME as
//     service.name when non-empty.
//  3. The Lens base map: service.name = cfg.ServiceName ("nemo" when
//     empty), service.version = [Version], nemo.run.id = cfg.RunID,
//     nemo.user.id = cfg.User, wandb.entity, wandb.project (each only when
//     non-empty), deployment.environment = DEPLOYMENT_ENV, else ENVIRONMENT
//     (a present-but-empty DEPLOYMENT_ENV gives "" and ENVIRONMENT is not
//     read; only a non-empty result is set).
//  4. The caller's attributes ([WithResourceAttributes]).
//  5. Detection ([detect.All]: local, then Slurm, then Kubernetes).
//     host.name, process.pid and host.gpu.count always describe the live
//     process; for the 23 launcher-authoritative keys
//     ([lensconv.InheritedKeys]) a valid carrier value, else the locally
//     derived Slurm value, beats the caller.
//  6. Type reconstruction ([detect.Normalize]): carrier strings of known
//     integer fields become int64 ("nv.dl.rank=5" → 5).
//  7. The derived service.instance.id "{run_id}-rank{rank}", set only when
//     nv.dl.rank exists after layers 2–6 (0 counts), cfg.RunID is not empty
//     and neither the caller nor the carrier supplies service.instance.id.
//     The rank is rendered after type reconstruction; a rank that stayed a
//     non-integer is rendered with the carrier stringification
//     ([attr.Value.Text]: "True", "3.5", the string itself).
//
// Logging (logger "nemo.lens.providers", [WithLogger]): when no rank exists,
// a WARNING saying that telemetry "cannot be filtered by rank" and that
// "service.instance.id is not rank-derived" — or, when an explicit
// service.instance.id exists, a DEBUG line containing that id instead. A
// rank in either channel silences both. RANK and WORLD_SIZE are never read.
//
// Port decisions: a null value in the caller's map is ignored (it neither
// sets nor hides a key), as is an empty key; the SDK's own default
// service.instance.id (a random UUID under OTEL_GO_X_RESOURCE=true) is never
// added, so without a derived or explicit id the resource has none.
//
// The environment ([WithEnv]; default the process environment), host name,
// PID, GPU probe and Kubernetes path ([WithDetectOptions]) are injectable.
// With [WithExplanation] the origin of every key is recorded. The error is
// ctx's error when ctx is already done; the assembly itself cannot fail.
func ResourceAttributes(ctx context.Context, cfg Config, opts ...ResourceOption) (*attr.Map, error) {
	o := newResourceOptions(opts)
	return assembly.ResourceAttributes(ctx, cfg.WithDefaults(), &o, nil, false)
}

// NewResource returns the resource an enabled [Setup] with the same
// arguments exports: telemetry.sdk.name, telemetry.sdk.language and
// telemetry.sdk.version underneath [ResourceAttributes], with an empty
// cfg.RunID filled as Setup fills it ([NewRunID]), and a service.instance.id
// in every case: the rank-derived or explicit one, else this process's
// random UUID v4 (drawn once per process, the SDK default). It is
// schemaless (docs/resource.md#sdk-schema-url).
func NewResource(ctx context.Context, cfg Config, opts ...ResourceOption) (*resource.Resource, error) {
	o := newResourceOptions(opts)
	m, err := exportedAttributes(ctx, cfg.WithDefaults(), &o, telemetry.NewDiagnostics(o.Logger).InvalidUTF8)
	if err != nil {
		return nil, err
	}
	return m.Resource(), nil
}

// exportedAttributes is the attribute map of the exported resource for cfg,
// whose run id it fills (the filled Config is returned too), with invalid
// UTF-8 replaced and reported to invalid.
func exportedAttributes(ctx context.Context, cfg Config, o *assembly.Options, invalid func(what, source string)) (*attr.Map, error) {
	m, _, err := exportedResource(ctx, cfg, o, invalid)
	return m, err
}

// exportedResource is exportedAttributes with the Config whose run id it
// filled.
func exportedResource(ctx context.Context, cfg Config, o *assembly.Options, invalid func(what, source string)) (*attr.Map, Config, error) {
	if o.Explain == nil {
		// The origins name the source of a value that is not valid UTF-8.
		o.Explain = &detect.Explanation{}
	}
	cfg = o.FillRunID(cfg)
	base := assembly.SDKAttributes()
	m, err := assembly.ResourceAttributes(ctx, cfg, o, base[:], true)
	if err != nil {
		return nil, cfg, err
	}
	return validAttributes(m, o.Explain, invalid), cfg, nil
}

// validAttributes returns m with U+FFFD in place of invalid UTF-8 in its
// keys and string values, which the OTLP exporters cannot encode
// (docs/resource.md#invalid-utf-8), reporting each changed key once with
// the source of its value.
func validAttributes(m *attr.Map, explain *detect.Explanation, report func(what, source string)) *attr.Map {
	return assembly.ValidAttributes(m, explain, func(key, source string) {
		report("resource attribute "+telemetry.AttributeName(key), describeSource(source))
	})
}

// describeSource words an origin's source for a report, naming the
// variable FromEnv reads a Config field from.
func describeSource(source string) string {
	switch source {
	case "hostname":
		return "the host name"
	case "config ServiceName":
		return "Config.ServiceName; FromEnv reads OTEL_SERVICE_NAME"
	case "config User":
		return "Config.User; FromEnv reads " + DefaultPrefix + "_USER_ID"
	case "config WandbEntity":
		return "Config.WandbEntity; FromEnv reads WANDB_ENTITY"
	case "config WandbProject":
		return "Config.WandbProject; FromEnv reads WANDB_PROJECT"
	case "config RunID":
		return "Config.RunID; FromEnv reads " + DefaultPrefix + "_RUN_ID"
	}
	return source
}

// Detector returns a resource.Detector whose resource is exactly the one an
// enabled [Setup] with the same arguments exports ([NewResource]): every
// layer, typed integers, the derived service.instance.id. Use it to give an
// OpenTelemetry setup of your own the Lens resource:
//
//	res, err := resource.New(ctx, resource.WithDetectors(lens.Detector(cfg)))
//
// Its Detect returns ctx's error (and no resource) when ctx is done. The
// resource is schemaless, so it merges with the SDK's detectors without a
// schema-URL conflict; note that a detector merged after it overrides its
// keys (keep it last to keep the Lens values).
func Detector(cfg Config, opts ...ResourceOption) resource.Detector {
	return detector{cfg: cfg, opts: opts}
}

type detector struct {
	cfg  Config
	opts []ResourceOption
}

// Detect implements resource.Detector.
func (d detector) Detect(ctx context.Context) (*resource.Resource, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := NewResource(ctx, d.cfg, d.opts...)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// JobAttributes returns what lens's detection says about the job of a
// process whose environment is env (docs/resource.md#job-attributes), for a
// reader of another process's environment: the Collector's lens processor
// (docs/collector.md) reads /proc/<pid>/environ and stamps the result on
// the telemetry of a process lens never touched. One implementation, two
// callers: these are the detectors and the run-id rule that a process
// running lens-go in env reports.
//
// Keys, in this order, each only when it has a value:
//
//   - nemo.run.id: NEMO_LENS_RUN_ID as [FromEnv] reads it (trimmed; a
//     drawn run id handed down yields to a launcher's), else the
//     launcher's id of [NewRunID] (SLURM_JOB_ID, TORCHELASTIC_RUN_ID unless
//     "none", PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid). Never a random id:
//     a random draw here would name no run.
//   - nv.dl.rank, nv.dl.world_size, nv.dl.local_rank when rankFrom names a
//     launcher ([detect.Ranks]; the values of lens exec --rank-from); the
//     warnings of [detect.Ranks] are returned.
//   - the Slurm keys of [detect.Slurm] (slurm.*, nv.dl.job.uuid and the
//     carrier's nv.dl.run.uuid, with env's OTEL_RESOURCE_ATTRIBUTES merged
//     as detection merges it).
//   - the Kubernetes keys of [detect.Kubernetes].
//
// host.name, process.pid and host.gpu.count are not included: they
// describe the process that reads, not the one read. opts are passed to
// detection (its environment is always env; pass
// [detect.WithKubernetesSecretsPath] with the path as that process sees it).
// Nothing is logged, nothing blocks, nothing is drawn at random.
func JobAttributes(ctx context.Context, env environ.Lookuper, rankFrom string, opts ...detect.Option) (*attr.Map, []string) {
	return assembly.JobAttributes(ctx, env, rankFrom, opts...)
}
