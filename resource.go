package lens

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/nemolens/lens-go/environ"

	"go.opentelemetry.io/otel/sdk"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/logx"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/lensconv"
)

// ModulePath is the module whose version becomes service.version.
const ModulePath = "github.com/nemolens/lens-go"

// DevelVersion is the service.version reported when the build carries no
// module version for lens-go (go run/go test inside the module, or a build
// without module information).
const DevelVersion = "(devel)"

// Version returns lens-go's own module version, the value of the
// service.version attribute (SPEC §1.1: "the Go port uses its own module
// version"). It is read from the binary's build information
// (runtime/debug.ReadBuildInfo): the main module's version when lens-go is
// the main module, else the version of the lens-go dependency (the
// replacement's version when it is replaced). When the build information has
// none, Version returns [DevelVersion], "(devel)".
func Version() string { return versionOnce() }

var versionOnce = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return DevelVersion
	}
	return moduleVersion(info)
})

func moduleVersion(info *debug.BuildInfo) string {
	pick := func(m *debug.Module) string {
		if m.Replace != nil && m.Replace.Version != "" {
			return m.Replace.Version
		}
		if m.Version != "" {
			return m.Version
		}
		return DevelVersion
	}
	if info.Main.Path == ModulePath {
		return pick(&info.Main)
	}
	for _, d := range info.Deps {
		if d.Path == ModulePath {
			return pick(d)
		}
	}
	return DevelVersion
}

// Environment variables read by the resource assembly.
const (
	envServiceName    = "OTEL_SERVICE_NAME"
	envDeploymentEnv  = "DEPLOYMENT_ENV"
	envEnvironment    = "ENVIRONMENT"
	envSlurmJobID     = "SLURM_JOB_ID"
	rankWarningFormat = "no nv.dl.rank in the resource attributes or in " + carrier.EnvVar +
		": telemetry cannot be filtered by rank and service.instance.id is not rank-derived; " +
		"pass WithResourceAttributes with nv.dl.rank and nv.dl.world_size, " +
		"or set " + carrier.EnvVar + "=nv.dl.rank=<n>"
)

