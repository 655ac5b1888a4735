package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/nemolens/lens-go/e2e/internal/jaeger"
)

// k8sJob is the part of examples/k8s-job.yaml the test reads.
type k8sJob struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				RestartPolicy string         `yaml:"restartPolicy"`
				Containers    []k8sContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []k8sEnv `yaml:"env"`
}

type k8sEnv struct {
	Name      string  `yaml:"name"`
	Value     *string `yaml:"value"`
	ValueFrom *struct {
		FieldRef *struct {
			FieldPath string `yaml:"fieldPath"`
		} `yaml:"fieldRef"`
	} `yaml:"valueFrom"`
}

// k8sPod is the pod the test pretends Kubernetes made for completion index
// Index of the Job: every value the downward API can give it.
type k8sPod struct {
	JobUID, JobName, Name, Namespace, UID, NodeName string
	Index                                           int
}

// fieldPath resolves a downward-API fieldRef of an env entry as Kubernetes
// would for this pod.
func (p k8sPod) fieldPath(path string) (string, error) {
	switch path {
	case "metadata.name":
		return p.Name, nil
	case "metadata.namespace":
		return p.Namespace, nil
	case "metadata.uid":
		return p.UID, nil
	case "spec.nodeName":
		return p.NodeName, nil
	// The labels the Job controller puts on its pods (Kubernetes 1.27+,
	// and the older unprefixed ones).
	case "metadata.labels['batch.kubernetes.io/controller-uid']", "metadata.labels['controller-uid']":
		return p.JobUID, nil
	case "metadata.labels['batch.kubernetes.io/job-name']", "metadata.labels['job-name']":
		return p.JobName, nil
	case "metadata.labels['batch.kubernetes.io/job-completion-index']", "metadata.annotations['batch.kubernetes.io/job-completion-index']":
		return fmt.Sprint(p.Index), nil
	}
	return "", fmt.Errorf("fieldPath %q: not resolved by this test (add it to k8sPod.fieldPath)", path)
}

// randomUUID makes up a UUID v4 (what Kubernetes uses for uids).
func randomUUID(t *testing.T) string {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b[:])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// readK8sJob parses examples/k8s-job.yaml and checks the shape the example
// promises: an Indexed Job with one container whose command is the
// entrypoint script and whose env has the run id and K8S_* entries.
func readK8sJob(t *testing.T, path string) (k8sJob, k8sContainer) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var job k8sJob
	if err := yaml.Unmarshal(data, &job); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Metadata.Name == "" {
		t.Fatalf("%s: apiVersion %q kind %q name %q, want a batch/v1 Job with a name", path, job.APIVersion, job.Kind, job.Metadata.Name)
	}
	// JOB_COMPLETION_INDEX exists only in Indexed Jobs.
	if s := job.Spec; s.CompletionMode != "Indexed" || s.Completions < 2 || s.Parallelism < 2 {
		t.Fatalf("%s: completionMode %q, completions %d, parallelism %d; want an Indexed Job of several pods", path, s.CompletionMode, s.Completions, s.Parallelism)
	}
	cs := job.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("%s: %d containers, want 1", path, len(cs))
	}
	c := cs[0]
	if len(c.Command) != 1 || filepath.Base(c.Command[0]) != "k8s-entrypoint.sh" {
		t.Fatalf("%s: container command %q, want the entrypoint examples/k8s-entrypoint.sh", path, c.Command)
	}
	return job, c
}

// podEnv is the environment Kubernetes would give the container of pod:
// the spec's env entries, literal values as they are and fieldRefs resolved
// for the pod, plus what Kubernetes adds by itself (the service host,
// HOSTNAME = the pod name, JOB_COMPLETION_INDEX in an Indexed Job).
func podEnv(t *testing.T, c k8sContainer, pod k8sPod) (env []string, byName map[string]k8sEnv) {
	t.Helper()
	byName = map[string]k8sEnv{}
	for _, e := range c.Env {
		if _, dup := byName[e.Name]; dup || e.Name == "" {
			t.Fatalf("k8s-job.yaml: env entry %q empty or repeated", e.Name)
		}
		byName[e.Name] = e
		switch {
		case e.Value != nil && e.ValueFrom == nil:
			env = append(env, e.Name+"="+*e.Value)
		case e.Value == nil && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			v, err := pod.fieldPath(e.ValueFrom.FieldRef.FieldPath)
			if err != nil {
				t.Fatalf("k8s-job.yaml: env %s: %v", e.Name, err)
			}
			env = append(env, e.Name+"="+v)
		default:
			t.Fatalf("k8s-job.yaml: env %s: want either value or valueFrom.fieldRef", e.Name)
		}
	}
	return append(env,
		"KUBERNETES_SERVICE_HOST=10.96.0.1",
		"KUBERNETES_SERVICE_PORT=443",
		"HOSTNAME="+pod.Name,
		fmt.Sprintf("JOB_COMPLETION_INDEX=%d", pod.Index),
	), byName
}

