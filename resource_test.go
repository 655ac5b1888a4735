package lens_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/testvectors"
	"github.com/nemolens/lens-go/lensconv"
)

// TestVectorsResource runs the provisional "resource" vectors through
// ResourceAttributes: the map Lens hands to the SDK. config.version is the
// reference's package version; the Go port reports its own module version
// (lens.Version), so it is not compared (no vector lists service.version).
func TestVectorsResource(t *testing.T) {
	vs, err := testvectors.ByOp("resource")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("no resource vectors")
	}
	for _, v := range vs {
		t.Run(v.ID, func(t *testing.T) {
			t.Parallel()
			var c struct {
				ServiceName string `json:"service_name"`
				Version     string `json:"version"`
				RunID       string `json:"run_id"`
			}
			if err := json.Unmarshal(v.Config, &c); err != nil {
				t.Fatal(err)
			}
			var lv struct {
				HostName   string `json:"host_name"`
				PID        int    `json:"pid"`
				GPUProbe   *int   `json:"gpu_probe"`
				K8sSecrets bool   `json:"k8s_secrets"`
			}
			if err := json.Unmarshal(v.Live, &lv); err != nil {
				t.Fatal(err)
			}
			logger, logs := newCapture()
			cfg := lens.DefaultConfig()
			cfg.ServiceName = c.ServiceName
			cfg.RunID = c.RunID
			got, err := lens.ResourceAttributes(context.Background(), cfg,
				lens.WithEnv(environ.Map(v.Env)),
				lens.WithDetectOptions(detectOptions(t, live{host: lv.HostName, pid: lv.PID, gpu: lv.GPUProbe, k8sSecrets: lv.K8sSecrets})...),
				lens.WithResourceAttributes(v.Caller.M.KeyValues()...),
				lens.WithLogger(logger))
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range v.ExpectedSubset.M.All() {
				if g, ok := got.Get(k); !ok || !g.Equal(want) {
					t.Errorf("%s = %v (%v, present %v), want %v (%v)", k, g, g.Kind(), ok, want, want.Kind())
				}
			}
			for _, k := range v.ExpectedAbsent {
				if g, ok := got.Get(k); ok {
					t.Errorf("%s = %v, want absent", k, g)
				}
			}
			if g, _ := got.Get(lensconv.ServiceVersion); g.AsString() != lens.Version() {
				t.Errorf("service.version = %v, want %q", g, lens.Version())
			}
			checkRankLog(t, logs(), v.RankLog, got)
			if t.Failed() {
				t.Logf("resource: %v", got)
			}
		})
	}
}

// checkRankLog checks the rank message: want nil (silent), "warning" or
// "debug".
func checkRankLog(t *testing.T, recs []logRecord, want *string, got *attr.Map) {
	t.Helper()
	warn, debug := rankWarnings(recs)
	mode := "null"
	if want != nil {
		mode = *want
	}
	switch mode {
	case "warning":
		if len(warn) != 1 {
			t.Errorf("want one rank WARNING, got %d (%v)", len(warn), recs)
		} else if !strings.Contains(warn[0].Msg, "service.instance.id is not rank-derived") {
			t.Errorf("warning %q lacks %q", warn[0].Msg, "service.instance.id is not rank-derived")
		}
		if len(debug) != 0 {
			t.Errorf("unexpected DEBUG %v", debug)
		}
	case "debug":
		if len(warn) != 0 {
			t.Errorf("unexpected WARNING %v", warn)
		}
		id, _ := got.Get(lensconv.ServiceInstanceID)
		if len(debug) != 1 || !strings.Contains(debug[0].Msg, id.AsString()) {
			t.Errorf("want one DEBUG containing %q, got %v", id.AsString(), debug)
		}
	case "null":
		if len(warn)+len(debug) != 0 {
			t.Errorf("want no rank message, got %v %v", warn, debug)
		}
	default:
		t.Fatalf("unknown rank_log %q", mode)
	}
}

// precedenceCase is one row of the precedence tables, asserted on the
// resource of an exported span.
type precedenceCase struct {
	name    string
	cfg     func(*lens.Config)
	env     environ.Map
	caller  *attr.Map
	live    *live
	want    *attr.Map // exact typed values
	absent  []string
	rankLog string // "", "warning" or "debug" ("" = silent)
}

