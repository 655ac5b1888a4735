package lens

import (
	"slices"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/nemolens/lens-go/internal/telemetry"
)

// Metric data and log records with U+FFFD in place of invalid UTF-8
// (docs/resource.md#invalid-utf-8); the span pipeline does the same for
// spans (internal/telemetry, which the lens command links without the
// metric and log SDKs).

// validResourceMetrics makes the strings of rm valid UTF-8 in place — the
// scopes, the names, descriptions and units of the metrics, and the
// attributes of their data points and exemplars — reporting each one it
// changed. (rm belongs to the reader that collected it, which overwrites
// every field on its next collection.) The resource is left as it is.
func validResourceMetrics(rm *metricdata.ResourceMetrics, invalid func(what, source string)) {
	points := telemetry.ReportKey(invalid, "metric attribute ")
	exemplars := telemetry.ReportKey(invalid, "metric exemplar attribute ")
	for i := range rm.ScopeMetrics {
		sm := &rm.ScopeMetrics[i]
		telemetry.ValidScope(&sm.Scope, invalid)
		for j := range sm.Metrics {
			m := &sm.Metrics[j]
			telemetry.ValidStrings(invalid, telemetry.Field{S: &m.Name, What: "metric name"},
				telemetry.Field{S: &m.Description, What: "metric description"}, telemetry.Field{S: &m.Unit, What: "metric unit"})
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				validDataPoints(d.DataPoints, points, exemplars)
			case metricdata.Gauge[float64]:
				validDataPoints(d.DataPoints, points, exemplars)
			case metricdata.Sum[int64]:
				validDataPoints(d.DataPoints, points, exemplars)
			case metricdata.Sum[float64]:
				validDataPoints(d.DataPoints, points, exemplars)
			case metricdata.Histogram[int64]:
				validHistogramPoints(d.DataPoints, points, exemplars)
			case metricdata.Histogram[float64]:
				validHistogramPoints(d.DataPoints, points, exemplars)
			case metricdata.ExponentialHistogram[int64]:
				validExponentialPoints(d.DataPoints, points, exemplars)
			case metricdata.ExponentialHistogram[float64]:
				validExponentialPoints(d.DataPoints, points, exemplars)
			case metricdata.Summary:
				for k := range d.DataPoints {
					d.DataPoints[k].Attributes, _ = telemetry.ValidSet(d.DataPoints[k].Attributes, points)
				}
			}
		}
	}
}

func validDataPoints[N int64 | float64](dps []metricdata.DataPoint[N], points, exemplars func(string)) {
	for i := range dps {
		dps[i].Attributes, _ = telemetry.ValidSet(dps[i].Attributes, points)
		validExemplars(dps[i].Exemplars, exemplars)
	}
}

func validHistogramPoints[N int64 | float64](dps []metricdata.HistogramDataPoint[N], points, exemplars func(string)) {
	for i := range dps {
		dps[i].Attributes, _ = telemetry.ValidSet(dps[i].Attributes, points)
		validExemplars(dps[i].Exemplars, exemplars)
	}
}

func validExponentialPoints[N int64 | float64](dps []metricdata.ExponentialHistogramDataPoint[N], points, exemplars func(string)) {
	for i := range dps {
		dps[i].Attributes, _ = telemetry.ValidSet(dps[i].Attributes, points)
		validExemplars(dps[i].Exemplars, exemplars)
	}
}

func validExemplars[N int64 | float64](es []metricdata.Exemplar[N], exemplars func(string)) {
	for i := range es {
		es[i].FilteredAttributes, _ = telemetry.ValidKeyValues(es[i].FilteredAttributes, exemplars)
	}
}

// validLogRecords returns records with valid UTF-8 bodies, attributes,
// event names and severity texts, reporting each one it changed: records
// itself when nothing changed, else a copy (records belong to the caller).
// The resource and the instrumentation scope of a record cannot be
// replaced; Setup's resource is valid already.
func validLogRecords(records []sdklog.Record, invalid func(what, source string)) []sdklog.Record {
	var out []sdklog.Record
	attrs := telemetry.ReportKey(invalid, "log attribute ")
	for i := range records {
		r := &records[i]
		body, bc := telemetry.ValidValue(r.Body())
		event, ec := telemetry.ValidString(r.EventName())
		sev, sc := telemetry.ValidString(r.SeverityText())
		var kvs []attribute.KeyValue
		ac := false
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			if !ac {
				_, kc := telemetry.ValidString(string(kv.Key))
				_, vc := telemetry.ValidValue(kv.Value)
				ac = kc || vc
			}
			return !ac
		})
		if ac {
			r.WalkAttributes(func(kv attribute.KeyValue) bool {
				kvs = append(kvs, kv)
				return true
			})
			kvs, _ = telemetry.ValidKeyValues(kvs, attrs)
		}
		if !bc && !ec && !sc && !ac {
			continue
		}
		if out == nil {
			out = slices.Clone(records)
		}
		c := r.Clone()
		if bc {
			invalid("log body", "")
			c.SetBody(body)
		}
		if ec {
			invalid("log event name", "")
			c.SetEventName(event)
		}
		if sc {
			invalid("log severity text", "")
			c.SetSeverityText(sev)
		}
		if ac {
			c.SetAttributes(kvs...)
		}
		out[i] = c
	}
	if out == nil {
		return records
	}
	return out
}
