package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// copyDir copies the regular files of the tree src into dst, each through
// edit (nil: unchanged), keeping their modes.
func copyDir(t *testing.T, src, dst string, edit func(path, text string) string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, _ := d.Info()
		text := string(b)
		if edit != nil {
			text = edit(rel, text)
		}
		// Under syscall.ForkLock: no process forked meanwhile keeps the
		// script open for writing (ETXTBSY, golang/go#22315).
		syscall.ForkLock.RLock()
		defer syscall.ForkLock.RUnlock()
		return os.WriteFile(target, []byte(text), info.Mode())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGPUCheckScript runs scripts/gpu-check.sh (the check for the day a
// GPU machine is lent, docs/testing.md#gpu-check) against the fake driver
// tree and nvidia-smi of testdata/gpu: they agree; an nvidia-smi or a tree
// that tells another story is a disagreement (exit 1) that names the view;
// no nvidia-smi is exit 2.
func TestGPUCheckScript(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs("../../scripts/gpu-check.sh")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		edit     func(path, text string) string
		noSMI    bool
		code     int
		mismatch []string
	}{
		{name: "agree", code: 0},
		{name: "nvidia-smi swaps the UUIDs", code: 1, mismatch: []string{"procfs uuid", "CUDA_VISIBLE_DEVICES=0 lens exec span"},
			edit: func(path, text string) string {
				if path != "bin/nvidia-smi" {
					return text
				}
				text = strings.ReplaceAll(text, testGPU0, "SWAP")
				text = strings.ReplaceAll(text, testGPU1, testGPU0)
				return strings.ReplaceAll(text, "SWAP", testGPU1)
			}},
		{name: "the tree has another bus id", code: 1, mismatch: []string{"procfs pci_bus_id"},
			edit: func(path, text string) string { return strings.Replace(text, "0000:0f:00.0", "0000:0e:00.0", 1) }},
		{name: "no nvidia-smi", code: 2, noSMI: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			copyDir(t, testdataPath(t, "gpu"), dir, c.edit)
			path := filepath.Join(dir, "bin") + ":" + os.Getenv("PATH")
			if c.noSMI {
				path = "/usr/bin:/bin"
			}
			cmd := exec.Command(script, lensBin)
			cmd.Env = []string{"PATH=" + path, "LENS_NVIDIA_PROCFS=" + filepath.Join(dir, "gpus")}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			code := 0
			if ee, ok := errors.AsType[*exec.ExitError](err); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code {
				t.Fatalf("exit %d, want %d:\n%s", code, c.code, out.String())
			}
			for _, m := range c.mismatch {
				if !strings.Contains(out.String(), "MISMATCH "+m) {
					t.Errorf("no MISMATCH line for %s:\n%s", m, out.String())
				}
			}
			if c.code == 0 && (strings.Contains(out.String(), "MISMATCH") || strings.Count(out.String(), "\nok ") < 19) {
				t.Errorf("agreement without every check:\n%s", out.String())
			}
		})
	}
}