func runPrecedence(t *testing.T, cases []precedenceCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := lens.DefaultConfig()
			cfg.RunID = "run1"
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			l := defaultLive
			if tc.live != nil {
				l = *tc.live
			}
			f := setupFixture(t, cfg, tc.env, tc.caller, l)
			got := f.exportedSpanResource(t)
			if !sameSet(got, f.h.Attributes()) {
				t.Errorf("exported resource %v\ndiffers from Handle.Attributes %v", got, f.h.Attributes())
			}
			for k, want := range tc.want.All() {
				if g, ok := got.Get(k); !ok || !g.Equal(want) {
					t.Errorf("%s = %v (%v, present %v), want %v (%v)", k, g, g.Kind(), ok, want, want.Kind())
				}
			}
			for _, k := range tc.absent {
				g, ok := got.Get(k)
				if k == lensconv.ServiceInstanceID {
					// Not derived: the exported resource has this process's
					// random UUID v4 (the SDK default), never the run id.
					if !ok || !isUUIDv4(g.AsString()) {
						t.Errorf("%s = %v (present %v), want a random UUID v4", k, g, ok)
					}
					if m, _ := lens.ResourceAttributes(context.Background(), cfg, append(f.opts, lens.WithLogger(slog.New(slog.DiscardHandler)))...); m.Has(k) {
						t.Errorf("ResourceAttributes holds %s, want it absent (only the exported resource has the SDK default)", k)
					}
					continue
				}
				if ok {
					t.Errorf("%s = %v, want absent", k, g)
				}
			}
			var want *string
			if tc.rankLog != "" {
				want = &tc.rankLog
			}
			checkRankLog(t, f.logs(), want, got)
			if t.Failed() {
				t.Logf("exported: %v", got)
			}
		})
	}
}

func withRank(m *attr.Map) *attr.Map {
	m = m.Clone()
	m.SetDefault(lensconv.NVDLRank, attr.Int(0))
	return m
}

var rank0 = attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.Int(0)})

// TestPrecedence covers every row of docs/resource.md#resource-precedence on the exported resource.
func TestPrecedence(t *testing.T) { runPrecedence(t, precedenceCases) }

