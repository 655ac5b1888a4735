package lens_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/collectortest"
	"github.com/nemolens/lens-go/internal/faulttest"
)

// Fault injection: "telemetry never breaks the job". Every test here runs
// against real collectors (internal/collectortest: real HTTP and gRPC
// servers, a TCP listener that never answers, a port that refuses
// connections) and, wherever the real process environment or stderr
// matters — the OTLP exporters read OTEL_EXPORTER_OTLP_* from the process
// environment and report through the OpenTelemetry globals — in a child
// process: runHelper re-runs the test binary (TestHelperProcess, scenario
// "run") with exactly the environment a test gives it and reports what
// happened, and the test reads the child's stderr as a user would see it.

// runOutcome is what one run of the "run" scenario saw.
type runOutcome struct {
	SetupErr    string
	SetupErrs   int // errors joined in the Setup error
	Exporting   bool
	Counts      lens.SpanCounts // right after Shutdown returned
	Settled     lens.SpanCounts // once nothing is pending (or 10 s later)
	ShutdownErr string
	Refused     bool // errors.Is(ShutdownErr, lens.ErrCollectorRefused)
	Deadline    bool // errors.Is(ShutdownErr, context.DeadlineExceeded)
	Setup       time.Duration
	Shutdown    time.Duration
	Records     []logRecord // with LENS_FAULT_LOGGER=capture
}

// helperRun is a training process: an enabled Setup in the real process
// environment (nothing injected but the host facts), N spans, each with a
// counter increment and a log record, then Shutdown within a deadline.
// Variables:
//
//	LENS_FAULT_SIGNALS   the signals to enable (default traces,metrics,logs)
//	LENS_FAULT_SPANS     spans to end (default 100)
//	LENS_FAULT_DEADLINE  Shutdown's deadline (default 5s)
//	LENS_FAULT_LOGGER    "capture": a capturing logger at DEBUG; otherwise
//	                     none is given (slog.Default, on stderr)
//	LENS_FAULT_GLOBALS   "off": WithoutGlobals
//	LENS_FAULT_EXPORTER  Config.Exporter; "console" writes to io.Discard
//	LENS_FAULT_READER    "manual": a caller's ManualReader for metrics
func helperRun(t *testing.T) runOutcome {
	var r runOutcome
	cfg := enabledConfig()
	signals := os.Getenv("LENS_FAULT_SIGNALS")
	if signals == "" {
		signals = "traces,metrics,logs"
	}
	cfg.TracesDisabled = !strings.Contains(signals, "traces")
	cfg.MetricsDisabled = !strings.Contains(signals, "metrics")
	cfg.LogsEnabled = strings.Contains(signals, "logs")
	spans := 100
	if v := os.Getenv("LENS_FAULT_SPANS"); v != "" {
		spans, _ = strconv.Atoi(v)
	}
	deadline := 5 * time.Second
	if v := os.Getenv("LENS_FAULT_DEADLINE"); v != "" {
		deadline, _ = time.ParseDuration(v)
	}
	opts := []lens.SetupOption{
		lens.WithDetectOptions(detectOptions(t, defaultLive)...),
		// A training process names its rank (and the no-rank warning would
		// be on every stderr).
		lens.WithResourceAttributes(attribute.Int("nv.dl.rank", 0)),
	}
	var logs func() []logRecord
	if os.Getenv("LENS_FAULT_LOGGER") == "capture" {
		var logger *slog.Logger
		logger, logs = newCapture()
		opts = append(opts, lens.WithLogger(logger))
	}
	if os.Getenv("LENS_FAULT_GLOBALS") == "off" {
		opts = append(opts, lens.WithoutGlobals())
	}
	if v := os.Getenv("LENS_FAULT_EXPORTER"); v != "" {
		cfg.Exporter = v
		opts = append(opts, lens.WithConsoleWriter(io.Discard))
	}
	if os.Getenv("LENS_FAULT_READER") == "manual" {
		opts = append(opts, lens.WithMetricReader(sdkmetric.NewManualReader()))
	}

	start := time.Now()
	h, err := lens.Setup(context.Background(), cfg, opts...)
	r.Setup = time.Since(start)
	if err != nil {
		r.SetupErr = err.Error()
		r.SetupErrs = 1
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			r.SetupErrs = len(j.Unwrap())
		}
		return r
	}
	r.Exporting = h.IsExporting()
	tr := h.Tracer("fault")
	c, _ := h.Meter("fault").Int64Counter("fault.steps")
	for range spans {
		ctx, s := tr.Start(context.Background(), "step")
		c.Add(ctx, 1)
		h.Logger().InfoContext(ctx, "step done")
		s.End()
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start = time.Now()
	err = h.Shutdown(ctx)
	r.Shutdown = time.Since(start)
	r.Counts = h.SpanCounts()
	if err != nil {
		r.ShutdownErr = err.Error()
		r.Refused = errors.Is(err, lens.ErrCollectorRefused)
		r.Deadline = errors.Is(err, context.DeadlineExceeded)
	}
	// An export abandoned at the deadline returns (and is counted) a little
	// later.
	for wait := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if r.Settled = h.SpanCounts(); r.Settled.Pending == 0 || time.Now().After(wait) {
			break
		}
	}
	if logs != nil {
		r.Records = logs()
	}
	return r
}

