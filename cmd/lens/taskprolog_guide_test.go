//go:build unix

package main

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/mdblock"
)

// destdir rewrites the absolute paths a guide installs to (/etc, /var,
// /shared) to lie under root, as a DESTDIR does.
func destdir(text, root string) string {
	return regexp.MustCompile(`(^|[\s="'|:])/(etc|var|shared)/`).ReplaceAllString(text, "${1}"+root+"/${2}/")
}

// TestTaskPrologGuide runs the install commands of docs/taskprolog.md
// (the blocks marked <!-- test: taskprolog-guide -->, internal/mdblock) as
// written with bash (mdblock.Script), in the repository (for examples/),
// with their absolute paths under an empty root, after putting the lens
// binary where docs/install.md#shared-path puts it. Then it checks what they installed
// (the example policy, the 1733 log directory, the wrapper slurm.conf's
// TaskProlog= names, pointing at the shared binary) and runs that wrapper
// as slurmstepd would, in a step task and the batch step of a job whose
// GOMEMLIMIT is 8G: exit 0, the exports of the example policy (ranks in
// the step task only), the task's GOMEMLIMIT untouched, the report in the
// user's log file. On 85caa10 the guide had no such block, and its
// `install -m 0644 taskprolog.conf` had neither the file nor -D.
func TestTaskPrologGuide(t *testing.T) {
	t.Parallel()
	// named returns the text of the blocks of docs/taskprolog.md marked name.
	named := func(name string) []mdblock.Block {
		t.Helper()
		b, err := mdblock.Named(repoFile("docs/taskprolog.md"), name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	script := mdblock.Script(named("taskprolog-guide")...)
	var taskProlog, docPolicy string
	for _, b := range named("taskprolog-slurm-conf") {
		for _, l := range strings.Split(b.Text, "\n") {
			if v, ok := strings.CutPrefix(l, "TaskProlog="); ok {
				taskProlog = v
			}
		}
	}
	for _, b := range named("taskprolog-policy") {
		docPolicy += b.Text
	}
	if taskProlog == "" || !strings.HasPrefix(docPolicy, "# /etc/nemo-lens/taskprolog.conf\n") {
		t.Fatalf("docs/taskprolog.md: TaskProlog= %q, policy %q; want both", taskProlog, docPolicy)
	}
	example, err := os.ReadFile(repoFile("examples/taskprolog.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(docPolicy), "\n")[1:] {
		if !strings.Contains(string(example), "\n"+l+"\n") {
			t.Errorf("the guide's policy line %q is not in examples/taskprolog.conf", l)
		}
	}

	root := t.TempDir()
	if regexp.MustCompile(`(?m)^\s*V=`).MatchString(script) {
		t.Fatal("the guide sets V itself: it must use the V of docs/install.md, not overwrite it")
	}
	// docs/install.md#shared-path: one copy per version and architecture,
	// and the TaskProlog's wrapper and policy out of the archive (as
	// scripts/release.sh puts them there: the wrapper naming the version's
	// amd64 binary, which the release checks compare).
	v := []string{"", "v0.0.0-20261201235325-85caa10a42a0"}
	shared := filepath.Join(root, "shared/tools/lens", v[1])
	for _, arch := range []string{"amd64", "arm64"} {
		dir := filepath.Join(shared, "linux_"+arch)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(lensBin, filepath.Join(dir, "lens")); err != nil {
			t.Fatal(err)
		}
	}
	wrapperText, err := os.ReadFile(repoFile("examples/lens-taskprolog.sh"))
	if err != nil {
		t.Fatal(err)
	}
	archived := regexp.MustCompile(`(?m)^LENS=\S*`).ReplaceAllString(string(wrapperText), "LENS=/shared/tools/lens/"+v[1]+"/linux_amd64/lens")
	if err := os.WriteFile(filepath.Join(shared, "lens-taskprolog.sh"), []byte(archived), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, "taskprolog.conf"), example, 0o644); err != nil {
		t.Fatal(err)
	}
	// Without V, the guide stops with a message and installs nothing.
	cmd := exec.Command("bash", "-c", destdir(script, root))
	cmd.Dir = t.TempDir() // no clone: nothing comes from examples/
	cmd.Env = cliEnv(map[string]string{"HOME": root, "TMPDIR": t.TempDir()})
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "V: set V to the version on the shared path first") {
		t.Errorf("the guide without V: %v\n%s\nwant a failure naming V", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "etc")); !os.IsNotExist(err) {
		t.Errorf("the guide without V installed something under /etc: %v", err)
	}
	cmd = exec.Command("bash", "-c", destdir(script, root))
	cmd.Dir = t.TempDir()
	cmd.Env = cliEnv(map[string]string{"HOME": root, "TMPDIR": t.TempDir(), "V": v[1]})
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the guide's commands failed: %v\n%s\nscript:\n%s", err, out, destdir(script, root))
	}
	if !strings.Contains(string(out), "export NEMO_LENS_RUN_ID=1\n") || !strings.Contains(string(out), "lens ") {
		t.Errorf("the guide's checks printed %q; want lens --version and the export of NEMO_LENS_RUN_ID=1", out)
	}

	// What it installed.
	policy := filepath.Join(root, "etc/nemo-lens/taskprolog.conf")
	if got, err := os.ReadFile(policy); err != nil || !bytes.Equal(got, example) {
		t.Errorf("installed policy: %v; want examples/taskprolog.conf", err)
	}
	logDir := filepath.Join(root, "var/log/nemo-lens")
	if fi, err := os.Stat(logDir); err != nil || fi.Mode()&(os.ModeSticky|os.ModePerm) != os.ModeSticky|0o733 {
		t.Errorf("log directory: %v %v; want mode 1733", fi, err)
	}
	wrapper := destdir(taskProlog, root)
	data, err := os.ReadFile(wrapper)
	if err != nil {
		t.Fatalf("slurm.conf's TaskProlog=%s was not installed: %v", taskProlog, err)
	}
	if fi, _ := os.Stat(wrapper); fi.Mode().Perm() != 0o755 {
		t.Errorf("%s: mode %v, want 0755", wrapper, fi.Mode().Perm())
	}
	lens := regexp.MustCompile(`(?m)^LENS=(\S+)$`).FindStringSubmatch(string(data))
	if lens == nil || !strings.HasPrefix(lens[1], filepath.Join(root, "shared/tools/lens", v[1])+"/linux_") {
		t.Errorf("the wrapper runs %q, want the shared copy of %s", lens, v[1])
	}
	if !strings.Contains(string(data), "\nPOLICY="+policy+" ") {
		t.Errorf("the wrapper does not name the installed policy %s:\n%s", policy, data)
	}
	// The example policy logs under /var: the same DESTDIR for the run.
	if err := os.WriteFile(policy, []byte(destdir(string(example), root)), 0o644); err != nil {
		t.Fatal(err)
	}

	// slurmstepd runs it with the task's environment, no arguments.
	rows := prologRows()
	for _, c := range []struct {
		name  string
		env   map[string]string
		ranks bool
	}{{"step task", rows[1].env, true}, {"batch step", rows[0].env, false}} {
		env := maps.Clone(c.env)
		env["GOMEMLIMIT"] = "8G"
		env[TaskPrologEnv] = "bogus" // one report
		cmd := exec.Command(wrapper)
		cmd.Env = cliEnv(env)
		cmd.Dir = t.TempDir()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, stderr.String())
		}
		got := slurmstepdApply(env, stdout.String())
		ca := got[carrier.EnvVar]
		if got["NEMO_LENS_RUN_ID"] != "3" || got["OTEL_SERVICE_NAME"] != "cluster-jobs" || got["NEMO_LENS_ENABLED"] != "true" ||
			got["GOMEMLIMIT"] != "8G" || !strings.Contains(ca, "slurm.job.id=3") || strings.Contains(ca, "nv.dl.rank=1,nv.dl.world_size=2") != c.ranks {
			t.Errorf("%s: the task gets %q\nstdout %q\nstderr %q", c.name, got, stdout.String(), stderr.String())
		}
	}
	logFile := filepath.Join(logDir, "taskprolog."+strconv.Itoa(os.Getuid())+".log")
	if data, err := os.ReadFile(logFile); err != nil || strings.Count(string(data), `LENS_TASKPROLOG="bogus" is not "off"`) != 2 {
		t.Errorf("%s: %v %q; want the two tasks' reports", logFile, err, data)
	}
}
