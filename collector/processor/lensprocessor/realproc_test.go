//go:build linux

package lensprocessor

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestRealProcPidfd: with the real /proc, a cached process is checked by
// its pidfd; once it is reaped the entry serves nothing.
func TestRealProcPidfd(t *testing.T) {
	t.Parallel()
	if fd := openPidfd(os.Getpid()); fd < 0 {
		t.Skip("no pidfd_open on this kernel")
	} else {
		closePidfd(fd)
	}
	cmd := exec.Command("sleep", "600")
	cmd.Env = []string{"SLURM_JOB_ID=31337", "SLURM_CLUSTER_NAME=real", "PATH=/usr/bin:/bin"}
	if err := cmd.Start(); err != nil {
		t.Skip("sleep:", err)
	}
	reaped := false
	t.Cleanup(func() {
		if !reaped {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	cfg := createDefaultConfig()
	cfg.Hostname = node
	cfg.ResolveTimeout = time.Minute // a hang guard
	cfg.GPU.Enabled = false
	p := newLensProcessor(cfg, zap.NewNop())
	if !p.usePidfd {
		t.Fatal("proc_root /proc does not use pidfds")
	}
	own := map[string]any{"process.pid": int64(cmd.Process.Pid)}
	if got := stamped(t, p, own); got["slurm.job.id"] != "31337" || got["slurm.cluster.name"] != "real" {
		t.Fatalf("live child: %v", got)
	}
	if c, ok := p.cache.get(cmd.Process.Pid, nil); !ok || c.pidfd < 0 {
		t.Fatalf("cached %+v, %v: want a pidfd", c, ok)
	}
	if got := stamped(t, p, own); got["slurm.job.id"] != "31337" {
		t.Fatalf("cached child: %v", got)
	}
	cmd.Process.Kill()
	cmd.Wait()
	reaped = true
	if got := stamped(t, p, own); len(got) != 1 {
		t.Errorf("reaped child: %v, want the resource as sent", got)
	}
	if p.cache.len() != 0 {
		t.Errorf("the reaped child's entry is kept")
	}
}
