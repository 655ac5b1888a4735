package telemetry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/collectortest"
	"github.com/nemolens/lens-go/internal/faulttest"
)

// TestFinalExportRefusedAfterShutdownBegan: the exporter has never
// connected when Shutdown begins (the schedule delay is a day, nothing was
// flushed), so the first refused connection comes during the final export.
// Shutdown still ends at once with an error wrapping ErrCollectorRefused —
// not after the export timeout with a deadline error — and the span counts
// as failed. Real OTLP exporters of both protocols, a real port nobody
// listens on (collectortest.Refused).
func TestFinalExportRefusedAfterShutdownBegan(t *testing.T) {
	t.Parallel()
	for _, protocol := range faulttest.Protocols() {
		t.Run(faulttest.ProtocolName(protocol), func(t *testing.T) {
			t.Parallel()
			env := environ.Map{"OTEL_EXPORTER_OTLP_ENDPOINT": collectortest.Refused(t), "OTEL_EXPORTER_OTLP_PROTOCOL": protocol}
			s, err := ReadSettings(env, Config{}, Needs{Traces: true})
			if err != nil {
				t.Fatal(err)
			}
			s.BSPScheduleDelay = MaxDuration
			tr, err := NewTracing(context.Background(), resource.Empty(), &s, TracingOptions{Env: env})
			if err != nil {
				t.Fatal(err)
			}
			_, span := tr.Provider().Tracer("test").Start(context.Background(), "s")
			span.End()
			if g := tr.pipeline.guard; g == nil {
				t.Fatal("an OTLP exporter without a refusal guard")
			} else {
				g.mu.Lock()
				addr, refused := g.lastAddr, g.lastRefused
				g.mu.Unlock()
				if addr != "" || refused != nil {
					t.Fatalf("a connection attempt (%q, %v) before Shutdown", addr, refused)
				}
			}
			// Far more than the exporters' own timeouts: only a final
			// export that is not ended by the refusal reaches a deadline.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			err = tr.Shutdown(ctx)
			if !errors.Is(err, ErrCollectorRefused) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
				t.Errorf("Shutdown = %v; want ErrCollectorRefused, and no deadline", err)
			}
			if c := tr.Counts(); c != (SpanCounts{Ended: 1, Failed: 1}) {
				t.Errorf("counts %s, want the span failed", countsString(c))
			}
		})
	}
}

// TestGuardFinalFirstRefusal: the guard's own contract for the same case,
// with an export that reports only ctx.Err() (as an exporter that does not
// carry the context's cause does): Shutdown began (Final) before any
// connection attempt; the export's first attempt is refused; the export is
// cancelled at once and its error wraps ErrCollectorRefused, not
// context.Canceled alone. Before Final, the same refusal cancels nothing.
func TestGuardFinalFirstRefusal(t *testing.T) {
	t.Parallel()
	addr := strings.TrimPrefix(collectortest.Refused(t), "http://")
	g := NewRefusalGuard(nil)
	export := func(ctx context.Context) error {
		if conn, err := g.dial(ctx, addr); err == nil {
			conn.Close()
			return errors.New("the refused address accepted a connection")
		}
		// As gRPC does: back off and retry until the context ends.
		<-ctx.Done()
		return ctx.Err()
	}
	// Before Shutdown, a refused attempt does not end the export: only its
	// own deadline does.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err := g.Export(ctx, export)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrCollectorRefused) {
		t.Errorf("export before Final = %v, want its deadline only", err)
	}

	g = NewRefusalGuard(nil) // no attempt seen yet
	g.Final()
	// Far more than the test needs: only an export that the refusal does
	// not end reaches it.
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = g.Export(ctx, export)
	if !errors.Is(err, ErrCollectorRefused) || ctx.Err() != nil {
		t.Errorf("final export = %v, want ErrCollectorRefused at once", err)
	}
}