// collectorFault is one way a collector can misbehave.
type collectorFault struct {
	name     string
	endpoint func(t *testing.T, protocol string) (endpoint string, c *collectortest.Collector)
	deadline time.Duration
}

// The deadlines: where the outcome is not the deadline (refused, failing),
// 30 s, a hang guard only (Shutdown returns at once; a loaded machine must
// not turn that into a deadline error); where it is, 1 s.
var collectorFaults = []collectorFault{
	{"refused", func(t *testing.T, _ string) (string, *collectortest.Collector) { return collectortest.Refused(t), nil }, 30 * time.Second},
	{"silent-listener", func(t *testing.T, _ string) (string, *collectortest.Collector) { return collectortest.Silent(t), nil }, time.Second},
	{"hanging-server", func(t *testing.T, p string) (string, *collectortest.Collector) {
		c := collectortest.New(t, p, collectortest.Hang)
		return c.Endpoint, c
	}, time.Second},
	{"failing-server", func(t *testing.T, p string) (string, *collectortest.Collector) {
		c := collectortest.New(t, p, collectortest.Fail)
		return c.Endpoint, c
	}, 30 * time.Second},
}

// checkDistinctLines fails when a line of stderr repeats: each problem is
// reported once.
func checkDistinctLines(t *testing.T, stderr string) {
	t.Helper()
	seen := map[string]bool{}
	for _, l := range faulttest.Lines(stderr) {
		// Drop the log package's time stamp.
		if len(l) > 20 && l[4] == '/' && l[7] == '/' {
			l = l[20:]
		}
		if seen[l] {
			t.Errorf("stderr repeats %q:\n%s", l, stderr)
		}
		seen[l] = true
	}
}

