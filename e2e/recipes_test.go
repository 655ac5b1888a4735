package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/nemolens/lens-go/e2e/internal/jaeger"
	"github.com/nemolens/lens-go/e2e/internal/launch"
	"github.com/nemolens/lens-go/e2e/internal/prometheus"
	"github.com/nemolens/lens-go/internal/mdblock"
)

// TestRecipes (issue 38) runs the recipes of docs/recipes.md as written:
// for each launcher, the blocks recipe-env, the launcher's and recipe-query
// with bash in the repository, against a real Jaeger and a real Prometheus
// 3 (the recommended configuration: e2e/internal/prometheus), the built lens
// first on PATH, JAEGER, JAEGER_OTLP, PROMETHEUS and train ("sleep 1") set
// in the environment as a reader sets them. The launchers are the real
// ones: the local Slurm (sbatch --wait of examples/train.sbatch), Debian's
// torchrun (one node; two agents at once as two nodes of a c10d
// rendezvous), Open MPI's mpirun and MPICH's mpiexec.hydra.
//
// Expected, from the launcher's parameters (not from what lens says): one
// trace per rank in Jaeger, found by service train-gpt and nemo.run.id =
// the block's run (for sbatch: the id of a job named train-gpt), with
// nv.dl.rank 0 … N−1 and nv.dl.world_size N; one lens_exec_up series per
// rank in Prometheus with the same promoted labels; and the query block
// printing the ranks, "0 … N−1", once for each backend.
func TestRecipes(t *testing.T) {
	elapsed(t)
	gate(t)
	doc := filepath.Join(repoRoot(), "docs", "recipes.md")
	block := func(name string) mdblock.Block {
		t.Helper()
		b, err := mdblock.Named(doc, name)
		if err != nil || len(b) != 1 {
			t.Fatalf("docs/recipes.md: block %s: %v (%d blocks)", name, err, len(b))
		}
		return b[0]
	}
	envBlock, queryBlock := block("recipe-env"), block("recipe-query")
	j := jaeger.StartForTest(t)
	p := prometheus.StartForTest(t)
	lensBin := lensBinary(t)
	readerEnv := []string{
		"PATH=" + filepath.Dir(lensBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"JAEGER=" + j.QueryURL(),
		"JAEGER_OTLP=http://" + j.OTLPGRPCEndpoint(),
		"PROMETHEUS=" + p.URL(),
		"train=sleep 1",
	}

	// runRecipe runs recipe-env and the launcher's block (copies at once: the
	// nodes of one run) and returns the run id each left in $run.
	runRecipe := func(ctx context.Context, t *testing.T, env []string, b mdblock.Block, copies int) string {
		t.Helper()
		script := mdblock.Script(envBlock, b) + "printf 'recipe-run=%s\\n' \"$run\"\n"
		outs := make([]string, copies)
		errs := make([]error, copies)
		var wg sync.WaitGroup
		for i := range copies {
			wg.Go(func() {
				cmd := exec.CommandContext(ctx, "bash", "-c", script)
				cmd.Dir = repoRoot()
				cmd.Env = env
				out, err := cmd.CombinedOutput()
				outs[i], errs[i] = string(out), err
			})
		}
		wg.Wait()
		run := ""
		for i := range copies {
			if errs[i] != nil {
				t.Fatalf("%v (copy %d): %v\n%s", b, i, errs[i], outs[i])
			}
			_, r, ok := strings.Cut(outs[i], "recipe-run=")
			r, _, _ = strings.Cut(r, "\n")
			if !ok || r == "" || (run != "" && r != run) {
				t.Fatalf("%v: run ids %q and %q\n%s", b, run, r, outs[i])
			}
			run = r
		}
		return run
	}
	// check asserts the run's n ranks in both backends and in what the
	// query block prints.
	check := func(ctx context.Context, t *testing.T, env []string, run string, n int) {
		t.Helper()
		want := make([]string, n)
		for k := range n {
			want[k] = strconv.Itoa(k)
		}
		traces, err := j.WaitTraces(ctx, "train-gpt", map[string]string{"nemo.run.id": run}, n)
		if err != nil {
			t.Fatal(err)
		}
		var ranks []string
		for _, tr := range traces {
			for _, proc := range tr.Processes {
				rank, ok1 := proc.Tag("nv.dl.rank")
				size, ok2 := proc.Tag("nv.dl.world_size")
				id, ok3 := proc.Tag("nemo.run.id")
				r, _ := rank.AsInt64()
				s, _ := size.AsInt64()
				got, _ := id.AsString()
				if !ok1 || !ok2 || !ok3 || s != int64(n) || got != run {
					t.Errorf("run %s: a process with nv.dl.rank %v, nv.dl.world_size %v, nemo.run.id %v; want a rank of %d, run %s", run, rank, size, id, n, run)
				}
				ranks = append(ranks, strconv.FormatInt(r, 10))
			}
		}
		slices.SortFunc(ranks, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
		if !slices.Equal(ranks, want) {
			t.Errorf("run %s: Jaeger has the ranks %q, want %q (one trace each)", run, ranks, want)
		}
		samples, err := p.Query(ctx, fmt.Sprintf("lens_exec_up{nemo_run_id=%q}", run))
		if err != nil {
			t.Fatal(err)
		}
		ranks = ranks[:0]
		for _, s := range samples {
			if s.Metric["nv_dl_world_size"] != strconv.Itoa(n) || s.Metric["job"] != "train-gpt" {
				t.Errorf("run %s: series %v; want nv_dl_world_size %d, job train-gpt", run, s.Metric, n)
			}
			ranks = append(ranks, s.Metric["nv_dl_rank"])
		}
		slices.SortFunc(ranks, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
		if !slices.Equal(ranks, want) {
			t.Errorf("run %s: Prometheus has lens_exec_up of the ranks %q, want %q", run, ranks, want)
		}
		cmd := exec.CommandContext(ctx, "bash", "-c", mdblock.Script(envBlock, queryBlock))
		cmd.Dir = repoRoot()
		cmd.Env = append(slices.Clone(env), "run="+run)
		out, err := cmd.Output()
		line := strings.Join(want, " ")
		if err != nil || string(out) != line+"\n"+line+"\n" {
			t.Errorf("recipe-query for run %s: %v, printed %q; want %q twice", run, err, out, line)
		}
	}

	t.Run("sbatch", func(t *testing.T) {
		c := needCluster(t, 1)
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		env := append(lensEnv(c.Env()), readerEnv...)
		env = append(env, "SBATCH_OUTPUT="+filepath.Join(outDir(t), "job-%j.out"))
		run := runRecipe(ctx, t, env, block("recipe-sbatch"), 1)
		jobs, err := c.ShowJob(ctx, run)
		if err != nil || len(jobs) != 1 || jobs[0]["JobName"] != "train-gpt" || jobs[0]["JobState"] != "COMPLETED" {
			t.Fatalf("the run id %q is not a completed job named train-gpt: %v %v", run, jobs, err)
		}
		check(ctx, t, env, run, 2) // examples/train.sbatch: --ntasks=2
	})
	t.Run("torchrun", func(t *testing.T) {
		if _, err := launch.Torch(); err != nil {
			skipOrFatal(t, "%v", err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		env := append(lensEnv(os.Environ()), readerEnv...)
		check(ctx, t, env, runRecipe(ctx, t, env, block("recipe-torchrun"), 1), 2)
		// Two agents at once: the two nodes of --nnodes 2.
		check(ctx, t, env, runRecipe(ctx, t, env, block("recipe-torchrun-nnodes"), 2), 4)
	})
	t.Run("mpirun-openmpi", func(t *testing.T) {
		if _, err := launch.MPIRun(); err != nil {
			skipOrFatal(t, "%v", err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		// As root on two cores: what a site sets for mpirun once.
		env := append(lensEnv(os.Environ()), readerEnv...)
		env = append(env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
			"OMPI_MCA_rmaps_base_oversubscribe=1", "OMPI_MCA_btl=self,tcp")
		check(ctx, t, env, runRecipe(ctx, t, env, block("recipe-mpirun-openmpi"), 1), 4)
	})
	t.Run("mpirun-mpich", func(t *testing.T) {
		if _, err := launch.Hydra(); err != nil {
			skipOrFatal(t, "%v", err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		env := append(lensEnv(os.Environ()), readerEnv...)
		check(ctx, t, env, runRecipe(ctx, t, env, block("recipe-mpirun-mpich"), 1), 4)
	})
}

// TestRecipeK8sJob checks the shape of docs/recipes.md's Indexed Job: an
// Indexed Job whose completions equal its parallelism, whose container runs
// lens exec --rank-from k8s-index, whose run id is the Job's uid from the
// downward API, and whose environment sends traces to Jaeger over OTLP/gRPC
// and metrics to Prometheus's OTLP receiver over OTLP/HTTP, with lens exec's
// metrics on.
func TestRecipeK8sJob(t *testing.T) {
	b, err := mdblock.Named(filepath.Join(repoRoot(), "docs", "recipes.md"), "recipe-k8s-job")
	if err != nil || len(b) != 1 || b[0].Lang != "yaml" {
		t.Fatalf("recipe-k8s-job: %v, %d blocks", err, len(b))
	}
	var job k8sJob
	if err := yaml.Unmarshal([]byte(b[0].Text), &job); err != nil {
		t.Fatal(err)
	}
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || s.CompletionMode != "Indexed" || s.Completions < 2 ||
		s.Completions != s.Parallelism || len(s.Template.Spec.Containers) != 1 || s.Template.Spec.RestartPolicy != "Never" {
		t.Fatalf("not an Indexed Job of parallel pods: %+v", job)
	}
	c := s.Template.Spec.Containers[0]
	if len(c.Command) < 5 || c.Command[0] != "lens" || !slices.Equal(c.Command[1:5], []string{"exec", "--rank-from", "k8s-index", "--"}) {
		t.Errorf("command %q, want lens exec --rank-from k8s-index -- …", c.Command)
	}
	env := map[string]k8sEnv{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if e := env["NEMO_LENS_RUN_ID"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
		e.ValueFrom.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/controller-uid']" {
		t.Errorf("NEMO_LENS_RUN_ID %+v, want the Job's uid from the downward API", e)
	}
	for name, want := range map[string]string{
		"NEMO_LENS_ENABLED":                   "true",
		"OTEL_SERVICE_NAME":                   "train-gpt",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL":  "grpc",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":  "http://jaeger-collector.observability.svc:4317",
		"OTEL_METRICS_EXPORTER":               "otlp",
		"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/protobuf",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://prometheus.observability.svc:9090/api/v1/otlp/v1/metrics",
	} {
		got := ""
		if v := env[name].Value; v != nil {
			got = *v
		}
		if got != want {
			t.Errorf("%s=%q, want %q", name, got, want)
		}
	}
}
