// Package lenscollector runs lens-collector — the OpenTelemetry Collector
// distribution with the lens processor (collector/cmd/lens-collector, built
// by scripts/build-collector.sh into <repo>/.bin) — on loopback for the
// end-to-end tests of issue 37.
//
// StartForTest takes the test's own configuration (receivers, processors,
// exporters, pipelines) and adds one file of its own: the Collector's
// internal metrics served on a loopback port picked at start, the URL that
// tells when the Collector is ready. The test's configuration reads the
// ports picked for it as ${env:E2E_PORT_0}, ${env:E2E_PORT_1}, ...
package lenscollector

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nemolens/lens-go/e2e/internal/backend"
)

// BinEnv names the environment variable holding the binary's path.
const BinEnv = "LENS_COLLECTOR_BIN"

// BuildHint tells how to get the binary.
const BuildHint = "build it with scripts/build-collector.sh .bin (minutes when cold: the Prometheus " +
	"receiver's module graph; seconds when warm), or set " + BinEnv

// telemetryYAML serves the Collector's own metrics on the last port picked.
const telemetryYAML = `service:
  telemetry:
    logs: {level: info}
    metrics:
      level: basic
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: ${env:E2E_TELEMETRY_PORT}
`

// Collector is one running lens-collector.
type Collector struct {
	*backend.Proc
	ports []int
}

// StartForTest writes config (the test's Collector configuration) into a new
// t.TempDir(), starts lens-collector with it and with env added to its
// environment, and stops it in t.Cleanup (see backend.StartForTest: skipped
// without a binary, failed when CI=true or LENS_COLLECTOR_BIN is set).
// ports loopback ports are picked for the configuration (E2E_PORT_<i>).
func StartForTest(t testing.TB, config string, ports int, env ...string) *Collector {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	tel := filepath.Join(dir, "telemetry.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tel, []byte(telemetryYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	p := backend.StartForTest(t, BinEnv, "lens-collector", BuildHint, backend.Spec{
		WorkDir: dir,
		NPorts:  ports + 1,
		Args:    func([]int) []string { return []string{"--config=file:" + cfg, "--config=file:" + tel} },
		Env: func(picked []int) []string {
			out := append([]string(nil), env...)
			for i, p := range picked[:ports] {
				out = append(out, fmt.Sprintf("E2E_PORT_%d=%d", i, p))
			}
			return append(out, "E2E_TELEMETRY_PORT="+strconv.Itoa(picked[ports]))
		},
		ReadyURL: func(picked []int) string { return "http://" + backend.HostPort(picked[ports]) + "/metrics" },
	})
	return &Collector{Proc: p, ports: p.Ports()[:ports]}
}

// Port is the i-th port picked for the configuration (E2E_PORT_<i>).
func (c *Collector) Port(i int) int { return c.ports[i] }
