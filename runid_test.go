package lens_test

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// randomRunID is the shape of the random run id: 12 lowercase hex digits.
var randomRunID = regexp.MustCompile(`^[0-9a-f]{12}$`)

// runIDCases are the run id precedence, first match wins
// (docs/resource.md#run-id-fill-in, docs/compatibility.md#run-id-torchelastic):
// NEMO_LENS_RUN_ID (trimmed; blank counts as unset), then SLURM_JOB_ID (raw,
// not the array form), then TORCHELASTIC_RUN_ID (unless torchrun's default
// "none"), then the process's random id. want "" means the random id.
var runIDCases = []struct {
	name string
	env  environ.Map
	want string
}{
	{"configured-beats-all", environ.Map{"NEMO_LENS_RUN_ID": "run-a", "SLURM_JOB_ID": "4242", "TORCHELASTIC_RUN_ID": "rdzv-1"}, "run-a"},
	{"configured-trimmed", environ.Map{"NEMO_LENS_RUN_ID": " \trun-a\n", "SLURM_JOB_ID": "4242"}, "run-a"},
	{"blank-configured-is-unset", environ.Map{"NEMO_LENS_RUN_ID": " \t ", "SLURM_JOB_ID": "4242", "TORCHELASTIC_RUN_ID": "rdzv-1"}, "4242"},
	{"slurm-beats-torchelastic", environ.Map{"SLURM_JOB_ID": "4242", "TORCHELASTIC_RUN_ID": "rdzv-1"}, "4242"},
	{"slurm-array-raw-id", environ.Map{"SLURM_JOB_ID": "101", "SLURM_ARRAY_JOB_ID": "100", "SLURM_ARRAY_TASK_ID": "1", "TORCHELASTIC_RUN_ID": "rdzv-1"}, "101"},
	{"empty-slurm-is-unset", environ.Map{"SLURM_JOB_ID": "", "TORCHELASTIC_RUN_ID": "rdzv-1"}, "rdzv-1"},
	{"torchelastic", environ.Map{"TORCHELASTIC_RUN_ID": "rdzv-1", "RANK": "1", "WORLD_SIZE": "2"}, "rdzv-1"},
	{"torchelastic-default-none", environ.Map{"TORCHELASTIC_RUN_ID": "none"}, ""},
	{"empty-torchelastic", environ.Map{"TORCHELASTIC_RUN_ID": ""}, ""},
	{"nothing", environ.Map{}, ""},
	// MPI (docs/compatibility.md#divergence-mpi): what Open MPI 4.1.4's
	// mpirun gives each rank, and the order of the launcher ids.
	{"openmpi", environ.Map{"PMIX_NAMESPACE": "445054977", "OMPI_MCA_ess_base_jobid": "445054977", "OMPI_COMM_WORLD_RANK": "1", "PMIX_RANK": "1"}, "445054977"},
	{"pmix-beats-ompi-jobid", environ.Map{"PMIX_NAMESPACE": "ns-1", "OMPI_MCA_ess_base_jobid": "7"}, "ns-1"},
	{"ompi-jobid", environ.Map{"PMIX_NAMESPACE": "", "OMPI_MCA_ess_base_jobid": "7"}, "7"},
	{"torchelastic-beats-pmix", environ.Map{"TORCHELASTIC_RUN_ID": "rdzv-1", "PMIX_NAMESPACE": "ns-1"}, "rdzv-1"},
	{"torchelastic-none-then-pmix", environ.Map{"TORCHELASTIC_RUN_ID": "none", "PMIX_NAMESPACE": "ns-1"}, "ns-1"},
	{"slurm-beats-pmix", environ.Map{"SLURM_JOB_ID": "42", "PMIX_NAMESPACE": "slurm.pmix.42.0"}, "42"},
	{"configured-beats-pmix", environ.Map{"NEMO_LENS_RUN_ID": "run-a", "PMIX_NAMESPACE": "ns-1"}, "run-a"},
	// A random id a parent drew and handed down, marked
	// (docs/resource.md#run-id-launcher): a launcher id outranks it.
	{"drawn-yields-to-torchelastic", environ.Map{"NEMO_LENS_RUN_ID": "d1", "NEMO_LENS_RUN_ID_DRAWN": "d1", "TORCHELASTIC_RUN_ID": "JOBX"}, "JOBX"},
	{"drawn-yields-to-pmix", environ.Map{"NEMO_LENS_RUN_ID": "d1", "NEMO_LENS_RUN_ID_DRAWN": "d1", "PMIX_NAMESPACE": "ns-1"}, "ns-1"},
	{"drawn-yields-to-slurm", environ.Map{"NEMO_LENS_RUN_ID": "d1", "NEMO_LENS_RUN_ID_DRAWN": "d1", "SLURM_JOB_ID": "42"}, "42"},
	{"drawn-trimmed", environ.Map{"NEMO_LENS_RUN_ID": " d1\t", "NEMO_LENS_RUN_ID_DRAWN": "d1\n", "TORCHELASTIC_RUN_ID": "JOBX"}, "JOBX"},
	{"drawn-kept-without-launcher", environ.Map{"NEMO_LENS_RUN_ID": "d1", "NEMO_LENS_RUN_ID_DRAWN": "d1", "TORCHELASTIC_RUN_ID": "none"}, "d1"},
	{"marker-of-another-id-is-ignored", environ.Map{"NEMO_LENS_RUN_ID": "abc", "NEMO_LENS_RUN_ID_DRAWN": "d1", "TORCHELASTIC_RUN_ID": "JOBX"}, "abc"},
	{"empty-marker-is-ignored", environ.Map{"NEMO_LENS_RUN_ID": "abc", "NEMO_LENS_RUN_ID_DRAWN": "", "TORCHELASTIC_RUN_ID": "JOBX"}, "abc"},
}

