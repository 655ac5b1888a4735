package attr_test

import (
	"math"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/attr"
)

func TestValueKeyValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    attr.Value
		want attribute.KeyValue
		ok   bool
	}{
		{attr.String("s"), attribute.String("k", "s"), true},
		{attr.String(""), attribute.String("k", ""), true},
		{attr.Bool(true), attribute.Bool("k", true), true},
		{attr.Int64(-3), attribute.Int64("k", -3), true},
		{attr.Float64(0.5), attribute.Float64("k", 0.5), true},
		{attr.Null(), attribute.KeyValue{}, false},
	}
	for _, tt := range tests {
		got, ok := tt.v.KeyValue("k")
		if ok != tt.ok || got != tt.want {
			t.Errorf("%#v.KeyValue = %v, %v; want %v, %v", tt.v, got, ok, tt.want, tt.ok)
		}
		if !ok {
			continue
		}
		back, ok := attr.FromAttribute(got.Value)
		if !ok || !back.Equal(tt.v) {
			t.Errorf("FromAttribute(%v) = %v, %v; want %v", got.Value, back, ok, tt.v)
		}
	}
}

func TestFromAttributeUnsupported(t *testing.T) {
	t.Parallel()
	for _, v := range []attribute.Value{
		attribute.StringSliceValue([]string{"a"}),
		attribute.BoolSliceValue([]bool{true}),
		attribute.Int64SliceValue([]int64{1}),
		attribute.Float64SliceValue([]float64{1}),
		{}, // INVALID
	} {
		if got, ok := attr.FromAttribute(v); ok || !got.IsNull() {
			t.Errorf("FromAttribute(%v of type %v) = %v, %v; want null, false", v, v.Type(), got, ok)
		}
	}
}

func TestKeyValuesSkipsNull(t *testing.T) {
	t.Parallel()
	m := attr.NewMap(
		attr.Entry{Key: "z", Value: attr.String("1")},
		attr.Entry{Key: "gone", Value: attr.Null()},
		attr.Entry{Key: "a", Value: attr.Int(2)},
		attr.Entry{Key: "f", Value: attr.Float64(math.Inf(1))},
	)
	want := []attribute.KeyValue{
		attribute.String("z", "1"),
		attribute.Int64("a", 2),
		attribute.Float64("f", math.Inf(1)),
	}
	if got := m.KeyValues(); !slices.Equal(got, want) {
		t.Errorf("KeyValues = %v, want %v (map order, nulls skipped)", got, want)
	}
}

func TestFromKeyValues(t *testing.T) {
	t.Parallel()
	m, skipped := attr.FromKeyValues(
		attribute.String("b", "1"),
		attribute.StringSlice("list", []string{"x"}),
		attribute.Int("a", 2),
		attribute.Bool("b", true), // repeated: first position, last value
		attribute.KeyValue{Key: "invalid"},
	)
	want := attr.NewMap(
		attr.Entry{Key: "b", Value: attr.Bool(true)},
		attr.Entry{Key: "a", Value: attr.Int(2)},
	)
	if !m.Equal(want) {
		t.Errorf("FromKeyValues = %v, want %v", m, want)
	}
	if !slices.Equal(skipped, []string{"list", "invalid"}) {
		t.Errorf("skipped = %v", skipped)
	}
}

func TestResource(t *testing.T) {
	t.Parallel()
	m := attr.NewMap(
		attr.Entry{Key: "service.name", Value: attr.String("svc")},
		attr.Entry{Key: "nv.dl.rank", Value: attr.Int(3)},
		attr.Entry{Key: "hidden", Value: attr.Null()},
		attr.Entry{Key: "", Value: attr.String("empty key")},
		attr.Entry{Key: "active", Value: attr.Bool(false)},
	)
	r := m.Resource()
	if r.SchemaURL() != "" {
		t.Errorf("SchemaURL = %q, want schemaless", r.SchemaURL())
	}
	back, skipped := attr.FromResource(r)
	if len(skipped) != 0 {
		t.Errorf("skipped = %v", skipped)
	}
	// The resource's order is sorted by key; null and the empty key are gone.
	want := attr.NewMap(
		attr.Entry{Key: "active", Value: attr.Bool(false)},
		attr.Entry{Key: "nv.dl.rank", Value: attr.Int(3)},
		attr.Entry{Key: "service.name", Value: attr.String("svc")},
	)
	if !back.Equal(want) {
		t.Errorf("FromResource(Resource()) = %v, want %v", back, want)
	}

	// Schemaless: merging with the SDK's default resource (which has a
	// schema URL) never conflicts, whichever side comes first.
	for _, pair := range [][2]*resource.Resource{{resource.Default(), r}, {r, resource.Default()}} {
		merged, err := resource.Merge(pair[0], pair[1])
		if err != nil {
			t.Fatalf("Merge: %v", err)
		}
		if v, ok := merged.Set().Value("nv.dl.rank"); !ok || v.AsInt64() != 3 {
			t.Errorf("merged nv.dl.rank = %v, %v", v, ok)
		}
	}

	if got, skipped := attr.FromResource(nil); got == nil || got.Len() != 0 || skipped != nil {
		t.Errorf("FromResource(nil) = %v, %v", got, skipped)
	}
	if got := (*attr.Map)(nil).Resource(); got.Len() != 0 || got.SchemaURL() != "" {
		t.Errorf("nil map Resource() = %v", got)
	}
}
