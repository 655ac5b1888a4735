package attr

import (
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
)

// KeyValue converts v to an OpenTelemetry attribute under key. ok is false
// for the null value, which OpenTelemetry cannot express.
func (v Value) KeyValue(key string) (kv attribute.KeyValue, ok bool) {
	switch v.kind {
	case KindString:
		return attribute.String(key, v.s), true
	case KindBool:
		return attribute.Bool(key, v.AsBool()), true
	case KindInt64:
		return attribute.Int64(key, v.AsInt64()), true
	case KindFloat64:
		return attribute.Float64(key, v.AsFloat64()), true
	}
	return attribute.KeyValue{}, false
}

// FromAttribute converts an OpenTelemetry value. ok is false for the slice
// kinds and INVALID, which the carrier model has no form for.
func FromAttribute(v attribute.Value) (Value, bool) {
	switch v.Type() {
	case attribute.STRING:
		return String(v.AsString()), true
	case attribute.BOOL:
		return Bool(v.AsBool()), true
	case attribute.INT64:
		return Int64(v.AsInt64()), true
	case attribute.FLOAT64:
		return Float64(v.AsFloat64()), true
	}
	return Value{}, false
}

// KeyValues returns the map as OpenTelemetry attributes, in order. Null values
// are left out (OpenTelemetry has no null).
func (m *Map) KeyValues() []attribute.KeyValue {
	kvs := make([]attribute.KeyValue, 0, m.Len())
	for k, v := range m.All() {
		if kv, ok := v.KeyValue(k); ok {
			kvs = append(kvs, kv)
		}
	}
	return kvs
}

// Resource returns a schemaless OpenTelemetry resource holding the map's
// non-null entries. It is schemaless on purpose (docs/resource.md#sdk-schema-url): merging it with
// the SDK's detectors or resource.Environment() never raises a schema-URL
// conflict. An entry with an empty key is dropped by the SDK as invalid.
func (m *Map) Resource() *resource.Resource {
	kvs := m.KeyValues()
	// NewSchemaless sorts its input by key with a stable insertion and merge
	// sort, moving 64-byte KeyValues around; on input that is already sorted
	// that pass is linear. The keys of a Map are unique, so an unstable sort
	// gives the same order, in fewer steps.
	slices.SortFunc(kvs, func(a, b attribute.KeyValue) int { return strings.Compare(string(a.Key), string(b.Key)) })
	return resource.NewSchemaless(kvs...)
}

// FromKeyValues builds a map from OpenTelemetry attributes in the given order
// (a repeated key keeps its first position, last value). It returns the keys
// it could not convert (slice-valued or invalid attributes) so that nothing is
// dropped silently.
func FromKeyValues(kvs ...attribute.KeyValue) (m *Map, skipped []string) {
	m = WithCapacity(len(kvs))
	for _, kv := range kvs {
		if v, ok := FromAttribute(kv.Value); ok {
			m.Set(string(kv.Key), v)
		} else {
			skipped = append(skipped, string(kv.Key))
		}
	}
	return m, skipped
}

// FromResource builds a map from a resource's attributes, in the resource's
// order (sorted by key). It returns the keys it could not convert.
func FromResource(r *resource.Resource) (m *Map, skipped []string) {
	if r == nil {
		return &Map{}, nil
	}
	return FromKeyValues(r.Attributes()...)
}