var precedenceCases = []precedenceCase{
	// Row 1: SDK defaults.
	{
		name:   "1-sdk-defaults",
		caller: rank0,
		want: attr.NewMap(
			attr.Entry{Key: lensconv.TelemetrySDKLanguage, Value: attr.String("go")},
			attr.Entry{Key: lensconv.TelemetrySDKName, Value: attr.String("opentelemetry")},
			attr.Entry{Key: lensconv.TelemetrySDKVersion, Value: attr.String(sdk.Version())},
		),
	},
	{
		name:   "1-sdk-defaults-lose-to-carrier",
		env:    environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "telemetry.sdk.language=python"},
		caller: rank0,
		want:   attr.FromStrings(lensconv.TelemetrySDKLanguage, "python", lensconv.TelemetrySDKName, "opentelemetry"),
	},
	// Row 2: every carrier key, decoded by the Lens parser, strings.
	{
		name: "2-carrier-all-keys-lens-decoded",
		env: environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "custom.key=a%2Cb, padded = %20x%20 ,bad=%zz%41,utf=%C3%28," +
			"plus=x+y,launcher.id=abc,example.id=007,slurm.foo=bar,,dangling,"},
		caller: rank0,
		want: attr.FromStrings("custom.key", "a,b", "padded", " x ", "bad", "%zzA", "utf", "\uFFFD(",
			"plus", "x+y", "launcher.id", "abc", "example.id", "007", "slurm.foo", "bar"),
		absent: []string{"dangling", ""},
	},
	{
		name:   "2-otel-service-name-loses-to-config",
		env:    environ.Map{"OTEL_SERVICE_NAME": "from-env", "OTEL_RESOURCE_ATTRIBUTES": "service.name=from-carrier"},
		cfg:    func(c *lens.Config) { c.ServiceName = "configured" },
		caller: rank0,
		want:   attr.FromStrings(lensconv.ServiceName, "configured"),
	},
	// Row 3: the Lens base map.
	{
		name: "3-base-map-beats-carrier",
		env: environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "service.name=carrier-svc,service.version=9,nemo.run.id=abc123," +
			"nemo.user.id=carrier-user,wandb.entity=ce,wandb.project=cp,deployment.environment=carrier-env",
			"DEPLOYMENT_ENV": "staging", "ENVIRONMENT": "prod"},
		cfg: func(c *lens.Config) {
			c.ServiceName = "svc"
			c.User = "alice"
			c.WandbEntity = "team"
			c.WandbProject = "proj"
		},
		caller: rank0,
		want: attr.FromStrings(lensconv.ServiceName, "svc", lensconv.ServiceVersion, lens.Version(),
			lensconv.NemoRunID, "run1", lensconv.NemoUserID, "alice", lensconv.WandbEntity, "team",
			lensconv.WandbProject, "proj", lensconv.DeploymentEnvironment, "staging"),
	},
	{
		name:   "3-empty-service-name-means-nemo",
		cfg:    func(c *lens.Config) { c.ServiceName = "" },
		caller: rank0,
		want:   attr.FromStrings(lensconv.ServiceName, "nemo"),
	},
	{
		name:   "3-empty-fields-leave-carrier-values",
		env:    environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nemo.user.id=carrier-user,wandb.entity=ce"},
		caller: rank0,
		want:   attr.FromStrings(lensconv.NemoUserID, "carrier-user", lensconv.WandbEntity, "ce"),
		absent: []string{lensconv.WandbProject, lensconv.DeploymentEnvironment},
	},
	{
		name:   "3-deployment-environment-fallback",
		env:    environ.Map{"ENVIRONMENT": "prod"},
		caller: rank0,
		want:   attr.FromStrings(lensconv.DeploymentEnvironment, "prod"),
	},
	{
		name:   "3-deployment-env-present-but-empty-hides-environment",
		env:    environ.Map{"DEPLOYMENT_ENV": "", "ENVIRONMENT": "prod"},
		caller: rank0,
		absent: []string{lensconv.DeploymentEnvironment},
	},
	// Row 4: the caller's attributes.
	{
		name: "4-caller-beats-carrier-and-base",
		env:  environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "custom.key=carrier,nemo.run.id=carrier-run"},
		caller: withRank(attr.NewMap(
			attr.Entry{Key: "custom.key", Value: attr.String("caller")},
			attr.Entry{Key: lensconv.ServiceName, Value: attr.String("caller-svc")},
			attr.Entry{Key: lensconv.NemoRunID, Value: attr.String("caller-run")},
			attr.Entry{Key: "typed.float", Value: attr.Float64(0.5)},
			attr.Entry{Key: "typed.bool", Value: attr.Bool(true)},
		)),
		want: attr.NewMap(
			attr.Entry{Key: "custom.key", Value: attr.String("caller")},
			attr.Entry{Key: lensconv.ServiceName, Value: attr.String("caller-svc")},
			attr.Entry{Key: lensconv.NemoRunID, Value: attr.String("caller-run")},
			attr.Entry{Key: "typed.float", Value: attr.Float64(0.5)},
			attr.Entry{Key: "typed.bool", Value: attr.Bool(true)},
			// The derived id still uses the config's run id.
			attr.Entry{Key: lensconv.ServiceInstanceID, Value: attr.String("run1-rank0")},
		),
	},
	{
		name: "4-caller-null-and-empty-key-ignored",
		env:  environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "custom.key=carrier"},
		caller: withRank(attr.NewMap(
			attr.Entry{Key: "custom.key", Value: attr.Null()},
			attr.Entry{Key: "", Value: attr.String("x")},
		)),
		want: attr.FromStrings("custom.key", "carrier"),
	},
	{
		name:   "4-caller-slurm-key-kept-without-slurm-context",
		caller: withRank(attr.FromStrings(lensconv.SlurmJobID, "default")),
		want:   attr.FromStrings(lensconv.SlurmJobID, "default"),
	},
	// Row 5: detection.
	{
		name: "5-live-local-keys-beat-carrier-and-caller",
		env:  environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "host.name=parent-host,process.pid=12,host.gpu.count=8", "CUDA_VISIBLE_DEVICES": "0,1"},
		caller: withRank(attr.NewMap(
			attr.Entry{Key: lensconv.HostName, Value: attr.String("caller-host")},
			attr.Entry{Key: lensconv.ProcessPID, Value: attr.Int(1)},
		)),
		want: attr.NewMap(
			attr.Entry{Key: lensconv.HostName, Value: attr.String("real-host")},
			attr.Entry{Key: lensconv.ProcessPID, Value: attr.Int(4242)},
			attr.Entry{Key: lensconv.HostGPUCount, Value: attr.Int(2)},
		),
	},
	{
		name:   "5-gpu-probe",
		caller: rank0,
		live:   &live{host: "real-host", pid: 4242, gpu: intp(4)},
		want:   attr.NewMap(attr.Entry{Key: lensconv.HostGPUCount, Value: attr.Int(4)}),
	},
	{
		name:   "5-carrier-slurm-beats-caller",
		env:    environ.Map{"SLURM_JOB_ID": "12345", "OTEL_RESOURCE_ATTRIBUTES": "slurm.job.id=launch,slurm.nnodes=8"},
		caller: withRank(attr.NewMap(attr.Entry{Key: lensconv.SlurmJobID, Value: attr.String("default")}, attr.Entry{Key: lensconv.SlurmNNodes, Value: attr.Int(1)})),
		want: attr.NewMap(
			attr.Entry{Key: lensconv.SlurmJobID, Value: attr.String("launch")},
			attr.Entry{Key: lensconv.SlurmJobIDRaw, Value: attr.String("12345")},
			attr.Entry{Key: lensconv.SlurmNNodes, Value: attr.Int(8)},
		),
	},
	{
		name:   "5-carrier-slurm-beats-caller-without-job-id",
		env:    environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "slurm.job.id=launch,nv.dl.run.uuid=run-from-launch"},
		caller: withRank(attr.FromStrings(lensconv.SlurmJobID, "default", lensconv.NVDLRunUUID, "caller-run-uuid")),
		want:   attr.FromStrings(lensconv.SlurmJobID, "launch", lensconv.NVDLRunUUID, "run-from-launch"),
	},
	{
		name:   "5-local-slurm-beats-caller",
		env:    environ.Map{"SLURM_JOB_ID": "12345", "SLURM_CLUSTER_NAME": "test-cluster"},
		caller: withRank(attr.FromStrings(lensconv.SlurmJobID, "default", lensconv.NVDLJobUUID, "caller")),
		want: attr.FromStrings(lensconv.SlurmJobID, "12345",
			lensconv.NVDLJobUUID, "9d61581a-b1c5-55ff-90da-50a3f091d47a"),
	},
	{
		name: "5-kubernetes-beats-carrier-and-caller",
		env: environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "k8s.pod.name=old-pod,nv.dl.rank=7",
			"KUBERNETES_SERVICE_HOST": "10.0.0.1", "K8S_POD_NAME": "new-pod", "K8S_NAMESPACE": "ml"},
		caller: attr.FromStrings("k8s.namespace.name", "caller-ns"),
		want: attr.NewMap(
			attr.Entry{Key: "k8s.pod.name", Value: attr.String("new-pod")},
			attr.Entry{Key: "k8s.namespace.name", Value: attr.String("ml")},
			attr.Entry{Key: lensconv.NVDLRank, Value: attr.Int(7)},
			attr.Entry{Key: lensconv.ServiceInstanceID, Value: attr.String("run1-rank7")},
		),
	},
	// Row 6 is TestServiceInstanceID. Row 7: type reconstruction.
	{
		name: "7-type-reconstruction",
		env: environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=7,nv.dl.world_size=16,nv.dl.local_rank=3," +
			"nv.gpu.index=3,nv.gpu.memory_total=85899345920,nv.dl.topology.size.tp=2," +
			"nv.dl.training.target.train_tokens=9007199254740993,nemo.run.id=007,example.id=007,nv.dl.role=trainer"},
		want: attr.NewMap(
			attr.Entry{Key: lensconv.NVDLRank, Value: attr.Int(7)},
			attr.Entry{Key: lensconv.NVDLWorldSize, Value: attr.Int(16)},
			attr.Entry{Key: lensconv.NVDLLocalRank, Value: attr.Int(3)},
			attr.Entry{Key: "nv.gpu.index", Value: attr.Int(3)},
			attr.Entry{Key: "nv.gpu.memory_total", Value: attr.Int64(85899345920)},
			attr.Entry{Key: lensconv.NVDLTopologySizeTP, Value: attr.Int(2)},
			attr.Entry{Key: lensconv.NVDLTrainingTargetTrainTokens, Value: attr.Int64(9007199254740993)},
			attr.Entry{Key: lensconv.NemoRunID, Value: attr.String("run1")}, // the config beats the carrier (docs/resource.md#lens-base-map)
			attr.Entry{Key: "example.id", Value: attr.String("007")},
			attr.Entry{Key: lensconv.NVDLRole, Value: attr.String("trainer")},
			attr.Entry{Key: lensconv.ServiceInstanceID, Value: attr.String("run1-rank7")},
		),
	},
	{
		name:   "7-caller-strings-reconstructed-too",
		caller: attr.FromStrings(lensconv.NVDLRank, " +003 ", lensconv.NVDLWorldSize, "8"),
		want: attr.NewMap(
			attr.Entry{Key: lensconv.NVDLRank, Value: attr.Int(3)},
			attr.Entry{Key: lensconv.NVDLWorldSize, Value: attr.Int(8)},
			attr.Entry{Key: lensconv.ServiceInstanceID, Value: attr.String("run1-rank3")},
		),
	},
}

