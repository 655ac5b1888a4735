//go:build linux

package supervise

import (
	"os"
	"testing"
)

// TestExitUsage: the Exit of a command that ran carries the rusage of the
// wait4 that reaped it: the CPU time it spent and its peak RSS.
func TestExitUsage(t *testing.T) {
	t.Parallel()
	// A shell loop: some milliseconds of user CPU, never none.
	p, err := Start(&Command{
		Args: []string{"/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"},
		Env:  os.Environ(), Mode: ModeDirect,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	exit := p.Wait()
	if exit.Status() != 0 {
		t.Fatalf("exit %v", exit)
	}
	if exit.Usage == nil {
		t.Fatal("Exit.Usage is nil")
	}
	if cpu := exit.Usage.Utime.Nano() + exit.Usage.Stime.Nano(); cpu <= 0 {
		t.Errorf("CPU time %d ns, want > 0", cpu)
	}
	if exit.Usage.Maxrss <= 0 {
		t.Errorf("Maxrss %d, want > 0", exit.Usage.Maxrss)
	}
}
