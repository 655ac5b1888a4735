package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

func TestComponents(t *testing.T) {
	t.Parallel()
	f, err := components()
	if err != nil {
		t.Fatal(err)
	}
	for kind, names := range map[string][]string{
		"receiver":  {"otlp", "prometheus"},
		"processor": {"lens", "batch", "memory_limiter"},
		"exporter":  {"otlp_grpc", "otlp_http", "debug"},
	} {
		for _, n := range names {
			found := false
			switch kind {
			case "receiver":
				for k := range f.Receivers {
					found = found || k.String() == n
				}
			case "processor":
				for k := range f.Processors {
					found = found || k.String() == n
				}
			case "exporter":
				for k := range f.Exporters {
					found = found || k.String() == n
				}
			}
			if !found {
				t.Errorf("no %s %q", kind, n)
			}
		}
	}
	if f.Telemetry == nil {
		t.Error("no telemetry factory")
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestPipeline runs the distribution in process: OTLP/HTTP in, the lens
// processor, OTLP/HTTP out to a test server. A span of a real process
// (sleep, with a Slurm task's variables) sent with process.pid alone
// comes out with the task's job; the sender's own slurm.job.id is kept.
func TestPipeline(t *testing.T) {
	task := exec.Command("sleep", "600")
	task.Env = []string{"SLURM_JOB_ID=777", "SLURM_CLUSTER_NAME=e2e", "SLURM_PROCID=1", "SLURM_NTASKS=2", "SLURM_STEP_ID=0", "PATH=/usr/bin:/bin"}
	if err := task.Start(); err != nil {
		t.Skip("sleep:", err)
	}
	t.Cleanup(func() { task.Process.Kill(); task.Wait() })

	got := make(chan ptrace.Traces, 4)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err == nil {
			got <- req.Traces()
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
		w.Write(resp)
	}))
	defer sink.Close()

	port := freePort(t)
	config := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http: {endpoint: "127.0.0.1:%d"}
processors:
  lens: {rank_from: slurm, hostname: node1, resolve_timeout: 1s, gpu: {enabled: false}}
exporters:
  otlp_http: {endpoint: %q, compression: none, retry_on_failure: {enabled: false}}
service:
  telemetry: {metrics: {level: none}, logs: {level: warn}}
  pipelines:
    traces: {receivers: [otlp], processors: [lens], exporters: [otlp_http]}
`, port, sink.URL)
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: info(),
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs: []string{"file:" + path}, ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory()},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- col.Run(ctx) }()
	defer func() { col.Shutdown(); <-done }()

	body := fmt.Sprintf(`{"resourceSpans":[{"resource":{"attributes":[
		{"key":"process.pid","value":{"intValue":"%d"}},{"key":"service.name","value":{"stringValue":"sdk-only"}},
		{"key":"slurm.cluster.name","value":{"stringValue":"own"}}]},
		"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"step","kind":1,
		"startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}`, task.Process.Pid)
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port)
	for {
		resp, err := http.Post(url, "application/json", bytes.NewBufferString(body))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the receiver never took the span: %v", err)
		case err := <-done:
			t.Fatalf("the collector ended: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	var td ptrace.Traces
	select {
	case td = <-got:
	case <-ctx.Done():
		t.Fatal("nothing exported")
	}
	attrs := td.ResourceSpans().At(0).Resource().Attributes().AsRaw()
	for k, v := range map[string]any{"slurm.job.id": "777", "nemo.run.id": "777", "nv.dl.rank": int64(1),
		"slurm.cluster.name": "own", "host.name": "node1", "service.name": "sdk-only"} {
		if attrs[k] != v {
			t.Errorf("%s = %v, want %v (resource %v)", k, attrs[k], v, attrs)
		}
	}
	if attrs["nv.dl.job.uuid"] == nil {
		t.Errorf("no nv.dl.job.uuid: %v", attrs)
	}
}

// TestNodeConfig: the per-node configuration the release archives carry
// (examples/lens-collector.yaml) is the guide's (docs/collector.md, "A
// per-node configuration to paste"), and this distribution accepts it as
// pasted: every component is in it and every setting valid.
func TestNodeConfig(t *testing.T) {
	t.Parallel()
	example := filepath.Join("..", "..", "..", "examples", "lens-collector.yaml")
	b, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "collector.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := bytes.Cut(doc, []byte(`<a id="node-config"></a>`))
	_, block, ok2 := bytes.Cut(section, []byte("```yaml\n"))
	block, _, ok3 := bytes.Cut(block, []byte("```"))
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/collector.md: no yaml block in the node-config section")
	}
	if !bytes.Equal(block, b) {
		t.Errorf("examples/lens-collector.yaml differs from docs/collector.md's per-node configuration:\n%s\n---\n%s", b, block)
	}
	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: info(),
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs: []string{"file:" + example}, ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory()},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := col.DryRun(context.Background()); err != nil {
		t.Errorf("%s: %v", example, err)
	}
}