// TestServiceInstanceID covers docs/resource.md#service-instance-id (row 6 of §6.3) on the exported
// resource, run id "run1" unless stated.
func TestServiceInstanceID(t *testing.T) { runPrecedence(t, instanceIDCases) }

func sii(s string) *attr.Map { return attr.FromStrings(lensconv.ServiceInstanceID, s) }

var instanceIDCases = []precedenceCase{
	{name: "caller-rank", caller: attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.Int(3)}), want: sii("run1-rank3")},
	{name: "caller-rank-0", caller: rank0, want: sii("run1-rank0")},
	{name: "carrier-rank-0", env: environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=0"}, want: sii("run1-rank0")},
	{name: "carrier-rank-5", env: environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=5"}, want: sii("run1-rank5")},
	{name: "carrier-rank-padded", env: environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=%2B05"}, want: sii("run1-rank5")},
	{
		name:   "caller-rank-beats-carrier",
		env:    environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=5"},
		caller: attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.Int(3)}),
		want:   attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.Int(3)}, attr.Entry{Key: lensconv.ServiceInstanceID, Value: attr.String("run1-rank3")}),
	},
	{
		name:   "caller-explicit-id",
		caller: attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.Int(3)}, attr.Entry{Key: lensconv.ServiceInstanceID, Value: attr.String("chosen")}),
		want:   sii("chosen"),
	},
	{
		name:   "carrier-explicit-id",
		env:    environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "service.instance.id=from-env"},
		caller: attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.Int(3)}),
		want:   sii("from-env"),
	},
	{
		name:    "no-rank-warns-and-ignores-RANK",
		env:     environ.Map{"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1"},
		absent:  []string{lensconv.ServiceInstanceID, lensconv.NVDLRank, lensconv.NVDLWorldSize, lensconv.NVDLLocalRank},
		rankLog: "warning",
	},
	{
		name:    "no-rank-explicit-id-debug",
		env:     environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "service.instance.id=agent-node07"},
		want:    sii("agent-node07"),
		rankLog: "debug",
	},
	{
		name:    "no-rank-caller-explicit-id-debug",
		caller:  sii("agent-node08"),
		want:    sii("agent-node08"),
		rankLog: "debug",
	},
	{
		name: "empty-carrier-rank",
		env:  environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank="},
		want: attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.String("")}, attr.Entry{Key: lensconv.ServiceInstanceID, Value: attr.String("run1-rank")}),
	},
	{
		name: "non-integer-rank-string",
		env:  environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=1_0"},
		want: attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.String("1_0")}, attr.Entry{Key: lensconv.ServiceInstanceID, Value: attr.String("run1-rank1_0")}),
	},
	{
		name:   "non-integer-rank-bool",
		caller: attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.Bool(true)}),
		want:   attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.Bool(true)}, attr.Entry{Key: lensconv.ServiceInstanceID, Value: attr.String("run1-rankTrue")}),
	},
	{
		name:   "non-integer-rank-float",
		caller: attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.Float64(3)}),
		want:   attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.Float64(3)}, attr.Entry{Key: lensconv.ServiceInstanceID, Value: attr.String("run1-rank3.0")}),
	},
	{
		name:   "caller-null-rank-is-no-rank",
		caller: attr.NewMap(attr.Entry{Key: lensconv.NVDLRank, Value: attr.Null()}),
		absent: []string{lensconv.ServiceInstanceID, lensconv.NVDLRank}, rankLog: "warning",
	},
}