// TestFaultCollector: a process whose collector refuses connections,
// accepts them and never answers (a bare TCP listener, or an OTLP server
// whose handler hangs), or answers every export with an error (HTTP 500,
// gRPC Internal), over gRPC and HTTP: Setup succeeds, 100 spans (with
// metrics and log records) are produced without blocking, Shutdown returns —
// at once with an error wrapping ErrCollectorRefused when the collector
// refuses, with the deadline's error when it never answers, with the
// collector's error when it fails — and every one of the 100 spans is
// counted as failed or dropped, none lost uncounted.
func TestFaultCollector(t *testing.T) {
	t.Parallel()
	for _, protocol := range faulttest.Protocols() {
		for _, f := range collectorFaults {
			t.Run(faulttest.ProtocolName(protocol)+"/"+f.name, func(t *testing.T) {
				t.Parallel()
				endpoint, c := f.endpoint(t, protocol)
				var r runOutcome
				stderr := runHelper(t, "run", map[string]string{
					"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
					"OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
					"LENS_FAULT_DEADLINE":         f.deadline.String(),
				}, &r)
				t.Logf("Shutdown (%v deadline) returned after %v: %s; counts then %+v, settled %+v", f.deadline, r.Shutdown, r.ShutdownErr, r.Counts, r.Settled)
				if r.SetupErr != "" || !r.Exporting {
					t.Fatalf("Setup: %q, exporting %v", r.SetupErr, r.Exporting)
				}
				if s := r.Settled; s.Ended != 100 || s.Exported != 0 || s.Failed+s.Dropped != 100 || s.Pending != 0 {
					t.Errorf("span accounting %+v, want the 100 ended spans all failed or dropped", s)
				}
				if strings.Contains(r.ShutdownErr, "\n") {
					t.Errorf("Shutdown error is not one line: %q", r.ShutdownErr)
				}
				switch f.name {
				case "refused":
					if !r.Refused || r.Deadline {
						t.Errorf("Shutdown error %q: wraps ErrCollectorRefused %v (want true), is a deadline error %v (want false)", r.ShutdownErr, r.Refused, r.Deadline)
					}
					if r.Counts.Pending != 0 {
						t.Errorf("Shutdown finished in time but %d spans are pending", r.Counts.Pending)
					}
				case "failing-server":
					if r.ShutdownErr == "" || r.Refused || r.Deadline {
						t.Errorf("Shutdown error %q (refused %v, deadline %v), want the collector's error", r.ShutdownErr, r.Refused, r.Deadline)
					}
					if r.Counts.Pending != 0 {
						t.Errorf("Shutdown finished in time but %d spans are pending", r.Counts.Pending)
					}
				default: // accepts and never answers
					if !r.Deadline || r.Refused {
						t.Errorf("Shutdown error %q: a deadline error %v (want true), refused %v (want false)", r.ShutdownErr, r.Deadline, r.Refused)
					}
				}
				if c != nil && c.Requests(collectortest.Traces) == 0 {
					t.Errorf("the collector received no trace export")
				}
				checkDistinctLines(t, stderr)
			})
		}
	}
}

// TestFaultHeadersNoSecrets: a malformed OTEL_EXPORTER_OTLP_HEADERS holding
// a bearer token, in a Setup-ed process with the real environment and the
// default logger, over both protocols and all three signals: telemetry still
// flows, and no part of the token reaches stderr or any export.
func TestFaultHeadersNoSecrets(t *testing.T) {
	t.Parallel()
	for _, protocol := range faulttest.Protocols() {
		for form, header := range faulttest.HeaderForms() {
			t.Run(faulttest.ProtocolName(protocol)+"/"+form, func(t *testing.T) {
				t.Parallel()
				c := collectortest.New(t, protocol, collectortest.OK)
				var r runOutcome
				stderr := runHelper(t, "run", map[string]string{
					"OTEL_EXPORTER_OTLP_ENDPOINT": c.Endpoint,
					"OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
					"OTEL_EXPORTER_OTLP_HEADERS":  header,
				}, &r)
				if r.SetupErr != "" || r.ShutdownErr != "" || r.Settled.Exported != 100 {
					t.Errorf("Setup %q, Shutdown %q, counts %+v: want 100 spans exported", r.SetupErr, r.ShutdownErr, r.Settled)
				}
				for _, part := range faulttest.CanaryParts() {
					if strings.Contains(stderr, part) {
						t.Errorf("stderr shows %q of the secret header:\n%s", part, stderr)
					}
					if c.Contains(part) {
						t.Errorf("an export to the collector holds %q of the secret header", part)
					}
				}
				if !strings.Contains(stderr, "OTEL_EXPORTER_OTLP_HEADERS") && !strings.Contains(stderr, "header") {
					t.Errorf("nothing on stderr says that the headers are malformed:\n%s", stderr)
				}
				checkDistinctLines(t, stderr)
			})
		}
	}
}

// warningsFor returns the lines of text that name the variable (NAME=).
func warningsFor(text, name string) []string {
	var out []string
	for _, l := range faulttest.Lines(text) {
		if strings.Contains(l, name+"=") {
			out = append(out, l)
		}
	}
	return out
}

