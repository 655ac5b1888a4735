package completed_test

import (
	"context"
	"fmt"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/nemolens/lens-go/completed"
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
