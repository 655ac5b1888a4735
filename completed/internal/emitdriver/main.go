// Command emitdriver exports one set of completed spans through Lens's
// span pipeline in the batch mode, and the same set through the OpenTelemetry
// SDK's own BatchSpanProcessor (blocking, its batch export of a whole set),
// for completed/linear_test.go and docs/performance.md#batch-export, which
// run it under Valgrind's callgrind tool and compare the instructions of each
// measure* function at several set sizes.
//
// Usage:
//
//	emitdriver -spans N
//
// builds N spans, flat (N roots) and chained (each the parent of the next),
// and N-step sacct output, then calls each measure* function once: Lens flat
// and chained, the SDK flat and chained (completed.Emit, then Shutdown, with
// an exporter that counts), and the reckoner (sacct output parsed, grouped,
// planned and emitted through Lens's pipeline). Each is never inlined, so
// callgrind's inclusive cost of main.measureX is that operation alone. The
// garbage collector is off; every operation runs once on a tiny input
// first, outside any measure* function, so that one-time initialisation is
// not counted.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/nemolens/lens-go/completed"
	"github.com/nemolens/lens-go/internal/reckon"
	"github.com/nemolens/lens-go/internal/telemetry"
)

// counter is a span exporter that counts the spans it is given.
type counter struct{ n atomic.Int64 }

func (c *counter) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	c.n.Add(int64(len(s)))
	return nil
}

func (c *counter) Shutdown(context.Context) error { return nil }

var sink int64

func set(n int, chained bool) []completed.Span {
	spans := make([]completed.Span, n)
	for i := range spans {
		spans[i] = completed.Span{Name: "s" + strconv.Itoa(i), Start: time.Unix(int64(1700000000+i), 0), End: time.Unix(int64(1700000001+i), 0)}
		if chained && i > 0 {
			spans[i].Parent = spans[i-1].Name
		}
	}
	return spans
}

// sacctOutput is the '|'-separated sacct output of one job with n steps.
func sacctOutput(n int) string {
	var b strings.Builder
	row := func(id, start, end string) {
		fmt.Fprintf(&b, "%s|%s|x|COMPLETED|0:0|2026-12-01T10:00:00|2026-12-01T10:00:01|%s|%s|42|c1|node1\n", id, id, start, end)
	}
	row("5", "2026-12-01T10:00:02", "2026-12-02T10:00:00")
	row("5.batch", "2026-12-01T10:00:02", "2026-12-02T10:00:00")
	base := time.Date(2026, 12, 1, 10, 0, 3, 0, time.UTC)
	for i := range n {
		s := base.Add(time.Duration(i%80000) * time.Second)
		row("5."+strconv.Itoa(i), s.Format(reckon.TimeLayout), s.Add(time.Second).Format(reckon.TimeLayout))
	}
	return b.String()
}

func lensTracing() (*telemetry.Tracing, *counter) {
	exp := &counter{}
	s := &telemetry.Settings{
		BSPMaxQueueSize:   telemetry.DefaultBSPMaxQueueSize,
		BSPMaxExportBatch: telemetry.DefaultBSPMaxExportBatch,
		BSPScheduleDelay:  telemetry.DefaultBSPScheduleDelay,
		BSPExportTimeout:  telemetry.DefaultBSPExportTimeout,
	}
	t, err := telemetry.NewTracing(context.Background(), resource.Empty(), s, telemetry.TracingOptions{
		Exporter: exp, Batch: context.Background(), Diagnostics: telemetry.NewDiagnostics(nil)})
	must(err)
	return t, exp
}

func opLens(spans []completed.Span) {
	t, exp := lensTracing()
	must(completed.Emit(context.Background(), t.Provider().Tracer("d"), spans))
	must(t.Shutdown(context.Background()))
	check(exp, len(spans))
}

func opSDK(spans []completed.Span) {
	exp := &counter{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewBatchSpanProcessor(exp, sdktrace.WithBlocking())))
	must(completed.Emit(context.Background(), tp.Tracer("d"), spans))
	must(tp.Shutdown(context.Background()))
	check(exp, len(spans))
}

// plan parses, groups and plans sacct's output, as lens reckon does.
func plan(out string) []reckon.Plan {
	rows, err := reckon.Parse(out, false)
	must(err)
	jobs, err := reckon.Group(rows)
	must(err)
	plans, err := reckon.Plans(jobs, reckon.Options{})
	must(err)
	return plans
}

func opReckon(out string) {
	plans := plan(out)
	t, exp := lensTracing()
	tr := t.Provider().Tracer("d")
	n := 0
	for i := range plans {
		ctx := completed.ContextWithTraceID(context.Background(), plans[i].TraceID)
		for s := range plans[i].All() {
			n++
			must(completed.Emit(ctx, tr, []completed.Span{{Name: s.Name, Start: s.Start, End: s.End, Attributes: s.Attributes}}))
		}
	}
	must(t.Shutdown(context.Background()))
	check(exp, n)
}

//go:noinline
func measureLensFlat(s []completed.Span) { opLens(s) }

//go:noinline
func measureLensChained(s []completed.Span) { opLens(s) }

//go:noinline
func measureSDKFlat(s []completed.Span) { opSDK(s) }

//go:noinline
func measureSDKChained(s []completed.Span) { opSDK(s) }

//go:noinline
func measureReckon(out string) { opReckon(out) }

func check(exp *counter, want int) {
	if got := exp.n.Load(); got != int64(want) {
		fmt.Fprintf(os.Stderr, "emitdriver: %d of %d spans exported\n", got, want)
		os.Exit(1)
	}
	sink += exp.n.Load()
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "emitdriver:", err)
		os.Exit(1)
	}
}

// parseOnly is what the reckoner needs before it emits: sacct's output
// parsed, grouped and planned.
func parseOnly(out string) { sink += int64(len(plan(out))) }

// memory prints the bytes and allocations per step of parseOnly and of
// opReckon, and the live heap after each (GC on).
func memory(n int) {
	out := sacctOutput(n)
	for _, m := range []struct {
		name string
		op   func(string)
	}{{"parse+group+plan", parseOnly}, {"reckon (parse … export)", opReckon}} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m.op(out)
		runtime.ReadMemStats(&after)
		fmt.Printf("%-24s %8.0f B/step %6.1f allocs/step\n", m.name,
			float64(after.TotalAlloc-before.TotalAlloc)/float64(n), float64(after.Mallocs-before.Mallocs)/float64(n))
	}
}

func main() {
	n := flag.Int("spans", 1000, "spans per set (steps of the reckoned job)")
	mem := flag.Bool("mem", false, "print the allocations per step of the reckoner instead")
	flag.Parse()
	if *mem {
		opReckon(sacctOutput(4))
		memory(*n)
		return
	}
	debug.SetGCPercent(-1)
	flat, chained, out := set(*n, false), set(*n, true), sacctOutput(*n)
	opLens(set(4, true))
	opSDK(set(4, true))
	opReckon(sacctOutput(4))
	measureLensFlat(flat)
	measureLensChained(chained)
	measureSDKFlat(flat)
	measureSDKChained(chained)
	measureReckon(out)
	fmt.Println(sink)
}