// TestFaultBadNumbersProcess: every numeric setting out of range at once,
// in the real process environment (where the OpenTelemetry SDK and the
// exporters read some of them too), with traces, metrics and logs over
// both protocols: the process lives, the 100 spans and the metrics and logs
// reach the collector, and stderr has exactly one warning per variable.
func TestFaultBadNumbersProcess(t *testing.T) {
	t.Parallel()
	garbage := map[string]string{}
	for k := range faulttest.BadNumbers() {
		garbage[k] = "1.5s"
	}
	for _, protocol := range faulttest.Protocols() {
		for variant, values := range map[string]map[string]string{"out-of-range": faulttest.BadNumbers(), "not-integers": garbage} {
			t.Run(faulttest.ProtocolName(protocol)+"/"+variant, func(t *testing.T) {
				t.Parallel()
				c := collectortest.New(t, protocol, collectortest.OK)
				env := map[string]string{
					"OTEL_EXPORTER_OTLP_ENDPOINT": c.Endpoint,
					"OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
				}
				for k, v := range values {
					env[k] = v
				}
				var r runOutcome
				stderr := runHelper(t, "run", env, &r)
				if r.SetupErr != "" || r.ShutdownErr != "" || r.Settled != (lens.SpanCounts{Ended: 100, Exported: 100}) {
					t.Errorf("Setup %q, Shutdown %q, counts %+v: want 100 spans exported", r.SetupErr, r.ShutdownErr, r.Settled)
				}
				for _, signal := range []string{collectortest.Traces, collectortest.Metrics, collectortest.Logs} {
					if c.Requests(signal) == 0 {
						t.Errorf("no %s reached the collector", signal)
					}
				}
				for name := range values {
					if w := warningsFor(stderr, name); len(w) != 1 {
						t.Errorf("%d warnings about %s on stderr, want 1: %q", len(w), name, w)
					}
				}
				if n := len(faulttest.Lines(stderr)); n != len(values) {
					t.Errorf("%d lines on stderr, want %d (one per variable):\n%s", n, len(values), stderr)
				}
			})
		}
	}
}

// TestFaultBadNumbersLogger: each bad numeric setting alone (injected
// environment, captured logger): Setup succeeds and exactly one warning,
// naming the variable, goes through the Lens logger.
func TestFaultBadNumbersLogger(t *testing.T) {
	t.Parallel()
	extra := map[string]string{
		"OTEL_BSP_MAX_QUEUE_SIZE=":             "x",
		"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT":    "-5",
		"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT":   "18446744073710",
		"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT":      "ten",
		"OTEL_METRIC_EXPORT_INTERVAL=negative": "-1",
	}
	cases := map[string]string{}
	for k, v := range faulttest.BadNumbers() {
		cases[k] = v
	}
	for k, v := range extra {
		cases[k] = v
	}
	for key, value := range cases {
		name, _, _ := strings.Cut(key, "=")
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			cfg := enabledConfig()
			cfg.LogsEnabled = true
			if !strings.HasPrefix(name, "OTEL_EXPORTER_OTLP_") {
				// Only the OTLP timeouts need OTLP exporters.
				cfg.Exporter = lens.ExporterConsole
			}
			logger, logs := newCapture()
			h, err := lens.Setup(context.Background(), cfg,
				lens.WithEnv(environ.Map{name: value, "OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=0"}),
				lens.WithDetectOptions(detectOptions(t, defaultLive)...),
				lens.WithLogger(logger), lens.WithAllowReinit(), lens.WithoutGlobals(),
				lens.WithConsoleWriter(io.Discard))
			if err != nil {
				t.Fatalf("Setup with %s=%s: %v", name, value, err)
			}
			defer func() {
				// Nothing was produced; an OTLP exporter has nothing to send.
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				_ = h.Shutdown(ctx)
			}()
			var warnings []string
			for _, rec := range logs() {
				if rec.Level >= slog.LevelWarn {
					warnings = append(warnings, rec.Msg)
				}
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], name+"=") {
				t.Errorf("%s=%s: warnings %q, want exactly one naming the variable", name, value, warnings)
			}
		})
	}
}

