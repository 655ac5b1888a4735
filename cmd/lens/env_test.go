package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/shellquote"
	"github.com/nemolens/lens-go/lensconv"
)

// hostile holds text a shell would interpret if it were not quoted right.
const hostile = "it's \"quoted\" $(touch pwned1) `touch pwned2` \\ back\\slash 100% ! bang !! \n" +
	"newline\ttab é 日本 ${HOME} ~ * ; & | < > #"

// hostileEnv is a Slurm task environment whose values and carrier keys are
// hostile; carrier keys are never percent-encoded, so they reach the shell
// word verbatim.
func hostileEnv() map[string]string {
	return map[string]string{
		"SLURM_JOB_ID":        "12345",
		"SLURM_JOB_NAME":      hostile + "\xff\xfe",
		"SLURM_CLUSTER_NAME":  "it's",
		"SLURM_TOPOLOGY_ADDR": "rack'1.node`2`",
		carrier.EnvVar: "$(touch pwned3)=1,it's=2,back\\slash=3,new\nline=4,bang!!=5,é\xff=6,`id`=7," +
			"x y=%27%22,slurm.job.name=from-launch,raw=\xc3",
	}
}

// wantEnvValue is the carrier lens env should export, computed from the
// library: Append(carrier, DetectSlurm + the stage's keys), the inherited
// text kept byte for byte (docs/compatibility.md#lens-env).
func wantEnvValue(t *testing.T, env map[string]string, stage, image string) string {
	t.Helper()
	add := detect.Slurm(context.Background(), detect.WithEnv(environ.Map(env)))
	switch stage {
	case "sbatch":
		add.Delete(lensconv.SlurmTopologyAddr)
		add.Delete(lensconv.SlurmTopologyAddrPattern)
	case "task":
		host, err := os.Hostname()
		if err != nil {
			t.Fatal(err)
		}
		add.Set(lensconv.HostName, attr.String(host))
		if image != "" {
			add.Set(lensconv.NVDLLaunchContainerImage, attr.String(image))
		}
	}
	want, _ := carrier.Append(env[carrier.EnvVar], add)
	return want
}

// TestEnvEvalRoundTrip evaluates lens env's output in real shells and checks
// that the variable holds exactly the expected bytes.
func TestEnvEvalRoundTrip(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "sh", "dash", "zsh"} {
		if !haveShell(t, shell) {
			continue
		}
		path, _ := exec.LookPath(shell)
		for _, stage := range []string{"sbatch", "task"} {
			t.Run(shell+"/"+stage, func(t *testing.T) {
				t.Parallel()
				env := hostileEnv()
				image := ""
				args := `--stage ` + stage
				if stage == "task" {
					image = "image=" + hostile
					env["IMG"] = image
					args += ` --container-image "$IMG"`
				}
				want := wantEnvValue(t, env, stage, image)
				env["LENS"] = lensBin
				dir := t.TempDir()
				cmd := exec.Command(path, "-c", `eval "$("$LENS" env `+args+`)" && printf %s "$`+carrier.EnvVar+`"`)
				cmd.Env = cliEnv(env)
				cmd.Dir = dir
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s: %v; stderr %q", shell, err, stderr.String())
				}
				if string(out) != want {
					t.Errorf("%s eval gave\n%q\nwant\n%q", shell, out, want)
				}
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					t.Errorf("the shell ran a command: %s was created", e.Name())
				}
				// The hostile parts really are in the value.
				got := carrier.Parse(string(out))
				for _, k := range []string{"$(touch pwned3)", "it's", "new\nline", "`id`", "é\xff"} {
					if !got.Has(k) {
						t.Errorf("key %q missing from %q", k, out)
					}
				}
				if v, _ := got.Get(lensconv.SlurmJobName); v.AsString() != "from-launch" {
					t.Errorf("slurm.job.name = %v, want the carrier's value (existing keys win)", v)
				}
				if v, _ := got.Get(lensconv.NVDLLaunchContainerImage); v.AsString() != image && stage == "task" {
					t.Errorf("image = %q, want %q", v.AsString(), image)
				}
			})
		}
	}
}

