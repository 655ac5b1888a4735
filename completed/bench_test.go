package completed_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/nemolens/lens-go/completed"
	"github.com/nemolens/lens-go/internal/telemetry"
)

// benchSpecs is a set of n --span values: one root, the rest its children
// and grandchildren, given children first (the worst order for Emit).
func benchSpecs(n int) []string {
	specs := make([]string, 0, n)
	for i := n - 1; i > 0; i-- {
		specs = append(specs, fmt.Sprintf("s%d,1700000000.%09d,1700000100,s%d", i, i, i/2))
	}
	return append(specs, "s0,1700000000,1700000100")
}

// BenchmarkParseSet: parsing and validating the --span values of one
// lens emit-spans call.
func BenchmarkParseSet(b *testing.B) {
	for _, n := range []int{10, 1000} {
		specs := benchSpecs(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := completed.ParseSet(specs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEmit: validating and emitting a set through the SDK (a provider
// with no processor: the cost of Emit and span creation, not of export).
func BenchmarkEmit(b *testing.B) {
	tr := sdktrace.NewTracerProvider().Tracer("bench")
	for _, n := range []int{10, 1000} {
		spans, err := completed.ParseSet(benchSpecs(n))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if err := completed.Emit(context.Background(), tr, spans); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// countExporter counts the spans it is given.
type countExporter struct{ n atomic.Int64 }

func (c *countExporter) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	c.n.Add(int64(len(s)))
	return nil
}

func (c *countExporter) Shutdown(context.Context) error { return nil }

// BenchmarkBatchExport: a set of n spans, flat and chained, emitted and
// shut down through Lens's pipeline in the batch mode (lens emit-spans) and
// through the SDK's BatchSpanProcessor with WithBlocking, its own batch
// export of a set (docs/performance.md#batch-export has the instruction
// counts; compare the two as ratios).
func BenchmarkBatchExport(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000, 100000} {
		for _, chained := range []bool{false, true} {
			spans := make([]completed.Span, n)
			for i := range spans {
				spans[i] = completed.Span{Name: fmt.Sprint("s", i), Start: time.Unix(1700000000, 0), End: time.Unix(1700000001, 0)}
				if chained && i > 0 {
					spans[i].Parent = spans[i-1].Name
				}
			}
			shape := "flat"
			if chained {
				shape = "chained"
			}
			b.Run(fmt.Sprintf("%s/%d/lens", shape, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					exp := &countExporter{}
					s := &telemetry.Settings{BSPMaxQueueSize: telemetry.DefaultBSPMaxQueueSize, BSPMaxExportBatch: telemetry.DefaultBSPMaxExportBatch,
						BSPScheduleDelay: telemetry.DefaultBSPScheduleDelay, BSPExportTimeout: telemetry.DefaultBSPExportTimeout}
					tr, err := telemetry.NewTracing(context.Background(), resource.Empty(), s, telemetry.TracingOptions{Exporter: exp, Batch: context.Background()})
					if err != nil {
						b.Fatal(err)
					}
					if err := completed.Emit(context.Background(), tr.Provider().Tracer("b"), spans); err != nil {
						b.Fatal(err)
					}
					if err := tr.Shutdown(context.Background()); err != nil || exp.n.Load() != int64(n) {
						b.Fatalf("%v, %d of %d spans", err, exp.n.Load(), n)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/%d/sdk", shape, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					exp := &countExporter{}
					tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewBatchSpanProcessor(exp, sdktrace.WithBlocking())))
					if err := completed.Emit(context.Background(), tp.Tracer("b"), spans); err != nil {
						b.Fatal(err)
					}
					if err := tp.Shutdown(context.Background()); err != nil || exp.n.Load() != int64(n) {
						b.Fatalf("%v, %d of %d spans", err, exp.n.Load(), n)
					}
				}
			})
		}
	}
}
