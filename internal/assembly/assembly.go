// Package assembly assembles the resource attributes Lens hands to the
// OpenTelemetry SDK from the configuration, the carrier, the caller's
// attributes and detection (docs/resource.md#resource-precedence). It reads
// the environment through package detect and carrier and builds no
// exporter or provider: that is package telemetry's.
package assembly

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/logx"
	"github.com/nemolens/lens-go/internal/process"
	"github.com/nemolens/lens-go/internal/telemetry"
	"github.com/nemolens/lens-go/lensconv"
)

// Options are the inputs of the resource assembly besides the
// configuration. The zero value reads the process environment.
type Options struct {
	// Attrs are the caller's resource attributes (layer 4).
	Attrs []attribute.KeyValue
	// Env is the environment; nil is the process environment.
	Env environ.Lookuper
	// Detect are the options of detection (the environment and the
	// explanation are always the ones below).
	Detect []detect.Option
	// Explain records the origin of every key.
	Explain *detect.Explanation
	// Logger receives Lens's messages; nil is slog.Default().
	Logger *slog.Logger
	// RankFrom names a launcher whose variables give nv.dl.rank,
	// nv.dl.world_size and nv.dl.local_rank as caller attributes
	// (detect.Ranks).
	RankFrom string
	// Wrapper names a process that wraps another one (lens exec: "lens-exec").
	// Its service.instance.id gets "." + Wrapper + "." + pid appended, so
	// that it never equals the id of the process it wraps.
	Wrapper string
	// PID is the wrapper's pid (0: os.Getpid()).
	PID int
	// GPUDevices adds the nv.gpu.visible.* keys of detect.VisibleGPUs after
	// detection (docs/detection.md#gpu-devices).
	GPUDevices bool

	runIDSource string // set by FillRunID
}

func (o *Options) env() environ.Lookuper { return environ.Or(o.Env) }

func (o *Options) detectOptions() []detect.Option {
	d := make([]detect.Option, 0, len(o.Detect)+3)
	d = append(d, detect.WithLogger(o.Logger))
	d = append(d, o.Detect...)
	return append(d, detect.WithEnv(o.env()), detect.WithExplanation(o.Explain))
}

// Environment variables read by the resource assembly.
const (
	envServiceName   = "OTEL_SERVICE_NAME"
	envDeploymentEnv = "DEPLOYMENT_ENV"
	envEnvironment   = "ENVIRONMENT"
	rankWarning      = "no nv.dl.rank in the resource attributes or in " + carrier.EnvVar +
		": telemetry cannot be filtered by rank and service.instance.id is not rank-derived; " +
		"pass WithResourceAttributes with nv.dl.rank and nv.dl.world_size, " +
		"or set " + carrier.EnvVar + "=nv.dl.rank=<n>"
)

// FillRunID fills an empty run id as an enabled Setup does: SLURM_JOB_ID,
// else TORCHELASTIC_RUN_ID (unless torchrun's default "none"), else an MPI
// job's PMIX_NAMESPACE or OMPI_MCA_ess_base_jobid, else this process's
// random run id (drawn once per process, so every Setup, Detector
// and child environment of the process agrees). It records the source in
// explain.
//
// The source becomes the origin of nemo.run.id when ResourceAttributes is
// called with the same Options.
func (o *Options) FillRunID(cfg telemetry.Config) telemetry.Config {
	if cfg.RunID != "" {
		return cfg
	}
	env, explain := o.env(), o.Explain
	id, source := process.FillRunID(env)
	cfg.RunID = id
	o.runIDSource = "filled from " + source
	note := "NEMO_LENS_RUN_ID is empty: filled from " + source
	if source == process.SourceRandom {
		note += "; processes that this one does not start (other nodes, other pods) will not share it: " +
			"set NEMO_LENS_RUN_ID to the same value for all of them (a Kubernetes Job: its controller-uid; " +
			"torchrun: --rdzv-id, which becomes TORCHELASTIC_RUN_ID)"
	}
	if source == process.SourceTorchelastic || source == process.SourcePMIx || source == process.SourceOpenMPI {
		note += " (a divergence from the Python reference, which draws a random id here)"
	}
	if v, _ := environ.Or(env).LookupEnv(process.TorchelasticRunIDEnv); v == process.TorchrunDefaultRunID && source == process.SourceRandom {
		note += "; TORCHELASTIC_RUN_ID is torchrun's default \"none\", which every job without --rdzv-id shares, so it is not used"
	}
	explain.Note(lensconv.NemoRunID, note)
	return cfg
}

// SDKAttributes are the attributes the OpenTelemetry Go SDK's
// resource.WithTelemetrySDK detector produces: layer 1, the lowest.
func SDKAttributes() [3]attr.Entry {
	return [...]attr.Entry{
		{Key: lensconv.TelemetrySDKLanguage, Value: attr.String("go")},
		{Key: lensconv.TelemetrySDKName, Value: attr.String("opentelemetry")},
		{Key: lensconv.TelemetrySDKVersion, Value: attr.String(sdk.Version())},
	}
}

// deploymentEnvironment reads DEPLOYMENT_ENV, else ENVIRONMENT, with the
// reference's nested-default semantics: a DEPLOYMENT_ENV that is present but
// empty gives "" and ENVIRONMENT is not consulted.
func deploymentEnvironment(env environ.Lookuper) (value, source string) {
	if v, ok := env.LookupEnv(envDeploymentEnv); ok {
		return v, "env " + envDeploymentEnv
	}
	v, _ := env.LookupEnv(envEnvironment)
	return v, "env " + envEnvironment
}

