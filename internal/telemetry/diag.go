package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/internal/logx"
)

// Diagnostics routes what the OpenTelemetry SDK and exporters report — the
// global error handler (otel.Handle) and the SDK's internal logger
// (otel.SetLogger) — through the Lens logger, so that nothing Lens starts
// writes to stderr behind the Lens logger's back:
//
//   - each distinct problem is reported once (later repeats are counted,
//     not printed);
//   - values are never printed: the internal logger's key/value pairs keep
//     their keys only (the OTLP exporters log the offending header value,
//     secrets included, when OTEL_EXPORTER_OTLP_HEADERS is malformed), an
//     invalid URL escape is not quoted (it is part of that value), the
//     exporters' "invalid NAME value VALUE: …" reports keep the name only,
//     and credentials in URLs (scheme://user:password@host) are masked;
//   - errors are shaped by ShapeError (cut, escaped to one line, the OTLP
//     header values given to AddSecrets replaced);
//   - the exporters' own parse of the OTLP endpoints, which Lens reads,
//     validates and passes to them explicitly, is DEBUG;
//   - the SDK's reports about its own parse of OTEL_RESOURCE_ATTRIBUTES
//     (partial resource, invalid URL escape) are DEBUG, once whatever their
//     wording: Lens decodes the carrier itself and that is the resource it
//     exports;
//   - the SDK's reports about the numeric settings it reads again after
//     Setup has validated them (OTEL_METRIC_EXPORT_*, the OTLP timeouts)
//     are DEBUG: Setup has warned once and passes the value it uses.
type Diagnostics struct {
	logger *slog.Logger // nil: slog.Default() at call time

	mu      sync.Mutex
	seen    map[string]int
	dropped int
	secrets []string
}

// AddSecrets adds text that no message may show (the OTLP header values,
// Settings.Secrets); [ShapeError] replaces it.
func (d *Diagnostics) AddSecrets(secrets ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range secrets {
		if !slices.Contains(d.secrets, s) {
			d.secrets = append(d.secrets, s)
		}
	}
}

// shape shapes err with the secrets (see ShapeError).
func (d *Diagnostics) shape(err error) string {
	d.mu.Lock()
	secrets := d.secrets
	d.mu.Unlock()
	return ShapeError(err, secrets).Error()
}

// maxDistinct bounds the number of distinct messages remembered.
const maxDistinct = 256

// NewDiagnostics returns diagnostics that log to logger (nil:
// slog.Default() at the time of logging).
func NewDiagnostics(logger *slog.Logger) *Diagnostics {
	return &Diagnostics{logger: logger, seen: map[string]int{}}
}

// first reports whether msg is new, and counts it.
func (d *Diagnostics) first(msg string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n, ok := d.seen[msg]; ok {
		d.seen[msg] = n + 1
		return false
	}
	if len(d.seen) >= maxDistinct {
		d.dropped++
		return false
	}
	d.seen[msg] = 1
	return true
}

// Handle implements otel.ErrorHandler.
func (d *Diagnostics) Handle(err error) {
	if err == nil {
		return
	}
	msg := d.shape(err)
	if sdkResourceParse(err) {
		// Once, whatever the wording: the SDK reports the same carrier
		// once per provider it builds, with and without a prefix.
		if d.first(sdkResourceParseKey) {
			logx.Logger(d.logger, logx.Providers).Debug("the OpenTelemetry SDK's own parse of OTEL_RESOURCE_ATTRIBUTES reported a problem; "+
				"Lens decodes the carrier itself (see lens carrier check)", "error", msg)
		}
		return
	}
	if m := invalidSetting.FindStringSubmatch(msg); m != nil && strings.HasSuffix(m[1], "_ENDPOINT") {
		// The log exporters' own parse of an endpoint Lens has read (and
		// validated) itself, and passes to them explicitly.
		logx.Logger(d.logger, logx.Providers).Debug("OpenTelemetry: "+msg+"; lens reads this setting itself", "variable", m[1])
		return
	}
	if !d.first(msg) {
		return
	}
	logx.Logger(d.logger, logx.Providers).Warn("OpenTelemetry: "+msg, "error", msg)
}

// Warn logs msg at WARN, once.
func (d *Diagnostics) Warn(msg string) {
	if d.first("\x00warn: " + msg) {
		logx.Logger(d.logger, logx.Providers).Warn(msg)
	}
}

// Report logs err at WARN once (an export that failed in the background).
func (d *Diagnostics) Report(err error) { d.Handle(err) }

// InvalidUTF8 reports, at WARN and once per what (an attribute key, the
// span name, …) whatever the source, that a string was exported with U+FFFD
// in place of invalid UTF-8 (see InvalidUTF8Message). A nil receiver
// reports through slog.Default(), once per call.
func (d *Diagnostics) InvalidUTF8(what, source string) {
	if d != nil && !d.first("\x00invalid UTF-8: "+what) {
		return
	}
	var l *slog.Logger
	if d != nil {
		l = d.logger
	}
	logx.Logger(l, logx.Providers).Warn(InvalidUTF8Message(what, source))
}

// sdkResourceParseKey is the key under which the SDK's reports about its
// parse of OTEL_RESOURCE_ATTRIBUTES are counted (they are logged once).
const sdkResourceParseKey = "\x00sdk resource parse"