// TestFaultSDKNoise: the OpenTelemetry SDK parses OTEL_RESOURCE_ATTRIBUTES
// itself, and reports a trailing comma ("partial resource: missing value")
// or a bad escape ("invalid URL escape") through the global error handler —
// on stderr, on the old code, at every Setup. Lens decodes the carrier
// itself: with the default logger nothing reaches stderr, and a DEBUG
// logger receives the SDK's report once.
func TestFaultSDKNoise(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{
		"trailing-comma": "nv.dl.rank=0,a=1,",
		"bad-escape":     "nv.dl.rank=0,a=%zz",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{
				"OTEL_RESOURCE_ATTRIBUTES": text,
				// Every provider the SDK builds: spans, Lens's metric reader,
				// a caller's reader and logs all read the SDK's resource.
				"LENS_FAULT_EXPORTER": lens.ExporterConsole,
			}
			for _, reader := range []string{"", "manual"} {
				env["LENS_FAULT_READER"] = reader
				var r runOutcome
				if stderr := runHelper(t, "run", env, &r); stderr != "" || r.SetupErr != "" {
					t.Errorf("reader %q: Setup %q; stderr:\n%s", reader, r.SetupErr, stderr)
				}
			}
			env["LENS_FAULT_LOGGER"] = "capture"
			var r runOutcome
			if stderr := runHelper(t, "run", env, &r); stderr != "" {
				t.Errorf("with a capturing logger, stderr:\n%s", stderr)
			}
			var debug, other []string
			for _, rec := range r.Records {
				switch {
				case rec.Level == slog.LevelDebug && strings.Contains(rec.Msg, "OTEL_RESOURCE_ATTRIBUTES"):
					debug = append(debug, rec.Msg+" "+rec.Attrs["error"])
				case rec.Level >= slog.LevelWarn:
					other = append(other, rec.Msg)
				}
			}
			if len(debug) != 1 {
				t.Errorf("%d DEBUG records about the SDK's parse, want 1: %q", len(debug), debug)
			}
			if len(other) > 0 {
				t.Errorf("warnings %q", other)
			}
		})
	}
}

// TestFaultStandardSwitches: against an OTLP/HTTP collector that counts
// requests per path, OTEL_SDK_DISABLED=true sends nothing and each
// OTEL_<SIGNAL>_EXPORTER=none silences exactly its signal.
func TestFaultStandardSwitches(t *testing.T) {
	t.Parallel()
	all := []string{collectortest.Traces, collectortest.Metrics, collectortest.Logs}
	for _, tc := range []struct {
		name string
		env  map[string]string
		off  []string
	}{
		{"none", nil, nil},
		{"OTEL_SDK_DISABLED", map[string]string{"OTEL_SDK_DISABLED": "true"}, all},
		{"OTEL_SDK_DISABLED-upper", map[string]string{"OTEL_SDK_DISABLED": " TRUE "}, all},
		{"OTEL_TRACES_EXPORTER", map[string]string{"OTEL_TRACES_EXPORTER": "none"}, []string{collectortest.Traces}},
		{"OTEL_METRICS_EXPORTER", map[string]string{"OTEL_METRICS_EXPORTER": "none"}, []string{collectortest.Metrics}},
		{"OTEL_LOGS_EXPORTER", map[string]string{"OTEL_LOGS_EXPORTER": "none"}, []string{collectortest.Logs}},
		{"traces-and-logs", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "NONE"}, []string{collectortest.Traces, collectortest.Logs}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := collectortest.NewHTTP(t, collectortest.OK)
			env := map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": c.Endpoint,
				"OTEL_EXPORTER_OTLP_PROTOCOL": lens.ProtocolHTTPProtobuf,
			}
			for k, v := range tc.env {
				env[k] = v
			}
			var r runOutcome
			stderr := runHelper(t, "run", env, &r)
			if r.SetupErr != "" || r.ShutdownErr != "" || stderr != "" {
				t.Errorf("Setup %q, Shutdown %q, stderr %q", r.SetupErr, r.ShutdownErr, stderr)
			}
			for _, signal := range all {
				off := strings.Contains(strings.Join(tc.off, ","), signal)
				if n := c.Requests(signal); off && n != 0 {
					t.Errorf("%s is switched off but the collector received %d requests on /v1/%s", signal, n, signal)
				} else if !off && n == 0 {
					t.Errorf("%s is on but the collector received nothing on /v1/%s", signal, signal)
				}
			}
			if wantSpans := !strings.Contains(strings.Join(tc.off, ","), collectortest.Traces); wantSpans != (r.Settled.Exported == 100) {
				t.Errorf("span counts %+v", r.Settled)
			}
			if r.Exporting != (len(tc.off) < len(all)) {
				t.Errorf("IsExporting = %v", r.Exporting)
			}
		})
	}
}

