//go:build unix

package main

import (
	"testing"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
)

// TestExecRoleAfterAttr: --role is applied after --attr, as the usage line
// says: it sets nv.dl.role whatever --attr nv.dl.role=… says, and wherever
// the flags stand on the command line.
func TestExecRoleAfterAttr(t *testing.T) {
	t.Parallel()
	for name, flags := range map[string][]string{
		"attr first": {"--attr", "nv.dl.role=worker", "--role", "trainer"},
		"role first": {"--role", "trainer", "--attr", "nv.dl.role=worker"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := environ.Map{helperEnvName: "env", carrier.EnvVar: "nv.dl.role=inherited,a=1"}
			r := runIn(t, env, "", append(append([]string{"exec"}, flags...), "--", self(t))...)
			if r.code != 0 {
				t.Fatalf("lens exec: %v", r)
			}
			if got, want := childEnviron(t, r.stdout)[carrier.EnvVar], "nv.dl.role=trainer,a=1"; got != want {
				t.Errorf("child carrier %q, want %q", got, want)
			}
		})
	}
}

// TestExecTracesDisabled: lens exec honours NEMO_LENS_TRACES_ENABLED=false:
// with telemetry enabled and the console exporter, it records no span and
// the command gets the trace context lens received, unchanged. With
// NEMO_LENS_TRACES_ENABLED=true the same run records the span and hands
// the command its context (the control).
func TestExecTracesDisabled(t *testing.T) {
	t.Parallel()
	const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, enabled := range []string{"false", "true"} {
		t.Run("NEMO_LENS_TRACES_ENABLED="+enabled, func(t *testing.T) {
			t.Parallel()
			env := helperEnv("env", map[string]string{
				"NEMO_LENS_ENABLED":        "true",
				"NEMO_LENS_TRACES_ENABLED": enabled,
				"NEMO_LENS_EXPORTER":       "console",
				"NEMO_LENS_RUN_ID":         "run1",
				"CUDA_VISIBLE_DEVICES":     "", // no GPU probe
				carrier.EnvVar:             "nv.dl.rank=3",
				"TRACEPARENT":              traceparent,
			})
			r := runBin(t, env, "", "exec", "--", self(t))
			if r.code != 0 {
				t.Fatalf("lens exec: %v", r)
			}
			spans := consoleSpans(t, r.stderr)
			child := childEnviron(t, r.stdout)["TRACEPARENT"]
			if enabled == "false" && (len(spans) != 0 || child != traceparent) {
				t.Errorf("traces disabled: %d console spans, child TRACEPARENT %q; want none and %q unchanged\nstderr: %s", len(spans), child, traceparent, r.stderr)
			}
			if enabled == "true" && (len(spans) != 1 || child == traceparent) {
				t.Errorf("traces enabled: %d console spans, child TRACEPARENT %q; want 1 span, whose context the child gets", len(spans), child)
			}
		})
	}
}