// sdkResourceParse reports whether err comes from the SDK's parse of
// OTEL_RESOURCE_ATTRIBUTES.
func sdkResourceParse(err error) bool {
	if errors.Is(err, resource.ErrPartialResource) {
		return true
	}
	var ue url.EscapeError
	return errors.As(err, &ue)
}

var userinfo = regexp.MustCompile(`(://)[^/@\s]+@`)

// invalidSetting matches the OTLP exporters' reports of a variable they
// cannot use, "invalid NAME value VALUE: REASON" (otlploggrpc and
// otlploghttp, v0.23.0): VALUE, and REASON, which quotes it, are the raw
// text of the variable — an authorization header, for
// OTEL_EXPORTER_OTLP_HEADERS.
var invalidSetting = regexp.MustCompile(`^invalid (OTEL_[A-Za-z0-9_]+) value `)

// Redact masks credentials in URLs (scheme://user:password@host) and
// drops the value of a variable the exporters report as invalid.
func Redact(s string) string {
	if m := invalidSetting.FindStringSubmatch(s); m != nil {
		return "invalid " + m[1] + " value (the value is not shown: it may hold secrets)"
	}
	return maskUserinfo(s)
}

// maskUserinfo masks credentials in URLs (scheme://user:password@host).
func maskUserinfo(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return userinfo.ReplaceAllString(s, "${1}[redacted]@")
}

// Logger returns a logr.Logger for otel.SetLogger that forwards to the Lens
// logger: errors at WARN, warnings (V(1)) at INFO... no: the SDK logs
// problems with Error and routine events with V(1)–V(8); only Error
// records are kept, at WARN, once each, keys without values.
func (d *Diagnostics) Logger() logr.Logger { return logr.New(&sink{d: d}) }

type sink struct {
	d    *Diagnostics
	name string
}

func (s *sink) Init(logr.RuntimeInfo) {}

// Enabled keeps only verbosity 0 (the SDK's global.Warn is V(1), Info V(4),
// Debug V(8)); those are forwarded at DEBUG when the logger takes DEBUG.
func (s *sink) Enabled(level int) bool {
	if level == 0 {
		return true
	}
	l := s.d.logger
	if l == nil {
		l = slog.Default()
	}
	return l.Enabled(context.Background(), slog.LevelDebug)
}

func (s *sink) Info(level int, msg string, kv ...any) {
	text := "OpenTelemetry: " + Redact(msg) + keysOf(kv)
	if level == 0 {
		if s.d.first(text) {
			logx.Logger(s.d.logger, logx.Providers).Warn(text)
		}
		return
	}
	logx.Logger(s.d.logger, logx.Providers).Debug(text)
}

func (s *sink) Error(err error, msg string, kv ...any) {
	text := "OpenTelemetry: " + Redact(msg) + keysOf(kv)
	var ue url.EscapeError
	switch {
	case errors.As(err, &ue):
		// The escape quotes the value it was found in (a header value).
		text += ": invalid URL escape (not shown)"
	case err != nil:
		text += ": " + s.d.shape(err)
	}
	if name, ok := rereadSetting(msg, kv); ok {
		// Setup has reported this variable once already, and passes the
		// value it uses to the SDK explicitly.
		logx.Logger(s.d.logger, logx.Providers).Debug(text+"; lens reads this setting itself and warned about it", "variable", name)
		return
	}
	if s.d.first(text) {
		logx.Logger(s.d.logger, logx.Providers).Warn(text)
	}
}

// rereadSetting reports whether an SDK error is its own reading of a
// numeric setting that ReadSettings validates (and warns about, once) and
// that Setup passes to the SDK as an explicit option: the periodic metric
// reader's OTEL_METRIC_EXPORT_* ("parse duration", "duration overflows
// time.Duration", with the variable as "environment variable"; sdk/metric
// v1.47.0), and the OTLP exporters' timeouts ("parse duration" with the
// value as "input": the only durations the exporters read are
// OTEL_EXPORTER_OTLP[_<SIGNAL>]_TIMEOUT), and the trace and metric
// exporters' parse of their endpoint ("parse url", the only URLs they
// read), which Lens reads and passes explicitly.
func rereadSetting(msg string, kv []any) (string, bool) {
	for i := 0; i+1 < len(kv); i += 2 {
		switch k, _ := kv[i].(string); k {
		case "environment variable":
			if name, _ := kv[i+1].(string); name == "OTEL_METRIC_EXPORT_INTERVAL" || name == "OTEL_METRIC_EXPORT_TIMEOUT" {
				return name, true
			}
		case "input":
			switch msg {
			case "parse duration":
				return "OTEL_EXPORTER_OTLP_*TIMEOUT", true
			case "parse url":
				// The only URLs the exporters read are the endpoints,
				// which Lens reads, validates and passes explicitly.
				return "OTEL_EXPORTER_OTLP_*ENDPOINT", true
			}
		}
	}
	return "", false
}

func (s *sink) WithValues(...any) logr.LogSink { return s }

func (s *sink) WithName(name string) logr.LogSink {
	return &sink{d: s.d, name: name}
}

// keysOf renders the keys of a key/value list, never the values.
func keysOf(kv []any) string {
	var keys []string
	for i := 0; i < len(kv); i += 2 {
		if k, ok := kv[i].(string); ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	return " (" + strings.Join(keys, ", ") + ": values not shown)"
}