// TestFaultHTTPJSONOneError: OTEL_EXPORTER_OTLP_PROTOCOL=http/json, which
// the Go exporters do not implement, with all three signals on: one
// *ConfigError naming the variable, not one per signal, and nothing stays
// installed.
func TestFaultHTTPJSONOneError(t *testing.T) {
	t.Parallel()
	cfg := enabledConfig()
	cfg.LogsEnabled = true
	logger, _ := newCapture()
	h, err := lens.Setup(context.Background(), cfg,
		lens.WithEnv(environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}),
		lens.WithDetectOptions(detectOptions(t, defaultLive)...),
		lens.WithLogger(logger), lens.WithAllowReinit(), lens.WithoutGlobals())
	if h != nil || err == nil {
		t.Fatalf("Setup = %v, %v; want an error", h, err)
	}
	var ce *lens.ConfigError
	if !errors.As(err, &ce) || ce.Var != "OTEL_EXPORTER_OTLP_PROTOCOL" || ce.Value != "http/json" || !errors.Is(err, lens.ErrInvalidProtocol) {
		t.Errorf("error %v: want a ConfigError for OTEL_EXPORTER_OTLP_PROTOCOL=http/json", err)
	}
	n := 1
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		n = len(j.Unwrap())
	}
	if n != 1 || strings.Count(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL") != 1 || strings.Contains(err.Error(), "\n") {
		t.Errorf("%d errors, want one line naming the variable once: %q", n, err)
	}
}

