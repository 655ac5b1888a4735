package telemetry

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nemolens/lens-go/environ"
)

// Tests of the range checks of the numeric settings at their boundaries
// (docs/resource.md#configuration): the lower bounds are inclusive (0 ms
// for OTEL_BSP_SCHEDULE_DELAY, 1 for everything else), the upper bound of
// every duration is 24 h inclusive, a queue holds at most MaxQueueSize
// (1 << 20), a batch never exceeds its queue, and the default batch shrinks
// to fit a smaller queue. Every numeric variable has its boundary values in
// numberCases, whose rows also seed FuzzReadSettingsNumber.

const maxMillis = int64(MaxDuration / time.Millisecond) // 86,400,000

// numberCase is one numeric setting's value: want is what ReadSettings
// makes of it, warn whether it is replaced by its default with a warning.
type numberCase struct {
	env  environ.Map
	get  func(Settings) int64 // the setting, in ms for durations
	want int64
	warn string // the variable named by the one warning; "" for none
}

func ms(d time.Duration) int64 { return int64(d / time.Millisecond) }

// durationCases are the boundary rows of a duration variable read in
// [low, MaxDuration] ms.
func durationCases(name string, low int64, def time.Duration, get func(Settings) time.Duration) map[string]numberCase {
	g := func(s Settings) int64 { return ms(get(s)) }
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	return map[string]numberCase{
		name + "=low-1":  {environ.Map{name: i(low - 1)}, g, ms(def), name},
		name + "=low":    {environ.Map{name: i(low)}, g, low, ""},
		name + "=low+1":  {environ.Map{name: i(low + 1)}, g, low + 1, ""},
		name + "=24h-1":  {environ.Map{name: i(maxMillis - 1)}, g, maxMillis - 1, ""},
		name + "=24h":    {environ.Map{name: i(maxMillis)}, g, maxMillis, ""},
		name + "=24h+1":  {environ.Map{name: i(maxMillis + 1)}, g, ms(def), name},
		name + "=spaced": {environ.Map{name: " " + i(maxMillis) + " "}, g, maxMillis, ""},
		name + "=blank":  {environ.Map{name: " \t "}, g, ms(def), ""}, // as if unset: no warning
	}
}

// queueCases are the boundary rows of a queue variable and of its batch
// variable (whose upper bound is the queue size, and whose default is
// min(defBatch, queue)).
func queueCases(queue, batch string, defQueue, defBatch int, getQ, getB func(Settings) int) map[string]numberCase {
	q := func(s Settings) int64 { return int64(getQ(s)) }
	b := func(s Settings) int64 { return int64(getB(s)) }
	i := strconv.Itoa
	return map[string]numberCase{
		queue + "=0":         {environ.Map{queue: "0"}, q, int64(defQueue), queue},
		queue + "=1":         {environ.Map{queue: "1"}, q, 1, ""},
		queue + "=2":         {environ.Map{queue: "2"}, q, 2, ""},
		queue + "=max-1":     {environ.Map{queue: i(MaxQueueSize - 1)}, q, MaxQueueSize - 1, ""},
		queue + "=max":       {environ.Map{queue: i(MaxQueueSize)}, q, MaxQueueSize, ""},
		queue + "=max+1":     {environ.Map{queue: i(MaxQueueSize + 1)}, q, int64(defQueue), queue},
		queue + "=maxint32+": {environ.Map{queue: "2147483648"}, q, int64(defQueue), queue},
		queue + "=blank":     {environ.Map{queue: "  "}, q, int64(defQueue), ""}, // as if unset: no warning

		batch + "=0":                 {environ.Map{batch: "0"}, b, int64(defBatch), batch},
		batch + "=1":                 {environ.Map{batch: "1"}, b, 1, ""},
		batch + "=default-queue":     {environ.Map{batch: i(defQueue)}, b, int64(defQueue), ""},
		batch + "=default-queue+1":   {environ.Map{batch: i(defQueue + 1)}, b, int64(defBatch), batch},
		batch + "=queue(8)":          {environ.Map{queue: "8", batch: "8"}, b, 8, ""},
		batch + "=queue(8)+1":        {environ.Map{queue: "8", batch: "9"}, b, 8, batch}, // the default, shrunk to the queue
		batch + "=max-queue":         {environ.Map{queue: i(MaxQueueSize), batch: i(MaxQueueSize)}, b, MaxQueueSize, ""},
		batch + "=max-queue+1":       {environ.Map{queue: i(MaxQueueSize), batch: i(MaxQueueSize + 1)}, b, int64(defBatch), batch},
		batch + "=bad-queue(max+1)":  {environ.Map{queue: i(MaxQueueSize + 1), batch: i(defQueue)}, b, int64(defQueue), queue},
		batch + "=bad-queue(max+1)+": {environ.Map{queue: i(MaxQueueSize + 1), batch: i(defQueue + 1)}, b, int64(defBatch), queue + "," + batch},

		// The default batch shrinks to fit a smaller queue, and only then.
		batch + "=default/queue(1)":          {environ.Map{queue: "1"}, b, 1, ""},
		batch + "=default/queue(default-1)":  {environ.Map{queue: i(defBatch - 1)}, b, int64(defBatch - 1), ""},
		batch + "=default/queue(default)":    {environ.Map{queue: i(defBatch)}, b, int64(defBatch), ""},
		batch + "=default/queue(default+1)":  {environ.Map{queue: i(defBatch + 1)}, b, int64(defBatch), ""},
		batch + "=default/queue(max)":        {environ.Map{queue: i(MaxQueueSize)}, b, int64(defBatch), ""},
		batch + "=default/queue(invalid, 0)": {environ.Map{queue: "0"}, b, int64(defBatch), queue},
	}
}

