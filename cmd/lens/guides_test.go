//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/internal/mdblock"
)

// guideRun is what a pasted block did: stdout, stderr and the exit status.
type guideRun struct {
	stdout, stderr string
	code           int
}

// runGuideScript runs script with shell in a new directory, with the built
// lens (and only it) first in PATH and env added, the way a newcomer who
// installed lens pastes a block.
func runGuideScript(t *testing.T, shell, script string, env map[string]string) guideRun {
	t.Helper()
	bin := t.TempDir()
	if err := os.Symlink(lensBin, filepath.Join(bin, "lens")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shell, "-c", script)
	cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", shell, err)
	}
	return guideRun{stdout.String(), stderr.String(), code}
}

// transcript splits a block written as a terminal session ("$ COMMAND"
// lines, each followed by what it prints) into the script of its commands
// and the lines of output it shows.
func transcript(b mdblock.Block) (script string, want []string) {
	for _, line := range strings.Split(strings.TrimSuffix(b.Text, "\n"), "\n") {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			script += cmd + "\n"
		} else {
			want = append(want, line)
		}
	}
	return script, want
}

// matchTranscript reports whether got (lines) is want, where a want line
// starting with "…" stands for any number of lines.
func matchTranscript(got, want []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.HasPrefix(want[0], "…") {
		for i := 0; i <= len(got); i++ {
			if matchTranscript(got[i:], want[1:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && got[0] == want[0] && matchTranscript(got[1:], want[1:])
}

// TestGuides runs the blocks of README.md and docs/ marked
// <!-- test: NAME --> (internal/mdblock, docs/testing.md#documented-commands)
// that are cheap and need neither a cluster nor the network, as written, and
// checks what the text around them says they do. Expected values come from
// the environment the test sets, not from lens.
func TestGuides(t *testing.T) {
	t.Parallel()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	// A carrier no shell may reinterpret: quotes, $(…), a backtick, a newline.
	hostile := "a=1,q='x\"y $(touch pwned) `touch pwned2`\nz=2"
	shells := []string{"sh", "bash", "dash", "zsh"}

	for _, c := range []struct {
		file, block string
		check       func(t *testing.T, b mdblock.Block)
	}{
		// README: "this very file": the README's copy is the example the
		// end-to-end tests submit and run.
		{"README.md", "readme-train-sbatch", func(t *testing.T, b mdblock.Block) {
			sameAsFile(t, b, "examples/train.sbatch")
		}},
		{"docs/recipes.md", "readme-k8s-entrypoint", func(t *testing.T, b mdblock.Block) {
			sameAsFile(t, b, "examples/k8s-entrypoint.sh")
		}},
		// cli.md#lens-env: eval reproduces VALUE exactly in sh, bash, dash
		// and zsh: the inherited carrier byte for byte, then the Slurm
		// attributes it lacks and, stage task, host.name; outside a job
		// the carrier and host.name only.
		{"docs/cli.md", "cli-env-eval", func(t *testing.T, b mdblock.Block) {
			for _, shell := range shells {
				if !haveShell(t, shell) {
					continue
				}
				for _, e := range []struct {
					carrier, job string
				}{{hostile, "7001"}, {hostile, ""}, {"", ""}} {
					env := map[string]string{"OTEL_RESOURCE_ATTRIBUTES": e.carrier, "SLURM_CLUSTER_NAME": "c1"}
					if e.job != "" {
						env["SLURM_JOB_ID"] = e.job
					}
					r := runGuideScript(t, shell, "set -eu\n"+b.Text+`printf '%s\n--files--\n' "$OTEL_RESOURCE_ATTRIBUTES"; ls`, env)
					value, files, _ := strings.Cut(r.stdout, "\n--files--\n")
					if r.code != 0 || files != "" {
						t.Errorf("%s, %v: %v (files made: %q)", shell, e, r, files)
						continue
					}
					var want string
					if e.carrier != "" {
						want = e.carrier + ","
					}
					if !strings.HasPrefix(value, want) {
						t.Errorf("%s, %v: %q does not start with the inherited carrier %q", shell, e, value, want)
						continue
					}
					added := strings.Split(value[len(want):], ",")
					if !slices.Contains(added, "host.name="+host) {
						t.Errorf("%s, %v: %q lacks host.name=%s", shell, e, value, host)
					}
					if slurm := slices.Contains(added, "slurm.job.id="+e.job); slurm != (e.job != "") {
						t.Errorf("%s, %v: %q; want slurm.job.id=%s: %v", shell, e, value, e.job, e.job != "")
					}
					if e.job == "" && len(added) != 1 {
						t.Errorf("%s, %v: outside a Slurm job %q adds more than host.name", shell, e, value)
					}
					if e.job == "" && !strings.Contains(r.stderr, "note:") {
						t.Errorf("%s, %v: no note on stderr outside a Slurm job: %q", shell, e, r.stderr)
					}
				}
			}
		}},
		// exec.md#gomemlimit: a GOMEMLIMIT Go rejects stops lens with the
		// runtime's message and status 2, and the command never runs.
		{"docs/exec.md", "exec-gomemlimit-transcript", func(t *testing.T, b mdblock.Block) {
			script, want := transcript(b)
			stub := t.TempDir()
			ran := filepath.Join(stub, "ran")
			if err := os.WriteFile(filepath.Join(stub, "python3"), []byte("#!/bin/sh\ntouch "+ran+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			r := runGuideScript(t, "bash", "exec 2>&1\nPATH=$PATH:"+stub+"\n"+script, nil)
			if got := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"); r.code != 0 || !matchTranscript(got, want) {
				t.Errorf("printed (status %d):\n%s\nwant:\n%s", r.code, r.stdout, strings.Join(want, "\n"))
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("the command ran")
			}
		}},
		// exec.md#gomemlimit: the check unsets a value Go rejects, says so,
		// and lens and the command run; a value Go accepts reaches the
		// command unchanged.
		{"docs/exec.md", "exec-gomemlimit-check", func(t *testing.T, b mdblock.Block) {
			for _, shell := range []string{"sh", "bash"} {
				for value, want := range map[string]string{"8G": "<unset>", "-1": "<unset>", "8GiB": "8GiB", "off": "off"} {
					r := runGuideScript(t, shell, "set -eu\n"+b.Text+`lens exec -- sh -c 'printf "%s" "${GOMEMLIMIT-<unset>}"'`,
						map[string]string{"GOMEMLIMIT": value})
					if r.code != 0 || r.stdout != want {
						t.Errorf("%s, GOMEMLIMIT=%s: %v; want the command to see %s", shell, value, r, want)
					}
					said := strings.Contains(r.stderr, "GOMEMLIMIT="+value+" is not a value Go accepts; unset")
					if said != (want == "<unset>") {
						t.Errorf("%s, GOMEMLIMIT=%s: stderr %q", shell, value, r.stderr)
					}
				}
			}
		}},
		// compatibility.md#divergence-slurm-local-integers: each note line
		// is printed by lens detect --only slurm --explain in a job whose
		// SLURM_NTASKS is the value the line quotes.
		{"docs/compatibility.md", "compat-slurm-int-notes", func(t *testing.T, b mdblock.Block) {
			lines := strings.Split(strings.TrimSuffix(b.Text, "\n"), "\n")
			for _, line := range lines {
				_, rest, _ := strings.Cut(line, "SLURM_NTASKS=")
				quoted, err := strconv.QuotedPrefix(rest)
				if err != nil {
					t.Fatalf("%v: %q quotes no SLURM_NTASKS value: %v", b, line, err)
				}
				value, _ := strconv.Unquote(quoted)
				r := runGuideScript(t, "sh", "lens detect --only slurm --explain",
					map[string]string{"SLURM_JOB_ID": "1", "SLURM_NTASKS": value})
				notes := strings.Split(r.stdout, "\n  ")
				if r.code != 0 || !slices.Contains(notes, line) && !slices.Contains(notes, line+"\n") {
					t.Errorf("SLURM_NTASKS=%s: lens detect printed (status %d):\n%s\nwant the note:\n%s", quoted, r.code, r.stdout, line)
				}
			}
			if len(lines) < 2 {
				t.Errorf("%v: only %d notes", b, len(lines))
			}
		}},
	} {
		t.Run(c.block, func(t *testing.T) {
			t.Parallel()
			blocks, err := mdblock.Named(repoFile(c.file), c.block)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range blocks {
				c.check(t, b)
			}
		})
	}
}

// sameAsFile checks that block b is the repository file name, byte for byte.
func sameAsFile(t *testing.T, b mdblock.Block, name string) {
	t.Helper()
	data, err := os.ReadFile(repoFile(name))
	if err != nil {
		t.Fatal(err)
	}
	if b.Text != string(data) {
		t.Errorf("%v is not %s as it is:\n%s\nwant:\n%s", b, name, b.Text, data)
	}
}

// haveShell reports whether shell is installed. A missing one is logged, or
// fails the test under CI (scripts/test.sh's prereq stage installs zsh; the
// others are Debian's own).
func haveShell(t *testing.T, shell string) bool {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		if os.Getenv("CI") == "true" {
			t.Errorf("%s is not installed (scripts/test.sh's prereq stage installs it): %v", shell, err)
		} else {
			t.Logf("%s: not installed, not checked", shell)
		}
		return false
	}
	return true
}