// TestFaultDetectorMatchesSetup: tracer and meter providers built by hand
// from lens.Detector export exactly the resource of a Setup with the same
// arguments (rank-derived and random service.instance.id alike); a
// cancelled context gives its error and no resource.
func TestFaultDetectorMatchesSetup(t *testing.T) {
	t.Parallel()
	for name, carrierText := range map[string]string{
		"rank":    "nv.dl.rank=3,nv.dl.world_size=8,a=%2Cx",
		"no-rank": "a=1",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := lens.DefaultConfig()
			cfg.Enabled = true // RunID empty: filled the same way by both
			logger, _ := newCapture()
			env := environ.Map{"OTEL_RESOURCE_ATTRIBUTES": carrierText, "SLURM_JOB_ID": "77", "SLURM_PROCID": "3"}
			opts := []lens.ResourceOption{
				lens.WithEnv(env),
				lens.WithDetectOptions(detectOptions(t, live{host: "h", pid: 9, gpu: intp(4)})...),
				lens.WithResourceAttributes(attribute.String("caller", "x")),
				lens.WithLogger(logger),
			}
			ctx := context.Background()
			res, err := resource.New(ctx, resource.WithDetectors(lens.Detector(cfg, opts...)))
			if err != nil {
				t.Fatal(err)
			}
			spans := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSyncer(spans))
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(reader))
			_, span := tp.Tracer("t").Start(ctx, "s")
			span.End()
			var rm metricdata.ResourceMetrics
			if err := reader.Collect(ctx, &rm); err != nil {
				t.Fatal(err)
			}
			exported := spans.GetSpans()
			if len(exported) != 1 {
				t.Fatalf("%d spans exported by the hand-built provider", len(exported))
			}
			_ = tp.Shutdown(ctx)
			_ = mp.Shutdown(ctx)

			h, err := lens.Setup(ctx, cfg, setupOptions(opts, lens.WithSpanExporter(tracetest.NewInMemoryExporter()),
				lens.WithMetricReader(sdkmetric.NewManualReader()), lens.WithAllowReinit(), lens.WithoutGlobals())...)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Shutdown(ctx)
			want := h.Resource()
			if !res.Equal(want) {
				t.Errorf("Detector's resource\n%v\nSetup's\n%v", res, want)
			}
			// The hand-built providers merge the process environment's
			// resource (empty here: the test process has no OTEL_* set, or
			// whatever it has) under it; every Lens attribute is exported as is.
			for _, got := range []*resource.Resource{exported[0].Resource, rm.Resource} {
				for _, kv := range want.Attributes() {
					if v, ok := got.Set().Value(kv.Key); !ok || v != kv.Value {
						t.Errorf("hand-built provider exports %s = %v, Setup %v", kv.Key, v.String(), kv.Value.String())
					}
				}
			}
			if v, ok := want.Set().Value("service.instance.id"); !ok || v.AsString() == "" {
				t.Errorf("no service.instance.id in %v", want)
			}

			cctx, cancel := context.WithCancel(ctx)
			cancel()
			r, err := lens.Detector(cfg, opts...).Detect(cctx)
			if !errors.Is(err, context.Canceled) || r != nil {
				t.Errorf("Detect(cancelled) = %v, %v; want nil, context.Canceled", r, err)
			}
		})
	}
}

// runWithEnv runs /bin/echo hi with env, as a launcher would.
func runWithEnv(t *testing.T, env []string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/echo", "hi")
	cmd.Env = env
	out, err := cmd.Output()
	return string(out), err
}

// TestFaultChildEnvCarrierTooLarge: ChildEnv with an inherited carrier that
// re-encodes beyond the per-string limit, and with overrides that do, the
// inherited carrier being larger still: the returned environment always
// starts a real child, and the error says why the carrier is not the
// composed one.
func TestFaultChildEnvCarrierTooLarge(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the 128 KiB per-string limit is Linux's")
	}
	if len(faulttest.BigCarrier()) != 44012 || len(faulttest.FullCarrier()) != 131046 {
		t.Fatalf("carriers of %d and %d bytes", len(faulttest.BigCarrier()), len(faulttest.FullCarrier()))
	}
	huge := strings.Repeat("/", 100000) // 300,000 bytes encoded
	for _, tc := range []struct {
		name        string
		inherited   string // "" means none
		overrides   *attr.Map
		wantCarrier string // "" means none, or an empty one
	}{
		{"inherited-44012", faulttest.BigCarrier(), nil, faulttest.BigCarrier()},
		{"inherited-131046", faulttest.FullCarrier(), nil, faulttest.FullCarrier()},
		{"overrides-too-large", "a=1", attr.FromStrings("nv.dl.role", huge), "a=1"},
		{"neither-fits", "", attr.FromStrings("nv.dl.role", huge), ""},
		{"inherited-too-large-itself", "a=" + strings.Repeat("x", 140000), attr.FromStrings("b", "1"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			list := []string{"PATH=" + os.Getenv("PATH")}
			if tc.inherited != "" {
				list = append(list, "OTEL_RESOURCE_ATTRIBUTES="+tc.inherited)
			}
			env, err := carrier.ChildEnv(context.Background(), tc.overrides, carrier.WithEnviron(list))
			if !errors.Is(err, carrier.ErrCarrierTooLarge) {
				t.Errorf("ChildEnv error %v, want ErrCarrierTooLarge", err)
			}
			got, ok := environ.Last(env, carrier.EnvVar)
			if got != tc.wantCarrier || tc.wantCarrier != "" && !ok {
				t.Errorf("child carrier of %d bytes (set %v), want %d bytes", len(got), ok, len(tc.wantCarrier))
			}
			if out, err := runWithEnv(t, env); err != nil || out != "hi\n" {
				t.Errorf("child: %q, %v", out, err)
			}
		})
	}
}