// TestExampleK8sJob runs the Kubernetes example outside Kubernetes: the
// container entrypoint examples/k8s-entrypoint.sh, with the environment
// the pod spec examples/k8s-job.yaml would give pod 2 of the Indexed Job —
// the spec's env entries, each downward-API fieldRef resolved with values
// the test makes up (the Job's uid label, the pod's name, namespace, uid
// and node) — plus what Kubernetes sets itself (KUBERNETES_SERVICE_HOST,
// HOSTNAME, JOB_COMPLETION_INDEX=2). The spec's OTLP endpoint is replaced
// by the test's Jaeger (and metrics turned off: Jaeger takes traces only).
//
// The spec must take NEMO_LENS_RUN_ID from the Job's uid label (pods of a
// Job have no common parent; without it each pod would draw its own random
// run id). Expected, from Jaeger and from `lens resource --format json`
// run as the entrypoint's command: nemo.run.id = the Job's uid, nv.dl.rank
// = 2 (an integer, from JOB_COMPLETION_INDEX via --rank-from k8s-index),
// nv.dl.role = ckpt_worker, k8s.* from the downward-API variables
// (docs/detection.md#detect-kubernetes), service.instance.id
// "<uid>-rank2" for the worker and "<uid>-rank2.lens-exec.<lens's pid>" for
// the wrapper. Without arguments the entrypoint runs /app/checkpoint-worker.
func TestExampleK8sJob(t *testing.T) {
	elapsed(t)
	root := repoRoot()
	entrypoint := filepath.Join(root, "examples", "k8s-entrypoint.sh")
	sh, err := exec.LookPath("sh")
	if err != nil {
		cannotRun(t, "no sh to run %s: %v", entrypoint, err)
	}
	j := jaeger.StartForTest(t)
	workerBin := workerBinary(t)
	lensBin := lensBinary(t)
	job, container := readK8sJob(t, filepath.Join(root, "examples", "k8s-job.yaml"))
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	const index = 2
	pod := k8sPod{
		JobUID:    randomUUID(t),
		JobName:   job.Metadata.Name,
		Name:      fmt.Sprintf("%s-%d-x7k2q", job.Metadata.Name, index), // <job>-<index>-<random>
		Namespace: job.Metadata.Namespace,
		UID:       randomUUID(t),
		NodeName:  "gpu-node-07",
		Index:     index,
	}
	if pod.Namespace == "" {
		pod.Namespace = "ml-training" // the namespace the Job is created in
	}
	spec, byName := podEnv(t, container, pod)
	if e := byName["NEMO_LENS_RUN_ID"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
		e.ValueFrom.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/controller-uid']" {
		t.Errorf("k8s-job.yaml: NEMO_LENS_RUN_ID must come from the Job's uid, fieldRef metadata.labels['batch.kubernetes.io/controller-uid']")
	}
	if e := byName["K8S_CONTAINER_NAME"]; e.Value == nil || *e.Value != container.Name {
		t.Errorf("k8s-job.yaml: K8S_CONTAINER_NAME must be the container's name %q", container.Name)
	}
	for _, name := range []string{"K8S_POD_NAME", "K8S_NAMESPACE", "K8S_POD_UID", "K8S_NODE_NAME", "K8S_JOB_NAME"} {
		if e, ok := byName[name]; !ok || e.ValueFrom == nil {
			t.Errorf("k8s-job.yaml: no downward-API env entry %s", name)
		}
	}
	// lens on PATH, as in the container image; the collector is Jaeger.
	env := lensEnv(os.Environ(), append(spec,
		"PATH="+filepath.Dir(lensBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+j.OTLPGRPCEndpoint(),
		"OTEL_EXPORTER_OTLP_INSECURE=true",
		"NEMO_LENS_METRICS_ENABLED=false")...)

	const service = "ckpt-worker" // the entrypoint's default OTEL_SERVICE_NAME
	workerID := pod.JobUID + "-rank2"
	k8sTags := []tagWant{
		wstr("k8s.pod.name", pod.Name),
		wstr("k8s.namespace.name", pod.Namespace),
		wstr("k8s.pod.uid", pod.UID),
		wstr("k8s.node.name", pod.NodeName),
		wstr("k8s.job.name", pod.JobName),
		wstr("k8s.container.name", container.Name),
	}
	common := append([]tagWant{
		wstr("nemo.run.id", pod.JobUID),
		wint("nv.dl.rank", index),
		wstr("nv.dl.role", "ckpt_worker"),
	}, k8sTags...)

	t.Run("worker", func(t *testing.T) {
		out := outDir(t)
		runCmd(ctx, t, env, 0, sh, entrypoint, workerBin, "-span", "checkpoint", "-out", out, "-label", "pod")
		rec := records(t, out, "pod", 1)[0]
		if rec.Env["NEMO_LENS_RUN_ID"] != pod.JobUID || rec.RunID != pod.JobUID {
			t.Errorf("worker: NEMO_LENS_RUN_ID=%q (Setup's run id %q), want the Job's uid %s", rec.Env["NEMO_LENS_RUN_ID"], rec.RunID, pod.JobUID)
		}
		if want := carrierText("nv.dl.rank", "2", "nv.dl.role", "ckpt_worker"); rec.Carrier != want {
			t.Errorf("worker: carrier %q, want lens exec's %q", rec.Carrier, want)
		}
		tr, err := j.WaitSpans(ctx, rec.TraceID, 2)
		if err != nil {
			t.Fatal(err)
		}
		wrapper, child := execSpans(t, tr, "lens exec "+filepath.Base(workerBin), "checkpoint", 2)
		if wrapper == nil || child == nil {
			return
		}
		checkParent(t, tr, wrapper, child, rec)
		wrapperID := wrapperInstanceID(workerID, rec.PPID)
		for _, side := range []struct {
			what, id string
			span     *jaeger.Span
			pid      int
		}{{"worker", workerID, child, rec.PID}, {"lens exec", wrapperID, wrapper, rec.PPID}} {
			p, ok := tr.SpanProcess(side.span)
			if !ok {
				t.Fatalf("%s: no process", side.what)
			}
			if p.ServiceName != service {
				t.Errorf("%s: serviceName %q, want the entrypoint's %q", side.what, p.ServiceName, service)
			}
			checkTags(t, side.what+" process", p.Tags, append(common,
				wstr("service.instance.id", side.id), wint("process.pid", int64(side.pid)))...)
			// k8s-index gives the rank only.
			noTag(t, side.what+" process", p.Tags, "nv.dl.world_size")
		}
		checkIdentities(t, identities(t, tr, map[string]*jaeger.Span{"worker": child, "lens exec": wrapper}),
			pod.JobUID, []string{workerID, wrapperID})
		checkSearch(ctx, t, j, service, map[string]string{"nemo.run.id": pod.JobUID, "nv.dl.rank": "2"}, tr.TraceID)
	})

	// The same pod with `lens resource --format json` as the command: the
	// resource a Lens process under the entrypoint exports.
	t.Run("lens-resource", func(t *testing.T) {
		stdout := runStdout(ctx, t, env, sh, entrypoint, "lens", "resource", "--format", "json")
		dec := json.NewDecoder(strings.NewReader(stdout))
		dec.UseNumber()
		var res map[string]any
		if err := dec.Decode(&res); err != nil {
			t.Fatalf("lens resource --format json: %v\n%s", err, stdout)
		}
		want := map[string]any{
			"nemo.run.id":         pod.JobUID,
			"nv.dl.rank":          json.Number("2"),
			"nv.dl.role":          "ckpt_worker",
			"service.instance.id": workerID,
			"service.name":        service,
			"k8s.pod.name":        pod.Name,
			"k8s.namespace.name":  pod.Namespace,
			"k8s.pod.uid":         pod.UID,
			"k8s.node.name":       pod.NodeName,
			"k8s.job.name":        pod.JobName,
			"k8s.container.name":  container.Name,
		}
		for k, v := range want {
			if got, ok := res[k]; !ok || got != v {
				t.Errorf("lens resource: %s = %#v (present %v), want %#v", k, got, ok, v)
			}
		}
		if _, ok := res["nv.dl.world_size"]; ok {
			t.Errorf("lens resource: nv.dl.world_size = %v; k8s-index gives the rank only", res["nv.dl.world_size"])
		}
	})

	// Without arguments the entrypoint runs the image's worker; here it does
	// not exist, so lens exec exits 127 naming it.
	t.Run("default-command", func(t *testing.T) {
		const def = "/app/checkpoint-worker"
		if _, err := os.Stat(def); err == nil {
			cannotRun(t, "%s exists on this machine, so the entrypoint's default command cannot be told apart", def)
		}
		out := runCmd(ctx, t, lensEnv(env, "NEMO_LENS_ENABLED=false"), 127, sh, entrypoint)
		if !strings.Contains(out, def) {
			t.Errorf("entrypoint without arguments: output %q does not name %s", out, def)
		}
	})
}

// runStdout runs name args with env and returns its stdout; it fails the
// test unless the command succeeds.
func runStdout(ctx context.Context, t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %q: %v\nstdout:\n%s\nstderr:\n%s", name, args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// cannotRun skips t with the reason outside CI and fails it when CI=true:
// in CI every e2e test must run.
func cannotRun(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if inCI() {
		t.Fatalf("e2e test cannot run in CI: %s", msg)
	}
	t.Skipf("skipped: %s (CI=true turns this into a failure)", msg)
}
