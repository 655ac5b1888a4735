package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nemolens/lens-go/internal/collectortest"
)

// TestExecHungProbeKeepsSpan (issue 25 item 4): telemetry on,
// CUDA_VISIBLE_DEVICES unset, an nvidia-smi that hangs (with a child in its
// process group), a collector that answers: the span is still exported,
// without host.gpu.count, stderr says so, and no process of the probe
// outlives lens. On 85caa10 lens waited out the whole flush for the probe
// and exported nothing.
func TestExecHungProbeKeepsSpan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	smi := "#!/bin/sh\nsleep 3600 &\necho $! > '" + pidFile + ".tmp'\nmv '" + pidFile + ".tmp' '" + pidFile + "'\nwait\n"
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(smi), 0o755); err != nil {
		t.Fatal(err)
	}
	c := collectortest.NewHTTP(t, collectortest.OK)
	env := telemetryEnv(c.Endpoint, "http/protobuf", map[string]string{
		"PATH":                    dir + ":" + os.Getenv("PATH"),
		"LENS_NVIDIA_PROCFS":      filepath.Join(dir, "gpus"), // no driver tree: nvidia-smi decides
		"OTEL_BSP_EXPORT_TIMEOUT": "60000",
	})
	r := runBin(t, env, "", "exec", "--flush-timeout", "2s", "--", "true")
	if r.code != 0 {
		t.Fatalf("lens exec: %v", r)
	}
	span := exportedSpan(t, c)
	if span.GetName() != "lens exec true" {
		t.Errorf("span %q", span.GetName())
	}
	for _, req := range c.TraceRequests() {
		for _, rs := range req.GetResourceSpans() {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.GetKey() == "host.gpu.count" || strings.HasPrefix(kv.GetKey(), "nv.gpu.") {
					t.Errorf("the resource has %s from a probe that never answered", kv.GetKey())
				}
			}
		}
	}
	if !strings.Contains(r.stderr, "GPU probe") || !strings.Contains(r.stderr, "without host.gpu.count") {
		t.Errorf("stderr does not say that the span went without the GPU attributes:\n%s", r.stderr)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the fake nvidia-smi never ran: %v", err)
	}
	child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	// lens has exited: it waited for the probe's group to be killed. A
	// killed child not yet reaped by init is a zombie, not a live process.
	for deadline := time.Now().Add(guard); ; time.Sleep(time.Millisecond) {
		if st := procState(child); st == "" || st == "Z" || st == "X" {
			break
		} else if time.Now().After(deadline) {
			_ = syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("the probe's child (pid %d) outlived lens, state %q", child, st)
		}
	}
}
