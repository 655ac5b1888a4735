package lens_test

import (
	"context"
	"errors"
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
				exp := tracetest.NewInMemoryExporter()
				cfg := enabledConfig() // RunID run1
				cfg.MetricsDisabled = true
				logger, _ := newCapture()
				h, err := lens.Setup(context.Background(), cfg, lens.WithEnv(tc.env), lens.WithSpanExporter(exp), lens.WithLogger(logger),
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
				s := spans[0]
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