// resourceOptions keep detection off the machine: a fixed host name, no
// GPU probe, no Kubernetes path.
func resourceOptions(env environ.Map) []lens.ResourceOption {
	return []lens.ResourceOption{
		lens.WithEnv(env),
		lens.WithDetectOptions(
			detect.WithHostname(func() (string, error) { return "node-1", nil }),
			detect.WithPID(4242),
			detect.WithGPUCount(func(context.Context) (int, bool) { return 0, false }),
			detect.WithKubernetesSecretsPath("/nonexistent/lens-test"),
		),
	}
}

// runIDEnvWithRank returns env with the carrier nv.dl.rank=3 (a copy).
func runIDEnvWithRank(env environ.Map) environ.Map {
	m := environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=3"}
	for k, v := range env {
		m[k] = v
	}
	return m
}

// wantRunID resolves a case's expectation: the random id is the one
// NewRunID gives this process (drawn once per process).
func wantRunID(t *testing.T, want string, env environ.Map) string {
	t.Helper()
	if want != "" {
		return want
	}
	id := lens.NewRunID(env)
	if !randomRunID.MatchString(id) {
		t.Fatalf("NewRunID = %q, want 12 lowercase hex digits", id)
	}
	return id
}

// TestRunIDPrecedence: FromEnv + NewResource (what an enabled Setup
// exports) report the run id of the first source that has one, as
// nemo.run.id and as the prefix of service.instance.id.
func TestRunIDPrecedence(t *testing.T) {
	t.Parallel()
	random := lens.NewRunID(environ.Map{})
	if !randomRunID.MatchString(random) {
		t.Fatalf("NewRunID(empty) = %q, want 12 lowercase hex digits", random)
	}
	for _, c := range runIDCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := runIDEnvWithRank(c.env)
			want := wantRunID(t, c.want, env)
			if c.want == "" && want != random {
				t.Errorf("random run id %q differs from this process's %q: it must be drawn once per process", want, random)
			}
			cfg, err := lens.FromEnv(lens.WithEnv(env))
			if err != nil {
				t.Fatal(err)
			}
			res, err := lens.NewResource(context.Background(), cfg, resourceOptions(env)...)
			if err != nil {
				t.Fatal(err)
			}
			if v, ok := res.Set().Value("nemo.run.id"); !ok || v.AsString() != want {
				t.Errorf("nemo.run.id = %q (present %v), want %q", v.AsString(), ok, want)
			}
			if v, ok := res.Set().Value("service.instance.id"); !ok || v.AsString() != want+"-rank3" {
				t.Errorf("service.instance.id = %q (present %v), want %q", v.AsString(), ok, want+"-rank3")
			}
			// FromEnv reads NEMO_LENS_RUN_ID only; NewRunID is the fill-in
			// alone, which never reads it.
			if cfg.RunID != "" {
				if cfg.RunID != want {
					t.Errorf("FromEnv RunID = %q, want %q", cfg.RunID, want)
				}
			} else if got := lens.NewRunID(env); got != want {
				t.Errorf("NewRunID = %q, want %q", got, want)
			}
		})
	}
}

// TestRunIDPrecedenceSetup: an enabled Setup fills the same run id into
// Handle.Config and its resource. (Not parallel: an enabled Setup records
// the process identity while it is active.)
func TestRunIDPrecedenceSetup(t *testing.T) {
	for _, c := range runIDCases {
		t.Run(c.name, func(t *testing.T) {
			env := runIDEnvWithRank(c.env)
			env["NEMO_LENS_ENABLED"] = "true"
			env["NEMO_LENS_METRICS_ENABLED"] = "false"
			want := wantRunID(t, c.want, env)
			cfg, err := lens.FromEnv(lens.WithEnv(env))
			if err != nil {
				t.Fatal(err)
			}
			h, err := lens.Setup(context.Background(), cfg, setupOptions(resourceOptions(env),
				lens.WithSpanExporter(tracetest.NewInMemoryExporter()), lens.WithoutGlobals())...)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := h.Shutdown(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("Shutdown: %v", err)
				}
			}()
			if got := h.Config().RunID; got != want {
				t.Errorf("Handle.Config().RunID = %q, want %q", got, want)
			}
			if v, ok := h.Attributes().Get("nemo.run.id"); !ok || v.AsString() != want {
				t.Errorf("resource nemo.run.id = %v (present %v), want %q", v, ok, want)
			}
		})
	}
}