// NewRunID returns the run id an enabled [Setup] gives a Config whose RunID
// is empty (SPEC §6.2): SLURM_JOB_ID from env (nil: the process environment)
// when it is non-empty — the raw value, not the array form — else 12
// lowercase hex characters from crypto/rand (the first 12 hex digits of a
// random UUID v4, which carry no version bits, e.g. "3f9c0a1b2d4e").
func NewRunID(env environ.Lookuper) string {
	env = environ.Or(env)
	if id, _ := env.LookupEnv(envSlurmJobID); id != "" {
		return id
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}

// deploymentEnvironment reads DEPLOYMENT_ENV, else ENVIRONMENT, with the
// reference's nested-default semantics: a DEPLOYMENT_ENV that is present but
// empty gives "" and ENVIRONMENT is not consulted. source is the Explain
// source ("env <NAME>"), a constant.
func deploymentEnvironment(env environ.Lookuper) (value, source string) {
	if v, ok := env.LookupEnv(envDeploymentEnv); ok {
		return v, "env " + envDeploymentEnv
	}
	v, _ := env.LookupEnv(envEnvironment)
	return v, "env " + envEnvironment
}

// ResourceAttributes returns the resource attributes Lens hands to the
// OpenTelemetry SDK for cfg (SPEC §6.3–§6.5): the map before the SDK-level
// telemetry.sdk.* attributes are laid underneath (see [NewResource] for the
// complete exported resource). It does not fill an empty cfg.RunID (only
// [Setup] does, SPEC §6.2); use [NewRunID] to do what Setup does.
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
// When [WithDetectOptions] carries an Explain, the origin of every key is
// recorded in it. The error is ctx's error when ctx is already done; the
// assembly itself cannot fail.
func ResourceAttributes(ctx context.Context, cfg Config, opts ...Option) (*attr.Map, error) {
	o := newOptions(opts)
	return resourceAttributes(ctx, cfg.withDefaults(), &o, nil)
}

// NewResource returns the resource an enabled [Setup] with the same
// arguments exports (apart from the run id Setup fills in): the SDK-level
// telemetry.sdk.name, telemetry.sdk.language and telemetry.sdk.version
// underneath [ResourceAttributes]. It is schemaless (SPEC §11.4).
func NewResource(ctx context.Context, cfg Config, opts ...Option) (*resource.Resource, error) {
	o := newOptions(opts)
	sdkAttrs := sdkAttributes()
	m, err := resourceAttributes(ctx, cfg.withDefaults(), &o, sdkAttrs[:])
	if err != nil {
		return nil, err
	}
	return m.Resource(), nil
}

// sdkAttributes are the attributes the OpenTelemetry Go SDK's
// resource.WithTelemetrySDK detector produces: layer 1, the lowest (a
// carrier or caller telemetry.sdk.* key wins, as in the Python SDK).
func sdkAttributes() [3]attr.Entry {
	return [...]attr.Entry{
		{Key: lensconv.TelemetrySDKLanguage, Value: attr.String("go")},
		{Key: lensconv.TelemetrySDKName, Value: attr.String("opentelemetry")},
		{Key: lensconv.TelemetrySDKVersion, Value: attr.String(sdk.Version())},
	}
}

// resourceAttributes assembles layers 2–7 over the entries of base (layer
// 1, lowest), in one map: [ResourceAttributes] passes no base; [Setup] and
// [NewResource] pass [sdkAttributes], which gives telemetry.sdk.* first and
// then the layers' keys in order — the same map as laying the result of
// ResourceAttributes over telemetry.sdk.*, built without the copy. (Type
// reconstruction does not touch telemetry.sdk.*.)
func resourceAttributes(ctx context.Context, cfg Config, o *options, base []attr.Entry) (*attr.Map, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	env := o.env
	explain := o.explain
	logger := o.logger

	carried := carrier.Get(env)
	m := attr.WithCapacity(len(base) + carried.Len() + len(o.attrs) + 24)
	for _, e := range base {
		m.Set(e.Key, e.Value)
	}
	set := func(key string, v attr.Value, source string) {
		m.Set(key, v)
		explain.Record(key, source)
	}

	// Layer 2: the carrier, every key, decoded by the Lens parser.
	for k, v := range carried.All() {
		set(k, v, "carrier")
	}
	if v, _ := env.LookupEnv(envServiceName); v != "" {
		set(lensconv.ServiceName, attr.String(v), "env "+envServiceName)
	}

	// Layer 3: the Lens base map.
	set(lensconv.ServiceName, attr.String(cfg.ServiceName), "config ServiceName")
	set(lensconv.ServiceVersion, attr.String(Version()), "lens-go module version")
	for _, f := range [...]struct{ key, value, source string }{
		{lensconv.NemoRunID, cfg.RunID, "config RunID"},
		{lensconv.NemoUserID, cfg.User, "config User"},
		{lensconv.WandbEntity, cfg.WandbEntity, "config WandbEntity"},
		{lensconv.WandbProject, cfg.WandbProject, "config WandbProject"},
	} {
		if f.value != "" {
			set(f.key, attr.String(f.value), f.source)
		}
	}
	if v, src := deploymentEnvironment(env); v != "" {
		set(lensconv.DeploymentEnvironment, attr.String(v), src)
	}

	// Layer 4: the caller's attributes.
	explicitID := carried.Has(lensconv.ServiceInstanceID)
	for _, kv := range o.attrs {
		k := string(kv.Key)
		v, ok := attr.FromAttribute(kv.Value)
		switch {
		case k == "":
			explain.Note(k, "caller key is empty: ignored")
		case !ok:
			explain.Note(k, "caller value of type "+kv.Value.Type().String()+" has no carrier form: ignored")
		default:
			set(k, v, "caller")
			if k == lensconv.ServiceInstanceID {
				explicitID = true
			}
		}
	}

	// Layer 5: detection. It records its own origins.
	m.Update(detect.All(ctx, o.detectOptions()...))

	// Layer 6: type reconstruction.
	before := m
	m, _ = detect.Normalize(m, detect.WithLogger(logger))
	if explain != nil {
		for k, v := range m.All() {
			if old, _ := before.Get(k); old.Kind() != v.Kind() {
				explain.Note(k, "type reconstruction: "+old.Kind().String()+" "+quoteValue(old)+" → "+v.Kind().String())
			}
		}
	}

	// Layer 7: the rank-derived service.instance.id.
	rank, hasRank := m.Get(lensconv.NVDLRank)
	switch {
	case hasRank:
		if cfg.RunID != "" && !explicitID {
			text, _ := rank.Text()
			set(lensconv.ServiceInstanceID, attr.String(cfg.RunID+"-rank"+text),
				"derived ({run_id}-rank{nv.dl.rank})")
		} else if cfg.RunID == "" && !explicitID {
			explain.Note(lensconv.ServiceInstanceID, "not derived: the run id is empty")
		}
	case explicitID:
		if debugEnabled(logger) {
			id, _ := m.Get(lensconv.ServiceInstanceID)
			logx.Logger(logger, logx.Providers).Debug(
				"no nv.dl.rank in the resource attributes or in "+carrier.EnvVar+
					"; using the explicit service.instance.id "+id.String(),
				"service.instance.id", id.String())
		}
	default:
		logx.Logger(logger, logx.Providers).Warn(rankWarningFormat)
		explain.Note(lensconv.ServiceInstanceID, "not derived: no nv.dl.rank in either channel")
	}
	return m, nil
}

// debugEnabled reports whether l (nil: slog.Default(), as [logx.Logger]
// resolves it) takes DEBUG records, so that a DEBUG message nobody reads
// is neither built nor given its logger name (slog.Logger.With allocates).
func debugEnabled(l *slog.Logger) bool {
	if l == nil {
		l = slog.Default()
	}
	return l.Enabled(context.Background(), slog.LevelDebug)
}

func quoteValue(v attr.Value) string {
	if v.Kind() == attr.KindString {
		return `"` + v.AsString() + `"`
	}
	return v.String()
}
