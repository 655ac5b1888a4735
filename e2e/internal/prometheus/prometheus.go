// Package prometheus runs a real Prometheus 3.x on loopback for the
// end-to-end tests and queries its HTTP API the way a Grafana dashboard does.
//
// The binary is built from Go modules by scripts/build-backends.sh (module
// tools/prometheus, github.com/prometheus/prometheus v0.316.0 = Prometheus
// 3.16.0, built with -tags remove_all_sd: no service-discovery plugins, and
// without the web UI assets; the API is complete). Start runs it with
// ConfigYAML, the OTLP receiver on (--web.enable-otlp-receiver), its TSDB in
// the work directory and its one listener on 127.0.0.1 at a port picked at
// start.
//
// LabelValues is the call behind a dashboard variable
// (label_values(metric, label)); Query is an instant PromQL query.
package prometheus

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/e2e/internal/backend"
)

// ConfigYAML is the configuration Start writes to <workDir>/prometheus.yml.
//
//go:embed prometheus.yml
var ConfigYAML []byte

// BinEnv names the environment variable holding the binary's path.
const BinEnv = "PROMETHEUS_BIN"

// BuildHint tells how to get the binary.
const BuildHint = "build it with scripts/build-backends.sh (minutes when cold, seconds when warm), " +
	"or set " + BinEnv + " to a Prometheus 3.x binary"

// Prometheus is one running Prometheus.
type Prometheus struct {
	*backend.Proc
	port int
}

func spec(workDir string) backend.Spec {
	return backend.Spec{
		WorkDir: workDir,
		NPorts:  1,
		Args: func(ports []int) []string {
			return []string{
				"--config.file=" + filepath.Join(workDir, "prometheus.yml"),
				"--storage.tsdb.path=" + filepath.Join(workDir, "data"),
				"--web.listen-address=" + backend.HostPort(ports[0]),
				"--web.enable-otlp-receiver",
			}
		},
		ReadyURL: func(ports []int) string { return "http://" + backend.HostPort(ports[0]) + "/-/ready" },
	}
}

// StartForTest writes ConfigYAML into a new t.TempDir(), starts Prometheus
// there and stops it in t.Cleanup (see backend.StartForTest: skipped without
// a binary, failed when CI=true or PROMETHEUS_BIN is set).
func StartForTest(t testing.TB) *Prometheus {
	t.Helper()
	return startForTest(t, ConfigYAML)
}

// StartScrapingForTest is StartForTest with one scrape job more, job,
// that scrapes each target ("host:port", path /metrics) every second: an
// exporter's series (DCGM exporter's, say) beside the OTLP ones.
func StartScrapingForTest(t testing.TB, job string, targets ...string) *Prometheus {
	t.Helper()
	quoted := make([]string, len(targets))
	for i, target := range targets {
		quoted[i] = strconv.Quote(target)
	}
	cfg := fmt.Sprintf("%s\nscrape_configs:\n  - job_name: %q\n    scrape_interval: 1s\n    scrape_timeout: 1s\n    static_configs:\n      - targets: [%s]\n",
		ConfigYAML, job, strings.Join(quoted, ", "))
	return startForTest(t, []byte(cfg))
}

func startForTest(t testing.TB, cfg []byte) *Prometheus {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	p := backend.StartForTest(t, BinEnv, "prometheus", BuildHint, spec(dir))
	return &Prometheus{Proc: p, port: p.Ports()[0]}
}

// URL is the base URL of the HTTP API ("http://127.0.0.1:N").
func (p *Prometheus) URL() string { return "http://" + backend.HostPort(p.port) }

// OTLPMetricsURL is the OTLP/HTTP metrics endpoint, for
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT (protocol http/protobuf).
func (p *Prometheus) OTLPMetricsURL() string { return p.URL() + "/api/v1/otlp/v1/metrics" }

// Sample is one series of an instant vector: its labels (with __name__) and
// its value as Prometheus prints it.
type Sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"` // [unix seconds, "value"]
}

// ValueString is the sample's value as Prometheus prints it ("3").
func (s Sample) ValueString() string { v, _ := s.Value[1].(string); return v }

type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

func (p *Prometheus) api(ctx context.Context, path string, q url.Values, out any) error {
	u := p.URL() + path + "?" + q.Encode()
	status, body, err := p.Get(ctx, u)
	if err != nil {
		return fmt.Errorf("prometheus: GET %s: %w", u, err)
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		return fmt.Errorf("prometheus: GET %s: HTTP %d: %s %s (%v): %s", u, status, r.ErrorType, r.Error, err, backend.Snippet(body))
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		return fmt.Errorf("prometheus: GET %s: data: %w: %s", u, err, backend.Snippet(r.Data))
	}
	return nil
}

// LabelValues is GET /api/v1/label/<label>/values with one match[] per
// matcher: what Grafana runs for a variable defined as
// label_values(<matcher>, <label>).
func (p *Prometheus) LabelValues(ctx context.Context, label string, matchers ...string) ([]string, error) {
	q := url.Values{}
	for _, m := range matchers {
		q.Add("match[]", m)
	}
	var vals []string
	err := p.api(ctx, "/api/v1/label/"+url.PathEscape(label)+"/values", q, &vals)
	return vals, err
}

// Query is the instant query GET /api/v1/query?query=<promql> (at the
// server's now); it fails unless the result is a vector.
func (p *Prometheus) Query(ctx context.Context, promql string) ([]Sample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := p.api(ctx, "/api/v1/query", url.Values{"query": {promql}}, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("prometheus: %s: result type %q, want vector", promql, data.ResultType)
	}
	var out []Sample
	if err := json.Unmarshal(data.Result, &out); err != nil {
		return nil, fmt.Errorf("prometheus: %s: %w", promql, err)
	}
	return out, nil
}
