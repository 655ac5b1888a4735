package lens_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/collectortest"
	"github.com/nemolens/lens-go/internal/faulttest"
)

// otlpExporters returns real OTLP exporters (the ones Setup builds, with
// the endpoint given in code instead of the process environment) for c.
func otlpExporters(t *testing.T, protocol string, c *collectortest.Collector) (sdktrace.SpanExporter, sdkmetric.Exporter, sdklog.Exporter) {
	t.Helper()
	ctx := context.Background()
	var (
		se  sdktrace.SpanExporter
		me  sdkmetric.Exporter
		le  sdklog.Exporter
		err error
	)
	if protocol == lens.ProtocolGRPC {
		se, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(c.Endpoint))
		if err == nil {
			me, err = otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpointURL(c.Endpoint))
		}
		if err == nil {
			le, err = otlploggrpc.New(ctx, otlploggrpc.WithEndpointURL(c.Endpoint))
		}
	} else {
		se, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(c.Endpoint+"/v1/traces"))
		if err == nil {
			me, err = otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(c.Endpoint+"/v1/metrics"))
		}
		if err == nil {
			le, err = otlploghttp.New(ctx, otlploghttp.WithEndpointURL(c.Endpoint+"/v1/logs"))
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return se, me, le
}

// The canary value: its parts must never be logged.
const (
	canaryBad   = "SECRET\xffTOKEN"     // what the source holds
	canaryValid = "SECRET\uFFFDTOKEN"   // what must arrive
	canaryRun   = "SECRET\xfe\xfdTOKEN" // one U+FFFD for the run of two bytes
)

