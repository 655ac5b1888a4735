package jaeger

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
)

// OTLPTraces is the OTLP JSON (TracesData) the v3 API returns for a trace.
// Unlike the v1 API, service.name stays a resource attribute and the value
// kinds are exactly OTLP's (intValue, doubleValue, arrayValue, ...).
type OTLPTraces struct {
	ResourceSpans []OTLPResourceSpans `json:"resourceSpans"`
}

// OTLPResourceSpans is one resource and its spans.
type OTLPResourceSpans struct {
	Resource   OTLPResource     `json:"resource"`
	ScopeSpans []OTLPScopeSpans `json:"scopeSpans"`
	SchemaURL  string           `json:"schemaUrl"`
}

// OTLPResource is an OTLP resource.
type OTLPResource struct {
	Attributes []OTLPKeyValue `json:"attributes"`
}

// OTLPScopeSpans is one instrumentation scope and its spans.
type OTLPScopeSpans struct {
	Scope     OTLPScope  `json:"scope"`
	Spans     []OTLPSpan `json:"spans"`
	SchemaURL string     `json:"schemaUrl"`
}

// OTLPScope is an instrumentation scope.
type OTLPScope struct {
	Name       string         `json:"name"`
	Version    string         `json:"version"`
	Attributes []OTLPKeyValue `json:"attributes"`
}

// OTLPSpan is the part of an OTLP span the tests look at.
type OTLPSpan struct {
	TraceID      string         `json:"traceId"` // hex
	SpanID       string         `json:"spanId"`  // hex
	ParentSpanID string         `json:"parentSpanId"`
	Name         string         `json:"name"`
	Kind         int            `json:"kind"`
	Attributes   []OTLPKeyValue `json:"attributes"`
}

// OTLPKeyValue is an OTLP attribute.
type OTLPKeyValue struct {
	Key   string    `json:"key"`
	Value OTLPValue `json:"value"`
}

// OTLPValue is an OTLP AnyValue; exactly one field is set (none for an
// empty value). Kind names it.
type OTLPValue struct {
	StringValue *string     `json:"stringValue,omitempty"`
	BoolValue   *bool       `json:"boolValue,omitempty"`
	IntValue    *OTLPInt    `json:"intValue,omitempty"`
	DoubleValue *float64    `json:"doubleValue,omitempty"`
	BytesValue  *string     `json:"bytesValue,omitempty"` // base64
	ArrayValue  *OTLPArray  `json:"arrayValue,omitempty"`
	KvlistValue *OTLPKVList `json:"kvlistValue,omitempty"`
}

// OTLPArray is an OTLP ArrayValue.
type OTLPArray struct {
	Values []OTLPValue `json:"values"`
}

// OTLPKVList is an OTLP KeyValueList.
type OTLPKVList struct {
	Values []OTLPKeyValue `json:"values"`
}

// OTLPInt is an OTLP int64; OTLP JSON writes it as a string ("0"), plain
// numbers are accepted too.
type OTLPInt int64

// UnmarshalJSON accepts "123" and 123.
func (i *OTLPInt) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("jaeger: OTLP intValue %s: %w", b, err)
	}
	*i = OTLPInt(v)
	return nil
}

// Kind is "string", "bool", "int", "double", "bytes", "array", "kvlist" or
// "empty".
func (v OTLPValue) Kind() string {
	switch {
	case v.StringValue != nil:
		return "string"
	case v.BoolValue != nil:
		return "bool"
	case v.IntValue != nil:
		return "int"
	case v.DoubleValue != nil:
		return "double"
	case v.BytesValue != nil:
		return "bytes"
	case v.ArrayValue != nil:
		return "array"
	case v.KvlistValue != nil:
		return "kvlist"
	default:
		return "empty"
	}
}

// String formats the value as kind(value), e.g. int(0) or string("abc").
func (v OTLPValue) String() string {
	switch v.Kind() {
	case "string":
		return fmt.Sprintf("string(%q)", *v.StringValue)
	case "bool":
		return fmt.Sprintf("bool(%v)", *v.BoolValue)
	case "int":
		return fmt.Sprintf("int(%d)", int64(*v.IntValue))
	case "double":
		return fmt.Sprintf("double(%v)", *v.DoubleValue)
	case "bytes":
		return fmt.Sprintf("bytes(%s)", *v.BytesValue)
	case "array":
		return fmt.Sprintf("array%v", v.ArrayValue.Values)
	case "kvlist":
		return fmt.Sprintf("kvlist%v", v.KvlistValue.Values)
	default:
		return "empty()"
	}
}

// Attr returns the resource attribute with the given key.
func (r *OTLPResource) Attr(key string) (OTLPValue, bool) { return findAttr(r.Attributes, key) }

// Attr returns the span attribute with the given key.
func (s *OTLPSpan) Attr(key string) (OTLPValue, bool) { return findAttr(s.Attributes, key) }

func findAttr(kvs []OTLPKeyValue, key string) (OTLPValue, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return OTLPValue{}, false
}

// TraceOTLP fetches one trace as OTLP JSON from GET /api/v3/traces/<id>,
// polling every PollInterval while Jaeger answers 404. The wait ends with
// ctx, or after DefaultWait if ctx has no deadline.
func (j *Jaeger) TraceOTLP(ctx context.Context, traceID string) (*OTLPTraces, error) {
	id := NormalizeTraceID(traceID)
	u := j.QueryURL() + "/api/v3/traces/" + url.PathEscape(id)
	var out *OTLPTraces
	err := j.poll(ctx, "OTLP trace "+id, func(ctx context.Context) (bool, string, error) {
		var r struct {
			Result *OTLPTraces `json:"result"`
		}
		if found, why, err := j.getFound(ctx, u, &r); !found {
			return false, why, err
		}
		if r.Result == nil || len(r.Result.ResourceSpans) == 0 {
			return false, "empty result", nil
		}
		out = r.Result
		return true, "", nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