func TestEnvStages(t *testing.T) {
	t.Parallel()
	env := environ.Map{
		"SLURM_JOB_ID":                "12345",
		"SLURM_CLUSTER_NAME":          "cluster-a",
		"SLURMD_NODENAME":             "head-01",
		"SLURM_TOPOLOGY_ADDR":         "rack.switch.sbatch-node",
		"SLURM_TOPOLOGY_ADDR_PATTERN": "rack.switch.node",
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		has     []string
		hasNot  []string
		imageIs string
	}{
		{[]string{"--stage", "sbatch"}, []string{"slurm.head_node.name", "slurm.job.id"}, []string{"host.name", "slurm.topology.addr", "slurm.topology.addr_pattern", "nv.dl.launch.container.image"}, ""},
		{[]string{"--stage", "task"}, []string{"host.name", "slurm.topology.addr", "slurm.topology.addr_pattern"}, []string{"nv.dl.launch.container.image"}, ""},
		{[]string{"--stage", "task", "--container-image", "image=name,tag"}, []string{"host.name", "nv.dl.launch.container.image"}, nil, "image=name,tag"},
		{[]string{"--stage", "sbatch", "--container-image", ""}, []string{"slurm.job.id"}, []string{"nv.dl.launch.container.image"}, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			r := runIn(t, env, "", append([]string{"env"}, tc.args...)...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("lens env: %v", r)
			}
			value, ok := strings.CutPrefix(r.stdout, "export OTEL_RESOURCE_ATTRIBUTES=")
			if !ok || !strings.HasSuffix(value, "\n") {
				t.Fatalf("lens env printed %q", r.stdout)
			}
			value = strings.TrimSuffix(value, "\n")
			stage, image := tc.args[1], ""
			if len(tc.args) > 3 {
				image = tc.args[3]
			}
			want := wantEnvValue(t, env, stage, image)
			if value != shellquote.Quote(want) {
				t.Errorf("value %s, want %s", value, shellquote.Quote(want))
			}
			got := carrier.Parse(want)
			for _, k := range tc.has {
				if !got.Has(k) {
					t.Errorf("%s missing from %q", k, want)
				}
			}
			for _, k := range tc.hasNot {
				if got.Has(k) {
					t.Errorf("%s present in %q", k, want)
				}
			}
			if v, ok := got.Get("host.name"); ok && v.AsString() != host {
				t.Errorf("host.name %v, want %q", v, host)
			}
			if v, _ := got.Get("nv.dl.launch.container.image"); v.AsString() != tc.imageIs {
				t.Errorf("image %v, want %q", v, tc.imageIs)
			}
		})
	}
}

// TestEnvReference replays the reference CLI's own test
// (test_set_slurm_resource_attrs_task_prints_shell_export_and_preserves_inherited).
func TestEnvReference(t *testing.T) {
	t.Parallel()
	env := environ.Map{
		"SLURM_JOB_ID":                "12345",
		"SLURM_JOB_NAME":              "train,comma",
		"SLURM_JOB_NUM_NODES":         "4",
		"SLURM_NTASKS":                "16",
		"SLURM_CLUSTER_NAME":          "cluster-a",
		"SLURM_JOB_PARTITION":         "batch",
		"SLURM_STEP_ID":               "0",
		"SLURM_TOPOLOGY_ADDR":         "rack.switch.node",
		"SLURM_TOPOLOGY_ADDR_PATTERN": "rack.switch.node",
		carrier.EnvVar:                "slurm.head_node.name=head-01,slurm.job.id=from-launch,custom.attr=kept",
	}
	var stdout, stderr strings.Builder
	a := &app{stdout: &stdout, stderr: &stderr, env: env, hostname: func() (string, error) { return "compute-01", nil }}
	if code := a.main(t.Context(), []string{"env", "--stage", "task", "--container-image", "image=name,tag"}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	value, _ := strings.CutPrefix(strings.TrimSuffix(stdout.String(), "\n"), "export OTEL_RESOURCE_ATTRIBUTES=")
	got := carrier.Parse(value) // the value needs no quoting: every byte is shell-safe
	for k, want := range map[string]string{
		"slurm.head_node.name":         "head-01",
		"slurm.job.id":                 "from-launch",
		"custom.attr":                  "kept",
		"slurm.job.id.raw":             "12345",
		"slurm.job.name":               "train,comma",
		"slurm.cluster.name":           "cluster-a",
		"host.name":                    "compute-01",
		"slurm.topology.addr":          "rack.switch.node",
		"slurm.topology.addr_pattern":  "rack.switch.node",
		"nv.dl.launch.container.image": "image=name,tag",
	} {
		if v, _ := got.Get(k); v.AsString() != want {
			t.Errorf("%s = %v, want %q (value %s)", k, v, want, value)
		}
	}
}