// TestInvalidUTF8Exported: one byte that is not UTF-8 in the host name,
// SLURM_JOB_NAME, WANDB_PROJECT, OTEL_SERVICE_NAME or NEMO_LENS_USER_ID —
// and in a span's name, attributes, event and status, a metric attribute,
// a log message and a log attribute — over OTLP/gRPC and OTLP/HTTP to a
// real collector: Shutdown succeeds, every signal arrives with U+FFFD in
// place of the byte, and the Lens logger has exactly one warning per key,
// naming it (and, for the resource, its source), never the value.
func TestInvalidUTF8Exported(t *testing.T) {
	t.Parallel()
	sources := []struct {
		name, key, source string
		env               environ.Map
		host              string
	}{
		{"hostname", "host.name", "(from the host name)", nil, canaryBad},
		{"SLURM_JOB_NAME", "slurm.job.name", "(from env SLURM_JOB_NAME)", environ.Map{"SLURM_JOB_ID": "42", "SLURM_JOB_NAME": canaryBad}, ""},
		{"WANDB_PROJECT", "wandb.project", "WANDB_PROJECT", environ.Map{"WANDB_PROJECT": canaryBad}, ""},
		{"OTEL_SERVICE_NAME", "service.name", "OTEL_SERVICE_NAME", environ.Map{"OTEL_SERVICE_NAME": canaryBad}, ""},
		{"NEMO_LENS_USER_ID", "nemo.user.id", "NEMO_LENS_USER_ID", environ.Map{"NEMO_LENS_USER_ID": canaryBad}, ""},
	}
	for _, protocol := range faulttest.Protocols() {
		for _, src := range sources {
			t.Run(faulttest.ProtocolName(protocol)+"/"+src.name, func(t *testing.T) {
				t.Parallel()
				c := collectortest.New(t, protocol, collectortest.OK)
				env := environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=0"}
				for k, v := range src.env {
					env[k] = v
				}
				cfg, err := lens.FromEnv(lens.WithEnv(env))
				if err != nil {
					t.Fatal(err)
				}
				cfg.Enabled, cfg.LogsEnabled, cfg.RunID = true, true, "run1"
				l := defaultLive
				if src.host != "" {
					l.host = src.host
				}
				se, me, le := otlpExporters(t, protocol, c)
				logger, logs := newCapture()
				h, err := lens.Setup(context.Background(), cfg,
					lens.WithEnv(env), lens.WithDetectOptions(detectOptions(t, l)...),
					lens.WithSpanExporter(se), lens.WithMetricExporter(me), lens.WithLogExporter(le),
					lens.WithLogger(logger), lens.WithAllowReinit(), lens.WithoutGlobals())
				if err != nil {
					t.Fatalf("Setup: %v", err)
				}
				counter, _ := h.Meter("utf8").Int64Counter("utf8.steps")
				for range 2 { // the second time, nothing more is reported
					ctx, span := h.Tracer("utf8").Start(context.Background(), "step "+canaryBad,
						trace.WithAttributes(attribute.String("span.note", canaryBad), attribute.StringSlice("span.list", []string{"ok", canaryRun})))
					span.AddEvent("event "+canaryBad, trace.WithAttributes(attribute.String("event.note", canaryBad)))
					span.SetStatus(codes.Error, "failed "+canaryBad)
					counter.Add(ctx, 1, metric.WithAttributes(attribute.String("metric.note", canaryBad)))
					h.Logger().InfoContext(ctx, "message "+canaryBad, slog.String("log.note", canaryBad))
					span.End()
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := h.Shutdown(ctx); err != nil {
					t.Fatalf("Shutdown: %v", err)
				}
				if got := h.SpanCounts(); got != (lens.SpanCounts{Ended: 2, Exported: 2}) {
					t.Errorf("span counts %+v, want both spans exported", got)
				}

				checkResource := func(signal string, attrs map[string]any) {
					t.Helper()
					if v := attrs[src.key]; v != canaryValid {
						t.Errorf("%s resource %s = %q, want %q", signal, src.key, v, canaryValid)
					}
				}
				traces := c.TraceRequests()
				if len(traces) == 0 {
					t.Fatal("no trace export arrived")
				}
				for _, req := range traces {
					for _, rs := range req.ResourceSpans {
						checkResource("trace", collectortest.Attrs(rs.Resource.Attributes))
						for _, ss := range rs.ScopeSpans {
							for _, s := range ss.Spans {
								a := collectortest.Attrs(s.Attributes)
								ev := s.Events[0]
								if s.Name != "step "+canaryValid || a["span.note"] != canaryValid ||
									ev.Name != "event "+canaryValid || collectortest.Attrs(ev.Attributes)["event.note"] != canaryValid ||
									s.Status.Message != "failed "+canaryValid {
									t.Errorf("span %q %v, event %q %v, status %q: want every string with U+FFFD", s.Name, a, ev.Name, ev.Attributes, s.Status.Message)
								}
								if l, _ := a["span.list"].([]any); len(l) != 2 || l[1] != canaryValid {
									t.Errorf("span.list = %q, want [ok %q]", a["span.list"], canaryValid)
								}
							}
						}
					}
				}
				metrics := c.MetricRequests()
				if len(metrics) == 0 {
					t.Fatal("no metric export arrived")
				}
				for _, req := range metrics {
					for _, rm := range req.ResourceMetrics {
						checkResource("metric", collectortest.Attrs(rm.Resource.Attributes))
						for _, sm := range rm.ScopeMetrics {
							for _, m := range sm.Metrics {
								for _, dp := range m.GetSum().GetDataPoints() {
									if v := collectortest.Attrs(dp.Attributes)["metric.note"]; v != canaryValid {
										t.Errorf("metric.note = %q, want %q", v, canaryValid)
									}
								}
							}
						}
					}
				}
				records := 0
				for _, req := range c.LogRequests() {
					for _, rl := range req.ResourceLogs {
						checkResource("log", collectortest.Attrs(rl.Resource.Attributes))
						for _, sl := range rl.ScopeLogs {
							for _, r := range sl.LogRecords {
								records++
								if body := r.Body.GetStringValue(); body != "message "+canaryValid {
									t.Errorf("log body %q, want %q", body, "message "+canaryValid)
								}
								if v := collectortest.Attrs(r.Attributes)["log.note"]; v != canaryValid {
									t.Errorf("log.note = %q, want %q", v, canaryValid)
								}
							}
						}
					}
				}
				if records != 2 {
					t.Errorf("%d log records arrived, want 2", records)
				}

				// One warning per key, naming it; the value never.
				recs := logs()
				for _, r := range recs {
					text := r.Msg
					for k, v := range r.Attrs {
						text += " " + k + "=" + v
					}
					if strings.Contains(text, "SECRET") || strings.Contains(text, "TOKEN") {
						t.Errorf("the log shows the value: %q", text)
					}
					if r.Level >= slog.LevelWarn && !strings.Contains(text, "not valid UTF-8") {
						t.Errorf("unexpected warning %q", text)
					}
				}
				for _, what := range []string{
					"resource attribute " + src.key + " ", "span name", "span attribute span.note ", "span attribute span.list ",
					"span event name", "span event attribute event.note ", "span status description",
					"metric attribute metric.note ", "log body", "log attribute log.note ",
				} {
					var found []string
					for _, r := range recs {
						if strings.HasPrefix(r.Msg, what) {
							found = append(found, r.Msg)
						}
					}
					if len(found) != 1 {
						t.Errorf("%d reports of %q, want 1: %q", len(found), what, found)
						continue
					}
					if strings.HasPrefix(what, "resource") && !strings.Contains(found[0], src.source) {
						t.Errorf("report %q does not name the source %q", found[0], src.source)
					}
				}
			})
		}
	}
}

// TestNewResourceInvalidUTF8: NewResource (and so Detector) gives a
// resource that the OTLP exporters can encode: the host name's invalid byte
// is U+FFFD, and one warning names host.name and not the value.
func TestNewResourceInvalidUTF8(t *testing.T) {
	t.Parallel()
	logger, logs := newCapture()
	l := defaultLive
	l.host = canaryBad
	res, err := lens.NewResource(context.Background(), enabledConfig(),
		lens.WithEnv(environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=0"}),
		lens.WithDetectOptions(detectOptions(t, l)...), lens.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := res.Set().Value("host.name"); v.AsString() != canaryValid {
		t.Errorf("host.name = %q, want %q", v.AsString(), canaryValid)
	}
	var warnings []string
	for _, r := range logs() {
		if r.Level >= slog.LevelWarn {
			warnings = append(warnings, r.Msg)
		}
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "resource attribute host.name (from the host name)") || strings.Contains(warnings[0], "SECRET") {
		t.Errorf("warnings %q, want one naming host.name and its source, without the value", warnings)
	}
}