// otlpTimeoutCases are the boundary rows of the OTLP timeout variables:
// Signal.Timeout is 0 for a valid value (the exporter reads the variable
// itself) and DefaultOTLPTimeout for an invalid one.
func otlpTimeoutCases(name string) map[string]numberCase {
	g := func(s Settings) int64 { return ms(s.Traces.Timeout) }
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	def := ms(DefaultOTLPTimeout)
	return map[string]numberCase{
		name + "=0":     {environ.Map{name: "0"}, g, def, name},
		name + "=1":     {environ.Map{name: "1"}, g, 0, ""},
		name + "=24h":   {environ.Map{name: i(maxMillis)}, g, 0, ""},
		name + "=24h+1": {environ.Map{name: i(maxMillis + 1)}, g, def, name},
		name + "=blank": {environ.Map{name: " "}, g, 0, ""}, // as if unset: no warning
	}
}

func numberCases() map[string]numberCase {
	all := map[string]numberCase{}
	for _, m := range []map[string]numberCase{
		durationCases("OTEL_BSP_SCHEDULE_DELAY", 0, DefaultBSPScheduleDelay, func(s Settings) time.Duration { return s.BSPScheduleDelay }),
		durationCases("OTEL_BSP_EXPORT_TIMEOUT", 1, DefaultBSPExportTimeout, func(s Settings) time.Duration { return s.BSPExportTimeout }),
		durationCases("OTEL_METRIC_EXPORT_INTERVAL", 1, DefaultMetricExportInterval, func(s Settings) time.Duration { return s.MetricExportInterval }),
		durationCases("OTEL_METRIC_EXPORT_TIMEOUT", 1, DefaultMetricExportTimeout, func(s Settings) time.Duration { return s.MetricExportTimeout }),
		durationCases("OTEL_BLRP_SCHEDULE_DELAY", 1, DefaultBLRPScheduleDelay, func(s Settings) time.Duration { return s.BLRPScheduleDelay }),
		durationCases("OTEL_BLRP_EXPORT_TIMEOUT", 1, DefaultBLRPExportTimeout, func(s Settings) time.Duration { return s.BLRPExportTimeout }),
		queueCases("OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", DefaultBSPMaxQueueSize, DefaultBSPMaxExportBatch,
			func(s Settings) int { return s.BSPMaxQueueSize }, func(s Settings) int { return s.BSPMaxExportBatch }),
		queueCases("OTEL_BLRP_MAX_QUEUE_SIZE", "OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", DefaultBLRPMaxQueueSize, DefaultBLRPMaxExportBatch,
			func(s Settings) int { return s.BLRPMaxQueueSize }, func(s Settings) int { return s.BLRPMaxExportBatch }),
		otlpTimeoutCases("OTEL_EXPORTER_OTLP_TIMEOUT"),
		otlpTimeoutCases("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"),
	} {
		for k, v := range m {
			all[k] = v
		}
	}
	return all
}

