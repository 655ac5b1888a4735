//go:build heavy

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/collectortest"
)

// The batch commands at scale: 100,000 spans or steps, minutes under -race
// on a loaded machine; scripts/test.sh's heavy stage runs them
// (docs/testing.md#heavy).

// TestEmitSpans100k: 100,000 spans, flat and chained, reach a real OTLP
// receiver, every one (on 85caa10: 2,560 of 5,000, exit 1).
func TestEmitSpans100k(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("100,000 spans: not in -short")
	}
	const n = 100_000
	for _, chained := range []bool{false, true} {
		col := collectortest.New(t, "grpc", collectortest.OK)
		env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": col.Endpoint}
		r := runIn(t, env, "", append([]string{"emit-spans", "--flush-timeout", "1m"}, bigSet(n, chained)...)...)
		spans := col.Spans()
		if r.code != 0 || len(spans) != n {
			t.Fatalf("chained=%v: exit %d, %d of %d spans at the receiver; stderr %.300q", chained, r.code, len(spans), n, r.stderr)
		}
		ids := map[string]bool{}
		for _, s := range spans {
			ids[string(s.SpanId)] = true
		}
		if len(ids) != n {
			t.Errorf("chained=%v: %d distinct span ids, want %d (a span exported twice?)", chained, len(ids), n)
		}
	}
}

// TestReckon100kSteps: the spans of a job with 100,000 steps (100,007: the
// deferred, queued, allocation, batch, extern, workload and cleanup
// spans beside the steps) all reach a real OTLP receiver (on 85caa10:
// 11,776), one that accepts slowly: each of the 196 batches no sooner than
// 150 ms after the one before, 29 s or more in all, longer than the
// --flush-timeout of 20 s, which is a bound on the time without an
// accepted batch, not on the whole export (docs/tracing.md#idle-bound; on
// edd0320 the export ended after 20 s).
func TestReckon100kSteps(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("100,000 steps: not in -short")
	}
	const steps, pace, flush = 100_000, 150 * time.Millisecond, 20 * time.Second
	col := collectortest.New(t, "http/protobuf", collectortest.OK)
	col.Gate(pacedGate(pace))
	sacct, _ := fakeSacct(t, fakeSacctLines("5", steps))
	env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": col.Endpoint}
	r := runReckon(t, env, sacct, "--flush-timeout", flush.String(), "5")
	want := steps + 7
	if got := len(col.Spans()); r.code != 0 || got != want {
		t.Fatalf("exit %d, %d of %d spans at the receiver; stderr %.300q", r.code, got, want, r.stderr)
	}
	if !strings.Contains(r.stdout, fmt.Sprintf("spans %d", want)) {
		t.Errorf("stdout %q", r.stdout)
	}
	if n := col.Requests(collectortest.Traces); time.Duration(n)*pace <= flush {
		t.Errorf("%d exports at one per %v: no longer than --flush-timeout %v, the test proves nothing", n, pace, flush)
	}
}
