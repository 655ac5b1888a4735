package telemetry

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/resource"
)

// TestDiagnosticsHideValues: what the SDK and the exporters report about a
// malformed header, a malformed endpoint with credentials or an invalid
// variable reaches the Lens logger without the values.
func TestDiagnosticsHideValues(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	d := NewDiagnostics(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	_, escErr := url.PathUnescape("Bearer SECRET%zz")
	d.Logger().Error(escErr, "escape header value", "value", "Bearer SECRET%zz")
	d.Logger().Error(errors.New("missing '="), "parse headers", "input", "SECRET")
	d.Handle(fmt.Errorf("invalid OTEL_EXPORTER_OTLP_HEADERS value a=Bearer SECRET%%zz: %w", errors.New("invalid header value: Bearer SECRET%zz")))
	d.Handle(errors.New(`parse "http://user:SECRET@[::1": missing ']' in host`))
	out := buf.String()
	for _, part := range []string{"SECRET", "%zz", "Bearer"} {
		if strings.Contains(out, part) {
			t.Errorf("the log shows %q:\n%s", part, out)
		}
	}
	for _, want := range []string{"escape header value", "OTEL_EXPORTER_OTLP_HEADERS", "[redacted]@"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
}

// TestDiagnosticsOnce: the SDK's reports about its parse of the carrier are
// one DEBUG record whatever their wording; its re-reads of the settings
// Setup validated are DEBUG; other problems are WARN once each.
func TestDiagnosticsOnce(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	d := NewDiagnostics(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	partial := fmt.Errorf("%w: missing value: []", resource.ErrPartialResource)
	d.Handle(partial)
	d.Handle(fmt.Errorf("error detecting resource: %w", partial))
	d.Handle(url.EscapeError("%zz"))
	d.Logger().Error(errors.New("duration overflows time.Duration"), "duration overflows time.Duration", "environment variable", "OTEL_METRIC_EXPORT_INTERVAL", "value", "18446744073710")
	d.Logger().Error(errors.New("bad"), "parse duration", "input", "ten")
	for range 3 {
		d.Handle(errors.New("export failed"))
	}
	var debug, warn int
	for l := range strings.Lines(buf.String()) {
		switch {
		case strings.Contains(l, "level=DEBUG"):
			debug++
		case strings.Contains(l, "level=WARN"):
			warn++
		}
	}
	if debug != 3 || warn != 1 {
		t.Errorf("%d DEBUG and %d WARN records, want 3 (the carrier once, two re-read settings) and 1:\n%s", debug, warn, buf.String())
	}
	if !strings.Contains(buf.String(), "variable=OTEL_METRIC_EXPORT_INTERVAL") {
		t.Errorf("the re-read setting is not named:\n%s", buf.String())
	}
}
