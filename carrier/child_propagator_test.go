package carrier_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/carrier"
)

// TestChildEnvGlobalPropagator: without WithPropagator, ChildEnv writes the
// trace context with the global propagator, and falls back to W3C trace
// context + baggage only when the global propagator carries no fields (the
// OpenTelemetry default no-op, an empty composite). A global propagator
// with fields is used as it is, even when it lacks traceparent. Not
// parallel: it changes the global propagator (and puts it back).
func TestChildEnvGlobalPropagator(t *testing.T) {
	orig := otel.GetTextMapPropagator()
	t.Cleanup(func() { otel.SetTextMapPropagator(orig) })

	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	member, _ := baggage.NewMember("k", "v")
	bag, _ := baggage.New(member)
	ctx = baggage.ContextWithBaggage(ctx, bag)
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

	for _, tc := range []struct {
		name        string
		global      propagation.TextMapPropagator // nil: leave the process default
		traceparent string                        // "" for none
		baggage     string
	}{
		{"default no-op global", nil, traceparent, "k=v"},
		{"empty composite", propagation.NewCompositeTextMapPropagator(), traceparent, "k=v"},
		{"baggage only", propagation.Baggage{}, "", "k=v"},
		{"trace context only", propagation.TraceContext{}, traceparent, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.global != nil {
				otel.SetTextMapPropagator(tc.global)
			}
			got, err := carrier.ChildEnv(ctx, nil, carrier.WithEnviron([]string{"PATH=/bin"}))
			if err != nil {
				t.Fatal(err)
			}
			tp, hasTP := lastValue(got, "TRACEPARENT")
			bg, hasBG := lastValue(got, "BAGGAGE")
			if tp != tc.traceparent || hasTP != (tc.traceparent != "") || bg != tc.baggage || hasBG != (tc.baggage != "") {
				t.Errorf("TRACEPARENT %q (set %v), BAGGAGE %q (set %v); want %q and %q", tp, hasTP, bg, hasBG, tc.traceparent, tc.baggage)
			}
		})
	}
}
