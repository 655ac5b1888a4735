package metrics

import (
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/nemolens/lens-go/internal/telemetry"
)

// Metric data with U+FFFD in place of invalid UTF-8
// (docs/resource.md#invalid-utf-8).

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
