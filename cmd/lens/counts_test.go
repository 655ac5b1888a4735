package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/collectortest"
)

// The counts lens prints add up to what the collector holds
// (docs/tracing.md#export-counts).

// TestBatchPartialSuccessCounts: a collector that keeps the spans and
// answers an OTLP partial success (3 of every batch of 10 rejected): lens
// emit-spans and lens reckon count the rest as exported, the rejected as
// rejected, with the collector's message, and exit 3 (not 1: a rerun would
// send the exported spans again); the exported count is what the collector
// holds. On edd0320: "0 of 50 spans exported (50 failed, 0 dropped)", exit 1.
func TestBatchPartialSuccessCounts(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"grpc", "http/protobuf"} {
		t.Run(protocol+"/emit-spans", func(t *testing.T) {
			t.Parallel()
			col := collectortest.New(t, protocol, collectortest.OK)
			col.Reject(3, "span too large")
			env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": protocol, "OTEL_EXPORTER_OTLP_ENDPOINT": col.Endpoint,
				"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "10"}
			r := runIn(t, env, "", append([]string{"emit-spans", "--flush-timeout", "1m"}, bigSet(50, false)...)...)
			if r.code != statusRejected || !strings.Contains(r.stderr, "35 of 50 spans exported (0 failed, 0 dropped, 15 rejected)") ||
				!strings.Contains(r.stderr, "span too large") || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("%v; want exit 3 and one line: 35 exported, 15 rejected, the collector's message", r)
			}
			if held := col.Held(); held != 35 {
				t.Errorf("the collector holds %d spans, lens says 35", held)
			}
		})
		t.Run(protocol+"/reckon", func(t *testing.T) {
			t.Parallel()
			col := collectortest.New(t, protocol, collectortest.OK)
			col.Reject(1, "no thanks")
			sacct, _ := fakeSacct(t, fakeSacctLines("5", 3))
			env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": protocol, "OTEL_EXPORTER_OTLP_ENDPOINT": col.Endpoint,
				"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "5"}
			r := runReckon(t, env, sacct, "5")
			// 10 spans (3 steps + 7), in 2 batches of 5: 2 rejected.
			if r.code != statusRejected || !strings.Contains(r.stderr, "8 of 10 spans exported (0 failed, 0 dropped, 2 rejected)") ||
				!strings.Contains(r.stderr, "no thanks") {
				t.Errorf("exit %d, stderr %q; want exit 3, 8 exported, 2 rejected, the collector's message", r.code, r.stderr)
			}
			if held := col.Held(); held != 8 {
				t.Errorf("the collector holds %d spans, lens says 8", held)
			}
		})
	}
}

// TestBatchPartialSuccessWarning: a partial success that rejects nothing
// (a warning) exports every span: exit 0, the collector's message on
// stderr once.
func TestBatchPartialSuccessWarning(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"grpc", "http/protobuf"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			col := collectortest.New(t, protocol, collectortest.OK)
			col.Reject(0, "slow down")
			env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": protocol, "OTEL_EXPORTER_OTLP_ENDPOINT": col.Endpoint,
				"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "10"}
			r := runIn(t, env, "", append([]string{"emit-spans"}, bigSet(20, false)...)...)
			if r.code != 0 || strings.Count(r.stderr, "slow down") != 1 || col.Held() != 20 {
				t.Errorf("%v, %d held; want exit 0, the warning once, 20 held", r, col.Held())
			}
		})
	}
}

// TestExecPartialSuccessSaid: lens exec whose span the collector rejects
// says so on stderr, once, and keeps its command's status.
func TestExecPartialSuccessSaid(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"grpc", "http/protobuf"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			col := collectortest.New(t, protocol, collectortest.OK)
			col.Reject(1, "rank span refused")
			env := telemetryEnv(col.Endpoint, protocol, nil)
			env[helperEnvName] = "exit=4"
			r := runBin(t, env, "", "exec", "--", self(t))
			if r.code != 4 || !strings.Contains(r.stderr, "lens exec: telemetry: the collector rejected 1 of 1 spans") ||
				!strings.Contains(r.stderr, "rank span refused") {
				t.Errorf("%v; want the command's exit status 4 and the rejection on stderr", r)
			}
		})
	}
}

// htmlServer answers every request with 200 OK and an HTML page.
func htmlServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!DOCTYPE html><html><body>Please log in</body></html>"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestNotOTLPAnswerFails: an endpoint that answers every POST with 200 OK
// and an HTML page is a failure, named (the endpoint, the status, the
// Content-Type): lens emit-spans exits 1, lens exec says so on stderr and
// keeps its command's status. On edd0320 both exited 0 with nothing on
// stderr.
func TestNotOTLPAnswerFails(t *testing.T) {
	t.Parallel()
	srv := htmlServer(t)
	env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}
	r := runIn(t, env, "", "emit-spans", "--span", "a,1700000000,1700000001")
	for _, want := range []string{"0 of 1 spans exported (1 failed, 0 dropped, 0 rejected)", srv.URL + "/v1/traces", "not an OTLP response", "200 OK", "text/html"} {
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("emit-spans: %v; want exit 1 and %q", r, want)
		}
	}

	r = runBin(t, telemetryEnv(srv.URL, "http/protobuf", nil), "", "exec", "--", "true")
	if r.code != 0 || !strings.Contains(r.stderr, "lens exec: telemetry shutdown:") || !strings.Contains(r.stderr, "not an OTLP response") ||
		!strings.Contains(r.stderr, srv.URL) || !strings.Contains(r.stderr, "text/html") {
		t.Errorf("exec: %v; want exit 0 and the failure named on stderr", r)
	}
}
