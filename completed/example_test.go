package completed_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/nemolens/lens-go/completed"
)

func Example() {
	spans, err := completed.ParseSpecs([]string{
		"train,1700000060,1700003600,job", // a child may come before its parent
		"job,1700000000,1700003700",
		"queue,1699999000,1700000000,job", // and need not lie inside it
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	if err := completed.Emit(context.Background(), tp.Tracer("example"), spans); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range rec.Started() {
		fmt.Println(s.Name(), s.StartTime().Unix(), s.EndTime().Unix())
	}

	err = completed.Emit(context.Background(), tp.Tracer("example"), []completed.Span{
		{Name: "a", Start: spans[0].Start, End: spans[0].End, Parent: "b"},
		{Name: "b", Start: spans[0].End, End: spans[0].Start, Parent: "a"},
	})
	fmt.Println(err)
	// Output:
	// job 1700000000 1700003700
	// train 1700000060 1700003600
	// queue 1699999000 1700000000
	// span "b" (#2): end before start: ends 59m0s before its start
	// span "a" (#1): parent cycle: "a" -> "b" -> "a"
}
