//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoFile is the path of a file of the repository (tests run in cmd/lens).
func repoFile(name string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", name))
	if err != nil {
		panic(err)
	}
	return p
}

// gomemlimitGuard returns the lines of an example that unset a GOMEMLIMIT
// the Go runtime rejects (docs/exec.md#gomemlimit): from the comment that
// starts "# lens is a Go program:" to the line ending "esac" after it.
func gomemlimitGuard(t *testing.T, example string) string {
	t.Helper()
	data, err := os.ReadFile(repoFile(example))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "# lens is a Go program:")
	if i < 0 {
		t.Fatalf("%s has no GOMEMLIMIT check", example)
	}
	j := strings.Index(text[i:], ";; esac\n")
	j = strings.Index(text[i+j+1:], ";; esac\n") + i + j + 1 // the second case's end
	return text[i : j+len(";; esac\n")]
}

// TestExamplesSurviveGOMEMLIMIT: the examples that run lens carry the same
// GOMEMLIMIT check (the one docs/exec.md#gomemlimit shows); in sh and bash
// it unsets exactly the values Go rejects and keeps the others; and
// examples/train.sbatch (with a one-process srun) and
// examples/k8s-entrypoint.sh, run as written with GOMEMLIMIT=8G, run their
// command through the real lens, while with 8GiB the command gets it.
// On 85caa10 the examples exited 2 (fatal error: malformed GOMEMLIMIT)
// without running the command.
func TestExamplesSurviveGOMEMLIMIT(t *testing.T) {
	t.Parallel()
	guard := gomemlimitGuard(t, "examples/train.sbatch")
	for _, ex := range []string{"examples/reckon.sbatch", "examples/k8s-entrypoint.sh"} {
		if g := gomemlimitGuard(t, ex); g != guard {
			t.Errorf("%s's GOMEMLIMIT check differs from train.sbatch's:\n%s\n%s", ex, g, guard)
		}
	}
	doc, err := os.ReadFile(repoFile("docs/exec.md"))
	if err != nil {
		t.Fatal(err)
	}
	code := guard[strings.Index(guard, "m=${GOMEMLIMIT-}"):]
	if !strings.Contains(string(doc), code) {
		t.Errorf("docs/exec.md#gomemlimit does not show the examples' check:\n%s", code)
	}
	for _, shell := range []string{"sh", "bash"} {
		for value, kept := range map[string]bool{
			"": true, "off": true, "0": true, "8589934592": true, "8GiB": true, "512MiB": true, "1KiB": true, "2TiB": true, "100B": true,
			"8G": false, "8gib": false, "-1": false, "1.5GiB": false, "GiB": false, "B": false, "8Gi": false, "8 GiB": false, "8GB": false, "8KB": false,
		} {
			cmd := exec.Command(shell, "-euc", guard+`printf '%s' "${GOMEMLIMIT-<unset>}"`)
			cmd.Env = cliEnv(map[string]string{"GOMEMLIMIT": value})
			out, err := cmd.Output()
			want := value
			if !kept {
				want = "<unset>"
			}
			if err != nil || string(out) != want {
				t.Errorf("%s, GOMEMLIMIT=%q: %q, %v; want %q", shell, value, out, err, want)
			}
			// Whatever the check keeps, a Go program starts with.
			if kept {
				if r := runBin(t, map[string]string{"GOMEMLIMIT": value}, "", "--version"); r.code != 0 {
					t.Errorf("GOMEMLIMIT=%q passes the check but lens does not start: %v", value, r)
				}
			}
		}
	}
	if r := runBin(t, map[string]string{"GOMEMLIMIT": "8G"}, "", "--version"); r.code != 2 || !strings.Contains(r.stderr, "malformed GOMEMLIMIT") {
		t.Fatalf("the premise: with GOMEMLIMIT=8G lens should not start: %v", r)
	}
	// The examples as written: lens on PATH, srun running its command once.
	bin := t.TempDir()
	if err := os.Symlink(lensBin, filepath.Join(bin, "lens")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "srun"), []byte("#!/bin/sh\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	probe := `printf 'ran GOMEMLIMIT=%s\n' "${GOMEMLIMIT-<unset>}"`
	for _, c := range []struct{ shell, example string }{{"bash", "examples/train.sbatch"}, {"sh", "examples/k8s-entrypoint.sh"}} {
		for value, want := range map[string]string{"8G": "<unset>", "8GiB": "8GiB"} {
			cmd := exec.Command(c.shell, repoFile(c.example), "sh", "-c", probe)
			env := map[string]string{"GOMEMLIMIT": value, "SLURM_JOB_ID": "7", "SLURM_PROCID": "0", "SLURM_NTASKS": "1",
				"SLURM_LOCALID": "0", "JOB_COMPLETION_INDEX": "0", "NEMO_LENS_ENABLED": "false"}
			cmd.Env = append(cliEnv(env), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			cmd.Env = dropFirst(cmd.Env, "PATH=")
			cmd.Dir = t.TempDir()
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "ran GOMEMLIMIT="+want+"\n") {
				t.Errorf("%s with GOMEMLIMIT=%s: %v\n%s\nwant the command to run with GOMEMLIMIT=%s", c.example, value, err, out, want)
			}
			if value == "8G" && !strings.Contains(string(out), "GOMEMLIMIT=8G is not a value Go accepts; unset") {
				t.Errorf("%s with GOMEMLIMIT=8G says nothing about it:\n%s", c.example, out)
			}
		}
	}
}

// dropFirst removes the first entry of env with prefix (cliEnv's PATH, so
// that the one appended after it is the only one).
func dropFirst(env []string, prefix string) []string {
	for i, kv := range env {
		if strings.HasPrefix(kv, prefix) {
			return append(env[:i:i], env[i+1:]...)
		}
	}
	return env
}
