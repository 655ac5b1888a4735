package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestValidValue: every string inside a value becomes valid UTF-8, each
// maximal run of invalid bytes one U+FFFD; valid values are returned as
// they are.
func TestValidValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		in, want attribute.Value
		changed  bool
	}{
		{"string", attribute.StringValue("a\xffb"), attribute.StringValue("a\uFFFDb"), true},
		{"run", attribute.StringValue("a\xfe\xffb"), attribute.StringValue("a\uFFFDb"), true},
		{"valid", attribute.StringValue("héllo"), attribute.StringValue("héllo"), false},
		{"int", attribute.Int64Value(3), attribute.Int64Value(3), false},
		{"bytes", attribute.ByteSliceValue([]byte{0xff}), attribute.ByteSliceValue([]byte{0xff}), false},
		{"strings", attribute.StringSliceValue([]string{"ok", "\xff"}), attribute.StringSliceValue([]string{"ok", "\uFFFD"}), true},
		{
			"nested",
			attribute.SliceValue(attribute.MapValue(attribute.String("k\xff", "v\xff"), attribute.Int("n", 1))),
			attribute.SliceValue(attribute.MapValue(attribute.String("k\uFFFD", "v\uFFFD"), attribute.Int("n", 1))),
			true,
		},
	} {
		got, changed := ValidValue(tc.in)
		if changed != tc.changed || got.String() != tc.want.String() || got.Type() != tc.want.Type() {
			t.Errorf("%s: ValidValue = %s (%v), changed %v; want %s, %v", tc.name, got.String(), got.Type(), changed, tc.want.String(), tc.changed)
		}
	}
}

// TestTracingInvalidUTF8: NewTracing with a resource that is not valid
// UTF-8 (what lens exec builds) and spans whose link attributes and
// instrumentation scope are not: the exporter sees U+FFFD, and each is
// reported once without the value.
func TestTracingInvalidUTF8(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	d := NewDiagnostics(slog.New(slog.NewTextHandler(&buf, nil)))
	exp := tracetest.NewInMemoryExporter()
	s := testSettings(16, 16)
	res := resource.NewSchemaless(attribute.String("host.name", "SECRET\xff"))
	tr, err := NewTracing(context.Background(), res, s, TracingOptions{Exporter: exp, Diagnostics: d})
	if err != nil {
		t.Fatal(err)
	}
	link := trace.Link{
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}}),
		Attributes:  []attribute.KeyValue{attribute.String("link.note", "SECRET\xff")},
	}
	for range 2 {
		_, span := tr.Provider().Tracer("scope\xff", trace.WithInstrumentationVersion("v\xff")).Start(context.Background(), "op", trace.WithLinks(link))
		span.End()
	}
	if err := tr.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans exported, want 2", len(spans))
	}
	sp := spans[0]
	if v, _ := sp.Resource.Set().Value("host.name"); v.AsString() != "SECRET\uFFFD" {
		t.Errorf("resource host.name %q", v.AsString())
	}
	if got := sp.Links[0].Attributes[0].Value.AsString(); got != "SECRET\uFFFD" {
		t.Errorf("link attribute %q", got)
	}
	if sp.InstrumentationScope.Name != "scope\uFFFD" || sp.InstrumentationScope.Version != "v\uFFFD" {
		t.Errorf("scope %+v", sp.InstrumentationScope)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = tr.Shutdown(ctx)
	out := buf.String()
	if strings.Contains(out, "SECRET") {
		t.Errorf("the log shows the value:\n%s", out)
	}
	for _, what := range []string{"resource attribute host.name ", "span link attribute link.note ", "instrumentation scope name ", "instrumentation scope version "} {
		if n := strings.Count(out, "msg=\""+what); n != 1 {
			t.Errorf("%d reports of %q, want 1:\n%s", n, what, out)
		}
	}
}