// A rank without a run id derives nothing; Setup always has a run id, so
// TestResourceAttributesDoesNotFillRunID covers that case.

// TestSetupFillsRunID checks docs/resource.md#run-id-fill-in: SLURM_JOB_ID raw, else 12 hex
// characters, written back into Handle.Config.
func TestSetupFillsRunID(t *testing.T) {
	t.Parallel()
	f := setupFixture(t, lens.Config{}, environ.Map{"SLURM_JOB_ID": "12350", "SLURM_ARRAY_JOB_ID": "12345", "SLURM_ARRAY_TASK_ID": "7"}, rank0, defaultLive)
	if got := f.h.Config().RunID; got != "12350" {
		t.Errorf("RunID = %q, want the raw SLURM_JOB_ID", got)
	}
	res := f.exportedSpanResource(t)
	if v, _ := res.Get(lensconv.ServiceInstanceID); v.AsString() != "12350-rank0" {
		t.Errorf("service.instance.id = %v", v)
	}

	g := setupFixture(t, lens.Config{}, environ.Map{"SLURM_JOB_ID": ""}, rank0, defaultLive)
	id := g.h.Config().RunID
	if len(id) != 12 || strings.Trim(id, "0123456789abcdef") != "" {
		t.Errorf("RunID = %q, want 12 lowercase hex characters", id)
	}
	if v, _ := g.exportedSpanResource(t).Get(lensconv.NemoRunID); v.AsString() != id {
		t.Errorf("nemo.run.id = %v, want %q", v, id)
	}

	c := setupFixture(t, lens.Config{RunID: "given"}, environ.Map{"SLURM_JOB_ID": "1"}, nil, defaultLive)
	if got := c.h.Config().RunID; got != "given" {
		t.Errorf("RunID = %q, want the configured one", got)
	}
}

