package logs

import (
	"slices"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/nemolens/lens-go/internal/telemetry"
)

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
