//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/internal/collectortest"
)

// TestExecBlockingFiles (issue 35): every file lens exec and lens detect
// read in a task's path, replaced by a FIFO — without a writer, and with a
// writer that never writes — never holds them: lens exec runs the command,
// exports its span and exits with the command's status; lens detect --only
// gpus answers; stderr names the file and says it is a FIFO. On edd0320 a
// FIFO in place of the driver's information file held lens exec forever.
// liveRun fails the test when lens has not returned within liveness.
func TestExecBlockingFiles(t *testing.T) {
	t.Parallel()
	for _, writer := range []bool{false, true} {
		for _, row := range []struct {
			name string
			// env returns the variables that point lens at fifo (a FIFO)
			// from dir.
			env  func(t *testing.T, dir, fifo string) map[string]string
			file string // the file's path relative to dir, made a FIFO
			// exported: the span reaches the collector (else the
			// telemetry is off for a bad setting, and stderr says so).
			exported bool
		}{
			{"driver information", func(t *testing.T, dir, _ string) map[string]string {
				return map[string]string{"LENS_NVIDIA_PROCFS": filepath.Join(dir, "gpus"), "CUDA_VISIBLE_DEVICES": "0"}
			}, "gpus/0000:07:00.0/information", true},
			{"OTEL_EXPORTER_OTLP_CERTIFICATE", func(t *testing.T, _, fifo string) map[string]string {
				return map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": fifo, "CUDA_VISIBLE_DEVICES": ""}
			}, "ca.pem", false},
			{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", func(t *testing.T, dir, fifo string) map[string]string {
				cert := filepath.Join(dir, "cert.pem")
				if err := os.WriteFile(cert, []byte("-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": fifo, "CUDA_VISIBLE_DEVICES": ""}
			}, "key.pem", false},
		} {
			name := row.name + "/no writer"
			if writer {
				name = row.name + "/silent writer"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				copyDir(t, testdataPath(t, "gpu/gpus"), filepath.Join(dir, "gpus"), nil)
				fifo := filepath.Join(dir, filepath.FromSlash(row.file))
				if err := os.Remove(fifo); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				mkfifo(t, fifo)
				if writer {
					// O_RDWR opens a FIFO at once and holds a writer that
					// never writes: a reader that got past the open would
					// wait forever.
					f, err := os.OpenFile(fifo, os.O_RDWR, 0)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { f.Close() })
				}
				c := collectortest.NewHTTP(t, collectortest.OK)
				env := telemetryEnv(c.Endpoint, "http/protobuf", row.env(t, dir, fifo))
				r := liveRun(t, env, "exec", "--flush-timeout", "1m", "--", "sh", "-c", "exit 7")
				if r.code != 7 {
					t.Errorf("lens exec: status %d, want the command's 7; stderr %q", r.code, r.stderr)
				}
				if !strings.Contains(r.stderr, fifo) || !strings.Contains(r.stderr, "not a regular file (a FIFO)") {
					t.Errorf("stderr does not name the FIFO %s:\n%s", fifo, r.stderr)
				}
				if n := len(c.Spans()); row.exported && n != 1 {
					t.Errorf("the collector received %d spans, want 1; stderr %q", n, r.stderr)
				}
				if row.file != "gpus/0000:07:00.0/information" {
					return
				}
				r = liveRun(t, env, "detect", "--only", "gpus")
				if r.code != 0 && !strings.Contains(r.stderr, "not a regular file (a FIFO)") {
					t.Errorf("lens detect --only gpus: %v", r)
				}
			})
		}
	}
}
