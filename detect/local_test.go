package detect_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

func fixedHost() (string, error) { return "node07", nil }

func TestDetectLocalGPUCount(t *testing.T) {
	cases := []struct {
		cvd  string
		want int64
	}{
		{"0,1,2,3", 4}, {"", 0}, {"0,,2", 3}, {"GPU-a,GPU-b", 2}, {"-1", 1},
		{" ", 0}, {"\u00a0\x1f", 0}, {" 0 ", 1}, {",", 2}, {"NoDevFiles", 1},
	}
	for _, c := range cases {
		probed := false
		got := detect.Local(context.Background(), detect.WithEnv(environ.Map{"CUDA_VISIBLE_DEVICES": c.cvd}), detect.WithHostname(fixedHost), detect.WithPID(7), detect.WithGPUCount(func(context.Context) (int, bool) { probed = true; return 99, true }))
		if v, _ := got.Get("host.gpu.count"); !v.Equal(attr.Int64(c.want)) {
			t.Errorf("CUDA_VISIBLE_DEVICES=%q: host.gpu.count = %v, want %d", c.cvd, v, c.want)
		}
		if probed {
			t.Errorf("CUDA_VISIBLE_DEVICES=%q: the probe ran", c.cvd)
		}
	}
}

func TestDetectLocalProbe(t *testing.T) {
	ctx := context.Background()
	got := detect.Local(ctx, detect.WithEnv(environ.Map{}), detect.WithHostname(fixedHost), detect.WithPID(7), detect.WithGPUCount(func(context.Context) (int, bool) { return 8, true }))
	want := m("host.name", "node07", "process.pid", 7, "host.gpu.count", 8)
	if !got.Equal(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	got = detect.Local(ctx, detect.WithEnv(environ.Map{}), detect.WithHostname(fixedHost), detect.WithPID(7), detect.WithGPUCount(noGPU))
	if want := m("host.name", "node07", "process.pid", 7); !got.Equal(want) {
		t.Errorf("failed probe: got %v, want %v", got, want)
	}
	// The probe receives the caller's context.
	type key struct{}
	cctx := context.WithValue(ctx, key{}, "x")
	detect.Local(cctx, detect.WithEnv(environ.Map{}), detect.WithHostname(fixedHost), detect.WithGPUCount(func(c context.Context) (int, bool) {
		if c.Value(key{}) != "x" {
			t.Error("the probe did not get the caller's context")
		}
		return 0, false
	}))
}

func TestDetectLocalLiveDefaults(t *testing.T) {
	got := detect.Local(context.Background(), detect.WithEnv(environ.Map{"CUDA_VISIBLE_DEVICES": ""}))
	host, _ := os.Hostname()
	want := m("host.name", host, "process.pid", os.Getpid(), "host.gpu.count", 0)
	if !got.Equal(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestDetectLocalHostnameError(t *testing.T) {
	var logs bytes.Buffer
	e := &detect.Explanation{}
	got := detect.Local(context.Background(), detect.WithEnv(environ.Map{"CUDA_VISIBLE_DEVICES": "0"}), detect.WithHostname(func() (string, error) { return "", errors.New("boom") }), detect.WithPID(3), detect.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), detect.WithExplanation(e))
	if want := m("host.name", "", "process.pid", 3, "host.gpu.count", 1); !got.Equal(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "boom") {
		t.Errorf("no warning logged: %q", logs.String())
	}
	if o, _ := e.Origin("host.name"); len(o.Notes) != 1 || !strings.Contains(o.Notes[0], "boom") {
		t.Errorf("origin %+v", o)
	}
}

func TestDetectKubernetes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "missing"), dangling); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	full := map[string]string{
		"K8S_NAMESPACE": "ml", "K8S_POD_NAME": "p", "K8S_POD_UID": "u", "K8S_NODE_NAME": "n",
		"K8S_CONTAINER_NAME": "c", "K8S_JOB_NAME": "j", "HOSTNAME": "h",
	}
	fullWant := m("k8s.namespace.name", "ml", "k8s.pod.name", "p", "k8s.pod.uid", "u", "k8s.node.name", "n",
		"k8s.container.name", "c", "k8s.job.name", "j")
	with := func(extra map[string]string) environ.Map {
		env := environ.Map{}
		for k, v := range full {
			env[k] = v
		}
		for k, v := range extra {
			env[k] = v
		}
		return env
	}
	cases := []struct {
		name    string
		env     environ.Map
		secrets string
		want    *attr.Map
	}{
		{"inactive", with(nil), filepath.Join(dir, "missing"), m()},
		{"service host", with(map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1"}), filepath.Join(dir, "missing"), fullWant},
		{"empty service host", with(map[string]string{"KUBERNETES_SERVICE_HOST": ""}), filepath.Join(dir, "missing"), m()},
		{"secrets directory", with(nil), dir, fullWant},
		{"secrets plain file", with(nil), file, fullWant},
		{"dangling symlink", with(nil), dangling, m()},
		{"active, nothing set", environ.Map{"KUBERNETES_SERVICE_HOST": "x"}, "", m()},
		{"HOSTNAME when K8S_POD_NAME absent", environ.Map{"KUBERNETES_SERVICE_HOST": "x", "HOSTNAME": "pod-abc"}, "", m("k8s.pod.name", "pod-abc")},
		{"empty values skipped, not trimmed", environ.Map{"KUBERNETES_SERVICE_HOST": "x", "K8S_NAMESPACE": "", "K8S_POD_NAME": " p ", "HOSTNAME": "h"}, "", m("k8s.pod.name", " p ")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			secrets := c.secrets
			if secrets == "" {
				secrets = filepath.Join(dir, "missing")
			}
			got := detect.Kubernetes(context.Background(), detect.WithEnv(c.env), detect.WithKubernetesSecretsPath(secrets))
			if !got.Equal(c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestDetectLayers(t *testing.T) {
	secrets := filepath.Join(t.TempDir(), "none")
	env := environ.Map{
		"SLURM_JOB_ID": "1", "CUDA_VISIBLE_DEVICES": "0,1",
		"KUBERNETES_SERVICE_HOST": "10.0.0.1", "K8S_POD_NAME": "new-pod",
		"OTEL_RESOURCE_ATTRIBUTES": "host.name=parent-host,process.pid=12,k8s.pod.name=old-pod,slurm.job.name=launch",
	}
	got := detect.All(context.Background(), detect.WithEnv(env), detect.WithHostname(fixedHost), detect.WithPID(42), detect.WithKubernetesSecretsPath(secrets))
	want := m("host.name", "node07", "process.pid", 42, "host.gpu.count", 2,
		"slurm.job.name", "launch", "slurm.job.id", "1", "slurm.job.id.raw", "1", "slurm.array.job_id", "1",
		"slurm.array.task_id", "0", "slurm.array.count", 1, "slurm.restart_count", 0,
		"nv.dl.job.uuid", "e3bf9abd-3253-57f5-829f-504e707f670b", "k8s.pod.name", "new-pod")
	if !got.Equal(want) {
		t.Errorf("Detect\n got %v\nwant %v", got, want)
	}
	// Nothing detected but the local keys: host.name is always there.
	got = detect.All(context.Background(), detect.WithEnv(environ.Map{}), detect.WithHostname(fixedHost), detect.WithPID(1), detect.WithGPUCount(noGPU), detect.WithKubernetesSecretsPath(secrets))
	if want := m("host.name", "node07", "process.pid", 1); !got.Equal(want) {
		t.Errorf("empty Detect = %v", got)
	}
}