// TestResourceAttributesDoesNotFillRunID: only Setup fills the run id; the
// carrier's nemo.run.id then survives (docs/resource.md#run-id-fill-in, build_providers directly).
func TestResourceAttributesDoesNotFillRunID(t *testing.T) {
	t.Parallel()
	logger, _ := newCapture()
	m, err := lens.ResourceAttributes(context.Background(), lens.Config{},
		lens.WithEnv(environ.Map{"SLURM_JOB_ID": "99", "OTEL_RESOURCE_ATTRIBUTES": "nemo.run.id=abc,nv.dl.rank=1"}),
		lens.WithDetectOptions(detectOptions(t, defaultLive)...), lens.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Get(lensconv.NemoRunID); v.AsString() != "abc" {
		t.Errorf("nemo.run.id = %v, want the carrier's", v)
	}
	if m.Has(lensconv.ServiceInstanceID) {
		t.Errorf("service.instance.id derived without a run id: %v", m)
	}
	if m.Has(lensconv.TelemetrySDKName) {
		t.Errorf("ResourceAttributes holds telemetry.sdk.*: %v", m)
	}
}

func TestResourceAttributesCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lens.ResourceAttributes(ctx, lens.Config{}, lens.WithEnv(environ.Map{})); err == nil {
		t.Error("want ctx error")
	}
}

