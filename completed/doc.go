// Package completed emits completed spans from explicit times: spans whose
// start and end were measured elsewhere (a shell launcher, the scheduler's
// accounting) and are exported afterwards, back-dated
// (docs/tracing.md#completed-spans).
//
// [Validate] checks a set of spans as a whole — names unique and non-empty,
// every parent present, no cycle, no end before its start, times that an
// exporter can carry — and reports every problem at once; [Emit] validates
// first and emits nothing unless all is valid, then starts parents before
// their children with the given timestamps. [ParseSpec] reads the
// `lens emit-spans --span` grammar NAME,START,END[,PARENT] with times in
// Unix epoch seconds (docs/tracing.md#span-grammar).
//
// The package reads nothing from the environment. Its spans go to the
// tracer it is given; [ContextWithTraceID] and [Span.SpanID] request ids
// that Lens's tracer providers (lens.Setup, the lens command) honour
// (docs/tracing.md#trace-per-attempt).
package completed
