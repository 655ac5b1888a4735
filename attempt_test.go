package lens_test

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/environ"
)

// TestSetupTracePerAttempt: Go workers that call Setup with the same job
// identity and NEMO_LENS_TRACE_PER_ATTEMPT put their root spans in the
// attempt's trace (docs/tracing.md#trace-per-attempt); the expected ids
// are the hex digits of the run UUIDs of docs/detection.md's worked
// examples, and of Python's uuid.uuid5(NAMESPACE_URL,
// "nemo.lens.run/local/run1/te0") for the local run.
func TestSetupTracePerAttempt(t *testing.T) {
	t.Parallel()
	slurm := environ.Map{"SLURM_CLUSTER_NAME": "cluster-a", "SLURM_JOB_ID": "12345", "SLURM_RESTART_COUNT": "1", "NEMO_LENS_TRACE_PER_ATTEMPT": "true"}
	for _, tc := range []struct {
		name  string
		env   environ.Map
		trace string // "": random
		link  string // the linked trace, "" for none
	}{
		{"slurm", slurm, "be42db52ed955653b035190f2392e702", "1a280c0a71d254bdbd00fa82efd94290"},
		{"local run id", environ.Map{"NEMO_LENS_TRACE_PER_ATTEMPT": "on"}, "51b41f92a2265829bc318c5640575259", ""},
		{"mode off", environ.Map{"SLURM_CLUSTER_NAME": "cluster-a", "SLURM_JOB_ID": "12345", "SLURM_RESTART_COUNT": "1"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var traces []string
			for range 2 { // two workers
				s := workerSpan(t, tc.env, "run1")
				traces = append(traces, s.SpanContext.TraceID().String())
				if tc.trace != "" && traces[len(traces)-1] != tc.trace {
					t.Errorf("trace %s, want %s", traces[len(traces)-1], tc.trace)
				}
				switch {
				case tc.link == "" && len(s.Links) != 0:
					t.Errorf("links %v, want none", s.Links)
				case tc.link != "" && (len(s.Links) != 1 || s.Links[0].SpanContext.TraceID().String() != tc.link):
					t.Errorf("links %v, want one to %s", s.Links, tc.link)
				}
			}
			if tc.trace == "" && traces[0] == traces[1] {
				t.Errorf("two workers share trace %s without the mode", traces[0])
			}
		})
	}
}

// TestSetupTracePerAttemptBadValue: a switch value that is not a boolean is
// a configuration error naming the variable.
func TestSetupTracePerAttemptBadValue(t *testing.T) {
	t.Parallel()
	cfg := enabledConfig()
	cfg.MetricsDisabled = true
	logger, _ := newCapture()
	_, err := lens.Setup(context.Background(), cfg, lens.WithEnv(environ.Map{"NEMO_LENS_TRACE_PER_ATTEMPT": "sometimes"}),
		lens.WithSpanExporter(tracetest.NewInMemoryExporter()), lens.WithLogger(logger), lens.WithoutGlobals(), lens.WithAllowReinit())
	var ce *lens.ConfigError
	if !errors.As(err, &ce) || ce.Var != "NEMO_LENS_TRACE_PER_ATTEMPT" || !errors.Is(err, lens.ErrInvalidBool) {
		t.Errorf("Setup = %v, want a *lens.ConfigError for NEMO_LENS_TRACE_PER_ATTEMPT", err)
	}
}

