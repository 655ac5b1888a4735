// Package otelcol runs the end-to-end tests' log receiver — an OpenTelemetry
// Collector built from Go modules (tools/jaeger/otelcol: OTLP receiver,
// contrib file exporter, healthcheckv2) — on loopback, and reads back the
// log records it stored.
//
// Start writes ConfigYAML to the work directory and runs the collector with
// its OTLP/HTTP receiver on a port picked at start; the file exporter
// appends one OTLP JSON object (an ExportLogsServiceRequest) per line to
// <workDir>/logs.jsonl. Records reads that file back as resource + record
// pairs.
package otelcol

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/backend"
)

// ConfigYAML is the configuration Start writes to <workDir>/otelcol.yaml.
//
//go:embed config.yaml
var ConfigYAML []byte

// BinEnv names the environment variable holding the binary's path.
const BinEnv = "OTELCOL_BIN"

// BuildHint tells how to get the binary.
const BuildHint = "build it with scripts/build-backends.sh (it shares Jaeger's module graph: " +
	"seconds once Jaeger is built), or set " + BinEnv

// Collector is one running log receiver.
type Collector struct {
	*backend.Proc
	otlpHTTP int
	file     string
}

// StartForTest starts the collector in a new t.TempDir() and stops it in
// t.Cleanup (see backend.StartForTest: skipped without a binary, failed when
// CI=true or OTELCOL_BIN is set).
func StartForTest(t testing.TB) *Collector {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "otelcol.yaml")
	if err := os.WriteFile(cfg, ConfigYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "logs.jsonl")
	p := backend.StartForTest(t, BinEnv, "otelcol", BuildHint, backend.Spec{
		WorkDir: dir,
		NPorts:  2,
		Args:    func([]int) []string { return []string{"--config=file:" + cfg} },
		Env: func(ports []int) []string {
			return []string{
				"E2E_OTLP_HTTP_PORT=" + strconv.Itoa(ports[0]),
				"E2E_HEALTH_PORT=" + strconv.Itoa(ports[1]),
				"E2E_LOGS_FILE=" + file,
			}
		},
		ReadyURL: func(ports []int) string { return "http://" + backend.HostPort(ports[1]) + "/status" },
	})
	return &Collector{Proc: p, otlpHTTP: p.Ports()[0], file: file}
}

// OTLPLogsURL is the OTLP/HTTP logs endpoint, for
// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT (protocol http/protobuf).
func (c *Collector) OTLPLogsURL() string {
	return "http://" + backend.HostPort(c.otlpHTTP) + "/v1/logs"
}

// File is the path the file exporter writes.
func (c *Collector) File() string { return c.file }

// Value is an OTLP JSON AnyValue, reduced to the scalar kinds (int64 comes
// as a decimal string in OTLP JSON).
type Value struct {
	Str    *string  `json:"stringValue,omitempty"`
	Int    *string  `json:"intValue,omitempty"`
	Bool   *bool    `json:"boolValue,omitempty"`
	Double *float64 `json:"doubleValue,omitempty"`
}

// Typed renders v as "type:value" ("string:abc", "int:3"), the form the
// tests compare.
func (v Value) Typed() string {
	switch {
	case v.Str != nil:
		return "string:" + *v.Str
	case v.Int != nil:
		return "int:" + *v.Int
	case v.Bool != nil:
		return "bool:" + strconv.FormatBool(*v.Bool)
	case v.Double != nil:
		return "double:" + strconv.FormatFloat(*v.Double, 'g', -1, 64)
	}
	return "other"
}

type keyValue struct {
	Key   string `json:"key"`
	Value Value  `json:"value"`
}

// Record is one stored log record with the resource it came with.
type Record struct {
	Resource   map[string]Value
	Body       Value
	Attributes map[string]Value
	Severity   string
	Scope      string
}

type logsLine struct {
	ResourceLogs []struct {
		Resource struct {
			Attributes []keyValue `json:"attributes"`
		} `json:"resource"`
		ScopeLogs []struct {
			Scope struct {
				Name string `json:"name"`
			} `json:"scope"`
			LogRecords []struct {
				SeverityText string     `json:"severityText"`
				Body         Value      `json:"body"`
				Attributes   []keyValue `json:"attributes"`
			} `json:"logRecords"`
		} `json:"scopeLogs"`
	} `json:"resourceLogs"`
}

func toMap(kvs []keyValue) map[string]Value {
	m := make(map[string]Value, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

// Records parses the exporter's file as it is now (a missing file is no
// records yet; a partly written last line is left for the next call).
func (c *Collector) Records() ([]Record, error) {
	b, err := os.ReadFile(c.file)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if i := bytes.LastIndexByte(b, '\n'); i < len(b)-1 {
		b = b[:i+1] // the last line is still being written
	}
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var l logsLine
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, fmt.Errorf("otelcol: %s line %d: %w: %s", c.file, n, err, backend.Snippet(line))
		}
		for _, rl := range l.ResourceLogs {
			res := toMap(rl.Resource.Attributes)
			for _, sl := range rl.ScopeLogs {
				for _, lr := range sl.LogRecords {
					out = append(out, Record{Resource: res, Body: lr.Body, Attributes: toMap(lr.Attributes),
						Severity: lr.SeverityText, Scope: sl.Scope.Name})
				}
			}
		}
	}
	return out, sc.Err()
}

// WaitRecords polls Records every backend.PollInterval until done(records)
// holds, and returns the records; it gives up when ctx ends (30 s when ctx
// has no deadline). The exporter flushes its file every 100 ms, after the
// sender's export has returned, so a test must wait for the records.
func (c *Collector) WaitRecords(ctx context.Context, done func([]Record) bool) ([]Record, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	tick := time.NewTicker(backend.PollInterval)
	defer tick.Stop()
	for {
		recs, err := c.Records()
		if err != nil {
			return nil, err
		}
		if done(recs) {
			return recs, nil
		}
		select {
		case <-ctx.Done():
			return recs, fmt.Errorf("otelcol: %d records in %s, not the ones awaited: %w", len(recs), c.file, ctx.Err())
		case <-tick.C:
		}
	}
}

// String is v.Typed(), so that records print readably.
func (v Value) String() string { return v.Typed() }