// TestNewResourceMatchesSetup: NewResource is what Setup exports.
func TestNewResourceMatchesSetup(t *testing.T) {
	t.Parallel()
	env := environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=2,a=b", "SLURM_JOB_ID": "7"}
	cfg := lens.Config{RunID: "r"}
	logger, _ := newCapture()
	res, err := lens.NewResource(context.Background(), cfg, lens.WithEnv(env),
		lens.WithDetectOptions(detectOptions(t, defaultLive)...), lens.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	if res.SchemaURL() != "" {
		t.Errorf("schema URL %q, want schemaless", res.SchemaURL())
	}
	f := setupFixture(t, cfg, env, nil, defaultLive)
	want, _ := attr.FromResource(res)
	if got := f.exportedSpanResource(t); !sameSet(got, want) {
		t.Errorf("Setup exported %v\nNewResource gave %v", got, want)
	}
}

// TestExplain: the origins of the assembled keys are recorded.
func TestExplain(t *testing.T) {
	t.Parallel()
	var ex detect.Explanation
	d := detectOptions(t, defaultLive)
	logger, _ := newCapture()
	_, err := lens.ResourceAttributes(context.Background(), lens.Config{RunID: "r", ServiceName: "svc"},
		lens.WithEnv(environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=4,service.name=c,x=y"}),
		lens.WithDetectOptions(d...), lens.WithExplanation(&ex), lens.WithLogger(logger),
		lens.WithResourceAttributes(attribute.String("x", "caller")))
	if err != nil {
		t.Fatal(err)
	}
	for key, src := range map[string]string{
		"x":                        "caller",
		lensconv.ServiceName:       "config ServiceName",
		lensconv.NVDLRank:          "carrier",
		lensconv.ServiceInstanceID: "derived ({run_id}-rank{nv.dl.rank})",
		lensconv.HostName:          "hostname",
	} {
		o, ok := ex.Origin(key)
		if !ok || o.Source != src {
			t.Errorf("origin of %s = %+v, want source %q", key, o, src)
		}
	}
	if o, _ := ex.Origin(lensconv.NVDLRank); !strings.Contains(strings.Join(o.Notes, ";"), "type reconstruction") {
		t.Errorf("nv.dl.rank notes %v lack the type reconstruction", o.Notes)
	}
}

// FuzzResourceAttributes: any carrier gives a resource without panics in
// which every carrier key is present, the live keys describe the process,
// and service.instance.id follows docs/resource.md#service-instance-id. Seeded with the carriers of the
// precedence tables.
func FuzzResourceAttributes(f *testing.F) {
	for _, tc := range append(append([]precedenceCase(nil), precedenceCases...), instanceIDCases...) {
		if v, ok := tc.env.LookupEnv(carrier.EnvVar); ok {
			f.Add(v, tc.env["SLURM_JOB_ID"])
		}
	}
	f.Fuzz(func(t *testing.T, text, jobID string) {
		env := environ.Map{carrier.EnvVar: text}
		if jobID != "" {
			env["SLURM_JOB_ID"] = jobID
		}
		logger, _ := newCapture()
		m, err := lens.ResourceAttributes(context.Background(), lens.Config{RunID: "run1"},
			lens.WithEnv(env), lens.WithDetectOptions(detectOptions(t, defaultLive)...), lens.WithLogger(logger))
		if err != nil {
			t.Fatal(err)
		}
		parsed := carrier.Parse(text)
		for k := range parsed.All() {
			if !m.Has(k) {
				t.Errorf("carrier key %q missing", k)
			}
		}
		if v, _ := m.Get(lensconv.HostName); v.AsString() != "real-host" {
			t.Errorf("host.name = %v", v)
		}
		if v, _ := m.Get(lensconv.ProcessPID); v.AsInt64() != 4242 {
			t.Errorf("process.pid = %v", v)
		}
		id, hasID := m.Get(lensconv.ServiceInstanceID)
		explicit, hasExplicit := parsed.Get(lensconv.ServiceInstanceID)
		rank, hasRank := m.Get(lensconv.NVDLRank)
		switch {
		case hasExplicit:
			if !id.Equal(explicit) {
				t.Errorf("service.instance.id = %v, want the carrier's %v", id, explicit)
			}
		case hasRank:
			text, _ := rank.Text()
			if id.AsString() != "run1-rank"+text {
				t.Errorf("service.instance.id = %v for rank %v", id, rank)
			}
		case hasID:
			t.Errorf("service.instance.id = %v without a rank or an explicit id", id)
		}
	})
}

// isUUIDv4 reports whether s is a canonical lowercase UUID of version 4 and
// the RFC 4122 variant.
func isUUIDv4(s string) bool {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' || s[14] != '4' {
		return false
	}
	if !strings.ContainsRune("89ab", rune(s[19])) {
		return false
	}
	for i, c := range s {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			continue
		}
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