// TestSetupTraceRoundLinks (docs/tracing.md#round-links): workers of
// three torchrun dynamic-rendezvous rounds on one node, two per round;
// each round's root spans are in the round's trace and link to the previous
// round's anchor, told by the node's record of rounds under
// XDG_RUNTIME_DIR; the first round links to nothing. The expected ids are
// Python's uuid.uuid5(NAMESPACE_URL, name) and the anchor rule, written
// again here.
func TestSetupTraceRoundLinks(t *testing.T) {
	t.Parallel()
	runtime := t.TempDir()
	roundTrace := func(port string) string {
		return uuid5Hex("nemo.lens.run/local/rdzv1/rdzv10.0.0.1:" + port)
	}
	var prev string
	for i, port := range []string{"29500", "41234", "35001"} {
		want := roundTrace(port)
		for w := range 2 {
			env := environ.Map{"NEMO_LENS_TRACE_PER_ATTEMPT": "true", "XDG_RUNTIME_DIR": runtime,
				"TORCHELASTIC_RUN_ID": "rdzv1", "TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_USE_AGENT_STORE": "False",
				"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": port}
			s := workerSpan(t, env, "") // the rendezvous id as run id
			if got := s.SpanContext.TraceID().String(); got != want {
				t.Errorf("round %d worker %d: trace %s, want %s", i, w, got, want)
			}
			switch {
			case prev == "" && len(s.Links) != 0:
				t.Errorf("round %d worker %d: links %v, want none", i, w, s.Links)
			case prev != "" && (len(s.Links) != 1 || s.Links[0].SpanContext.TraceID().String() != prev ||
				s.Links[0].SpanContext.SpanID().String() != anchorHex(prev)):
				t.Errorf("round %d worker %d: links %v, want one to %s/%s", i, w, s.Links, prev, anchorHex(prev))
			}
		}
		prev = want
	}
}

// TestSetupTraceRoundNoRecord: a rendezvous round whose record of rounds
// cannot be kept (XDG_RUNTIME_DIR names a directory that is gone) still
// sets up, in the round's trace, without a link
// (docs/tracing.md#round-links).
func TestSetupTraceRoundNoRecord(t *testing.T) {
	t.Parallel()
	gone := filepath.Join(t.TempDir(), "gone")
	for _, port := range []string{"29500", "41234"} {
		env := environ.Map{"NEMO_LENS_TRACE_PER_ATTEMPT": "true", "XDG_RUNTIME_DIR": gone,
			"TORCHELASTIC_RUN_ID": "rdzv1", "TORCHELASTIC_RESTART_COUNT": "1", "TORCHELASTIC_USE_AGENT_STORE": "False",
			"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": port}
		s := workerSpan(t, env, "")
		if got, want := s.SpanContext.TraceID().String(), uuid5Hex("nemo.lens.run/local/rdzv1/rdzv10.0.0.1:"+port); got != want || len(s.Links) != 0 {
			t.Errorf("round %s: trace %s, links %v; want %s, none", port, got, s.Links, want)
		}
	}
	if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: %v; want nothing made", gone, err)
	}
}

// workerSpan is the one span of a Go worker that calls Setup in env with
// run id runID (enabledConfig's otherwise) and starts one root span.
func workerSpan(t *testing.T, env environ.Map, runID string) tracetest.SpanStub {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	cfg := enabledConfig()
	cfg.RunID = runID
	cfg.MetricsDisabled = true
	logger, _ := newCapture()
	h, err := lens.Setup(context.Background(), cfg, lens.WithEnv(env), lens.WithSpanExporter(exp), lens.WithLogger(logger),
		lens.WithDetectOptions(detectOptions(t, defaultLive)...), lens.WithoutGlobals(), lens.WithAllowReinit())
	if err != nil {
		t.Fatal(err)
	}
	_, span := h.Tracer("worker").Start(context.Background(), "step")
	span.End()
	if err := h.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	_ = h.Shutdown(context.Background())
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	return spans[0]
}

// uuid5Hex is the hex digits of Python's uuid.uuid5(uuid.NAMESPACE_URL,
// name).
func uuid5Hex(name string) string {
	ns := []byte{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	sum := sha1.Sum(append(ns, name...))
	sum[6] = sum[6]&0x0f | 0x50
	sum[8] = sum[8]&0x3f | 0x80
	return hex.EncodeToString(sum[:16])
}

// anchorHex is the anchor span id of the attempt whose trace id is tid
// (docs/tracing.md#attempt-trace-id).
func anchorHex(tid string) string {
	u := tid[:8] + "-" + tid[8:12] + "-" + tid[12:16] + "-" + tid[16:20] + "-" + tid[20:]
	sum := sha256.Sum256([]byte("nemo.lens.attempt.anchor/" + u))
	return hex.EncodeToString(sum[:8])
}