// TestNumericSettingBoundaries: each boundary value of each numeric
// setting is accepted or replaced by its default, with exactly one warning
// per bad variable, naming it; ReadSettings never fails for a number.
func TestNumericSettingBoundaries(t *testing.T) {
	t.Parallel()
	for name, tc := range numberCases() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := ReadSettings(tc.env, Config{}, Needs{Traces: true})
			if err != nil {
				t.Fatalf("ReadSettings(%v): %v", tc.env, err)
			}
			if got := tc.get(s); got != tc.want {
				t.Errorf("ReadSettings(%v) = %d, want %d", tc.env, got, tc.want)
			}
			var want []string
			if tc.warn != "" {
				want = strings.Split(tc.warn, ",")
			}
			if len(s.Warnings) != len(want) {
				t.Fatalf("ReadSettings(%v): warnings %q, want one for each of %q", tc.env, s.Warnings, want)
			}
			for i, v := range want {
				if !strings.HasPrefix(s.Warnings[i], v+"=") {
					t.Errorf("warning %q does not name %s", s.Warnings[i], v)
				}
			}
		})
	}
}

// TestSettingsDefaults: unset, every numeric setting has its default, and
// the default batch fits the default queue.
func TestSettingsDefaults(t *testing.T) {
	t.Parallel()
	s, err := ReadSettings(environ.Map{}, Config{}, Needs{Traces: true})
	if err != nil || len(s.Warnings) != 0 {
		t.Fatalf("ReadSettings(empty) = %v, warnings %q", err, s.Warnings)
	}
	got := []time.Duration{s.BSPScheduleDelay, s.BSPExportTimeout, s.MetricExportInterval, s.MetricExportTimeout, s.BLRPScheduleDelay, s.BLRPExportTimeout, s.Traces.Timeout}
	want := []time.Duration{DefaultBSPScheduleDelay, DefaultBSPExportTimeout, DefaultMetricExportInterval, DefaultMetricExportTimeout, DefaultBLRPScheduleDelay, DefaultBLRPExportTimeout, 0}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("duration %d = %v, want %v", i, got[i], want[i])
		}
	}
	if s.BSPMaxQueueSize != DefaultBSPMaxQueueSize || s.BSPMaxExportBatch != DefaultBSPMaxExportBatch ||
		s.BLRPMaxQueueSize != DefaultBLRPMaxQueueSize || s.BLRPMaxExportBatch != DefaultBLRPMaxExportBatch {
		t.Errorf("queues %d/%d, batches %d/%d", s.BSPMaxQueueSize, s.BLRPMaxQueueSize, s.BSPMaxExportBatch, s.BLRPMaxExportBatch)
	}
}

// FuzzReadSettingsNumber: whatever the value of a numeric variable,
// ReadSettings does not fail, every setting is within its range, every
// batch fits its queue, and a value is either taken as it is (a decimal
// integer in range) or replaced by the default with one warning naming the
// variable. The seeds are the rows of numberCases.
func FuzzReadSettingsNumber(f *testing.F) {
	names := map[string]bool{}
	for _, tc := range numberCases() {
		for k, v := range tc.env {
			names[k] = true
			f.Add(k, v)
		}
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		if !names[name] {
			return
		}
		s, err := ReadSettings(environ.Map{name: value}, Config{}, Needs{Traces: true})
		if err != nil {
			t.Fatalf("ReadSettings(%s=%q): %v", name, value, err)
		}
		inRange := func(d time.Duration, low int64) bool {
			return ms(d) >= low && d <= MaxDuration && d%time.Millisecond == 0
		}
		if !inRange(s.BSPScheduleDelay, 0) || !inRange(s.BSPExportTimeout, 1) || !inRange(s.MetricExportInterval, 1) ||
			!inRange(s.MetricExportTimeout, 1) || !inRange(s.BLRPScheduleDelay, 1) || !inRange(s.BLRPExportTimeout, 1) {
			t.Errorf("%s=%q: a duration out of range: %+v", name, value, s)
		}
		for _, qb := range [][2]int{{s.BSPMaxQueueSize, s.BSPMaxExportBatch}, {s.BLRPMaxQueueSize, s.BLRPMaxExportBatch}} {
			if qb[0] < 1 || qb[0] > MaxQueueSize || qb[1] < 1 || qb[1] > qb[0] {
				t.Errorf("%s=%q: queue %d, batch %d", name, value, qb[0], qb[1])
			}
		}
		switch len(s.Warnings) {
		case 0:
			if strings.TrimSpace(value) != "" {
				if _, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err != nil {
					t.Errorf("%s=%q is not an integer, and no warning", name, value)
				}
			}
		case 1:
			if !strings.HasPrefix(s.Warnings[0], name+"=") {
				t.Errorf("%s=%q: warning %q does not name the variable", name, value, s.Warnings[0])
			}
		default:
			t.Errorf("%s=%q: warnings %q, want at most one", name, value, s.Warnings)
		}
	})
}