// ResourceAttributes assembles the resource attributes Lens hands to the SDK
// (lens.ResourceAttributes documents the layers): layers 2–7 over base
// (layer 1). With full set it also adds what the exported resource has
// beyond that map: the wrapper suffix of service.instance.id and, when no
// id is derived or explicit, this process's random UUID v4.
func ResourceAttributes(ctx context.Context, cfg telemetry.Config, o *Options, base []attr.Entry, full bool) (*attr.Map, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	env := o.env()
	explain := o.Explain
	logger := o.Logger

	carried := carrier.Get(env)
	m := attr.WithCapacity(len(base) + carried.Len() + len(o.Attrs) + 24)
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
	set(lensconv.ServiceVersion, attr.String(telemetry.Version()), "lens-go module version")
	for _, f := range [...]struct{ key, value, source string }{
		{lensconv.NemoRunID, cfg.RunID, cmp.Or(o.runIDSource, "config RunID")},
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

	// Layer 4: the caller's attributes, after the launcher ranks.
	explicitID := carried.Has(lensconv.ServiceInstanceID)
	caller := o.Attrs
	if o.RankFrom != "" {
		ranks, warnings := detect.Ranks(env, o.RankFrom)
		for _, w := range warnings {
			logx.Logger(logger, logx.Providers).Warn(w)
			explain.Note(lensconv.NVDLRank, w)
		}
		caller = append(ranks, caller...)
	}
	for _, kv := range caller {
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
	if o.GPUDevices {
		gpuDevices(ctx, m, o)
	}

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
		logx.Logger(logger, logx.Providers).Warn(rankWarning)
		explain.Note(lensconv.ServiceInstanceID, "not derived: no nv.dl.rank in either channel")
	}
	if full {
		instanceID(m, o)
	}
	return m, nil
}

// gpuDevices adds lens-go's GPU identity (docs/detection.md#gpu-devices) to
// m, with its origin; a failure other than no driver is a warning naming its
// source.
func gpuDevices(ctx context.Context, m *attr.Map, o *Options) {
	devs, err := detect.VisibleGPUs(ctx, o.detectOptions()...)
	switch {
	case err == nil:
		for k, v := range detect.VisibleGPUAttributes(devs).All() {
			m.Set(k, v)
			o.Explain.Record(k, devs[0].Source)
		}
	case errors.Is(err, detect.ErrNoGPUDriver):
		o.Explain.Note(lensconv.NVGPUVisibleUUID, err.Error())
	default:
		logx.Logger(o.Logger, logx.Providers).Warn("no GPU identity in the resource: " + err.Error())
		o.Explain.Note(lensconv.NVGPUVisibleUUID, err.Error())
	}
}

// instanceID completes service.instance.id for the exported resource: this
// process's random UUID v4 when no id was derived or given (the default the
// OpenTelemetry SDKs give a process that names no instance, so that every
// process has one), and the wrapper suffix.
func instanceID(m *attr.Map, o *Options) {
	explain := o.Explain
	id, ok := m.Get(lensconv.ServiceInstanceID)
	if !ok || id.IsNull() {
		m.Set(lensconv.ServiceInstanceID, attr.String(process.InstanceUUID()))
		explain.Record(lensconv.ServiceInstanceID, "random UUID v4 (drawn once per process; the SDK default)")
		id, _ = m.Get(lensconv.ServiceInstanceID)
	}
	if o.Wrapper == "" {
		return
	}
	pid := o.PID
	if pid == 0 {
		pid = os.Getpid()
	}
	text, _ := id.Text()
	m.Set(lensconv.ServiceInstanceID, attr.String(text+"."+o.Wrapper+"."+strconv.Itoa(pid)))
	explain.Note(lensconv.ServiceInstanceID, "suffixed with ."+o.Wrapper+".<pid>: a wrapper never reports the id of the process it wraps")
}

// debugEnabled reports whether l (nil: slog.Default()) takes DEBUG records.
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

// ValidAttributes returns m with valid UTF-8 keys and string values: m
// itself when it holds no invalid UTF-8, else a copy in the same order
// (two keys that differ only in their invalid bytes become one, the later
// value winning, as in any map). invalid is called once for every key it
// changed, with the valid key and the key's source from explain ("" when
// explain is nil or does not know it).
func ValidAttributes(m *attr.Map, explain *detect.Explanation, invalid func(key, source string)) *attr.Map {
	bad := false
	for k, v := range m.All() {
		if !utf8.ValidString(k) || (v.Kind() == attr.KindString && !utf8.ValidString(v.AsString())) {
			bad = true
			break
		}
	}
	if !bad {
		return m
	}
	out := attr.WithCapacity(m.Len())
	for k, v := range m.All() {
		key, kc := telemetry.ValidString(k)
		vc := false
		if v.Kind() == attr.KindString {
			var s string
			if s, vc = telemetry.ValidString(v.AsString()); vc {
				v = attr.String(s)
			}
		}
		out.Set(key, v)
		if kc || vc {
			var source string
			if o, ok := explain.Origin(k); ok {
				source = o.Source
			}
			invalid(key, source)
		}
	}
	return out
}