// TestFaultNULKey: a key containing NUL cannot be carried (no environment
// variable can hold NUL, and exec rejects an environment that contains
// one): Format drops it and reports it, and ChildEnv returns an environment
// that starts a real child.
func TestFaultNULKey(t *testing.T) {
	t.Parallel()
	m := attr.FromStrings("a\x00b", "1", "ok", "2", " \x00", "3")
	text, dropped := carrier.Format(m)
	if text != "ok=2" {
		t.Errorf("Format = %q, want ok=2", text)
	}
	if len(dropped) != 2 || dropped[0].Key != "a\x00b" || !errors.Is(dropped[0].Err, carrier.ErrKeyNotCarried) {
		t.Errorf("dropped %v, want a\\x00b and \" \\x00\" with ErrKeyNotCarried", dropped)
	}
	env, err := carrier.ChildEnv(context.Background(), m, carrier.WithEnviron([]string{"PATH=" + os.Getenv("PATH")}))
	var d carrier.Dropped
	if !errors.As(err, &d) || !errors.Is(err, carrier.ErrKeyNotCarried) {
		t.Errorf("ChildEnv error %v, want the dropped keys", err)
	}
	for _, kv := range env {
		if strings.IndexByte(kv, 0) >= 0 {
			t.Errorf("child environment entry %q holds NUL", kv)
		}
	}
	if out, err := runWithEnv(t, env); err != nil || out != "hi\n" {
		t.Errorf("child: %q, %v", out, err)
	}
}

// slowExporter takes a millisecond per export and counts what it accepts.
type slowExporter struct {
	mu       sync.Mutex
	accepted int64
}

func (e *slowExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	select {
	case <-time.After(time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	e.mu.Lock()
	e.accepted += int64(len(spans))
	e.mu.Unlock()
	return nil
}

func (e *slowExporter) Shutdown(context.Context) error { return nil }

func (e *slowExporter) count() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.accepted
}

// TestFaultForceFlushStorm: Handle.ForceFlush from 300 goroutines at once,
// with a slow exporter and a queue of 256 (OTEL_BSP_MAX_QUEUE_SIZE), while
// two goroutines end 4,000 spans: every ForceFlush returns nil, the counts
// are exactly what the exporter saw, and afterwards a full queue of new
// spans is accepted and exported (on the old code, the SDK's batch
// processor put a marker in the queue for every ForceFlush, dropping spans
// behind the caller's back).
func TestFaultForceFlushStorm(t *testing.T) {
	t.Parallel()
	exp := &slowExporter{}
	f := setupFixture(t, enabledConfig(), environ.Map{"OTEL_BSP_MAX_QUEUE_SIZE": "256", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "64"},
		rank0, defaultLive, lens.WithSpanExporter(exp))
	tr := f.h.Tracer("storm")
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range 2000 {
				_, s := tr.Start(context.Background(), "s")
				s.End()
			}
		})
	}
	errs := make(chan error, 300)
	for range 300 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			errs <- f.h.ForceFlush(ctx)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("ForceFlush: %v", err)
			break
		}
	}
	if err := f.h.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := f.h.SpanCounts()
	if want := (lens.SpanCounts{Ended: 4000, Exported: exp.count(), Dropped: 4000 - exp.count()}); c != want {
		t.Errorf("counts %+v, want %+v", c, want)
	}
	for range 256 {
		_, s := tr.Start(context.Background(), "after")
		s.End()
	}
	if err := f.h.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := f.h.SpanCounts()
	if after.Dropped != c.Dropped || after.Exported != c.Exported+256 || after.Pending != 0 || exp.count() != after.Exported {
		t.Errorf("after 256 more spans: %+v (before %+v); the exporter accepted %d", after, c, exp.count())
	}
}