// TestExporterMessageNamesItsSource: an unknown Config.Exporter read from
// NEMO_LENS_EXPORTER names the variable and the accepted values; one set in
// code names the field; errors.Is finds ErrUnknownExporter either way.
func TestExporterMessageNamesItsSource(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  environ.Map
		cfg  Config
		want string
	}{
		{"from the variable", environ.Map{"NEMO_LENS_EXPORTER": " stdout "}, Config{Exporter: "stdout"},
			`lens: NEMO_LENS_EXPORTER=" stdout ": unknown exporter (want "otlp" or "console")`},
		{"set in code", environ.Map{}, Config{Exporter: "zipkin"},
			`lens: Config.Exporter "zipkin": unknown exporter (want "otlp" or "console")`},
		{"code beats a different variable", environ.Map{"NEMO_LENS_EXPORTER": "otlp"}, Config{Exporter: "zipkin"},
			`lens: Config.Exporter "zipkin": unknown exporter (want "otlp" or "console")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadSettings(tc.env, tc.cfg, Needs{Traces: true})
			if err == nil || err.Error() != tc.want || !errors.Is(err, ErrUnknownExporter) {
				t.Errorf("ReadSettings: %v, want %q (and errors.Is ErrUnknownExporter)", err, tc.want)
			}
		})
	}
}

// TestSignalVariablePrecedence: the signal's own variable wins over the
// generic one, whatever the generic one says; a blank OTEL_PROPAGATORS is
// unset, and a set one is read from the injected environment, blank names
// left out. Breaks: settings.go, in the protocol loop, the `break` after
// `s.Protocol = v` as `continue` (the generic protocol overrides); in the
// timeout loop the last `break` as `continue` (the generic timeout's error
// is reported although the signal's own is valid);
// `strings.TrimSpace(raw) != ""` of OTEL_PROPAGATORS as `==`.
func TestSignalVariablePrecedence(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env         environ.Map
		protocol    string
		timeout     time.Duration
		warnings    int
		propagators []string
	}{
		"defaults":                  {environ.Map{}, ProtocolGRPC, 0, 0, []string{"tracecontext", "baggage"}},
		"signal protocol wins":      {environ.Map{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, ProtocolHTTPProtobuf, 0, 0, []string{"tracecontext", "baggage"}},
		"generic protocol":          {environ.Map{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": " ", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, ProtocolHTTPProtobuf, 0, 0, []string{"tracecontext", "baggage"}},
		"signal timeout wins":       {environ.Map{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "500", "OTEL_EXPORTER_OTLP_TIMEOUT": "abc"}, ProtocolGRPC, 0, 0, []string{"tracecontext", "baggage"}},
		"generic timeout invalid":   {environ.Map{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "", "OTEL_EXPORTER_OTLP_TIMEOUT": "abc"}, ProtocolGRPC, DefaultOTLPTimeout, 1, []string{"tracecontext", "baggage"}},
		"propagators blank":         {environ.Map{"OTEL_PROPAGATORS": " \t"}, ProtocolGRPC, 0, 0, []string{"tracecontext", "baggage"}},
		"propagators set":           {environ.Map{"OTEL_PROPAGATORS": "b3, ,tracecontext"}, ProtocolGRPC, 0, 0, []string{"b3", "tracecontext"}},
		"propagators set, no blank": {environ.Map{"OTEL_PROPAGATORS": "none"}, ProtocolGRPC, 0, 0, []string{"none"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := ReadSettings(tc.env, Config{}, Needs{Traces: true})
			if err != nil {
				t.Fatalf("ReadSettings(%v): %v", tc.env, err)
			}
			if s.Traces.Protocol != tc.protocol || s.Traces.Timeout != tc.timeout || len(s.Warnings) != tc.warnings {
				t.Errorf("ReadSettings(%v): protocol %q, timeout %v, warnings %q; want %q, %v, %d warnings",
					tc.env, s.Traces.Protocol, s.Traces.Timeout, s.Warnings, tc.protocol, tc.timeout, tc.warnings)
			}
			if !slices.Equal(s.Propagators, tc.propagators) {
				t.Errorf("ReadSettings(%v): propagators %q, want %q", tc.env, s.Propagators, tc.propagators)
			}
		})
	}
}
