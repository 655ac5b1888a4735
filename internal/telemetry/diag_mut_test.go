package telemetry

// Tests that kill mutants scripts/mutation.sh found surviving in this
// package (docs/testing.md#mutation); each names the mutant it kills.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// recordHandler keeps every slog record it is given.
type recordHandler struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r)
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

// messages returns "LEVEL message" of each record.
func (h *recordHandler) messages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.recs {
		out = append(out, r.Level.String()+" "+r.Message)
	}
	return out
}

// TestDiagnosticsRemembersAtMostMaxDistinct: exactly maxDistinct distinct
// messages are logged, the next one is not (diag.go, `len(d.seen) >=
// maxDistinct` as >).
func TestDiagnosticsRemembersAtMostMaxDistinct(t *testing.T) {
	t.Parallel()
	h := &recordHandler{}
	d := NewDiagnostics(slog.New(h))
	for i := range maxDistinct + 1 {
		d.Warn(fmt.Sprintf("message %d", i))
	}
	if n := len(h.messages()); n != maxDistinct {
		t.Errorf("%d messages logged, want %d (maxDistinct)", n, maxDistinct)
	}
}

// TestSinkErrorOddKeyValues: an SDK error whose key/value list ends with a
// key and no value is logged, not a panic (diag.go, rereadSetting's
// `i+1 < len(kv)` as <= read past the end).
func TestSinkErrorOddKeyValues(t *testing.T) {
	t.Parallel()
	h := &recordHandler{}
	NewDiagnostics(slog.New(h)).Logger().Error(errors.New("boom"), "export failed", "environment variable")
	if got := h.messages(); len(got) != 1 || !strings.HasPrefix(got[0], "WARN ") {
		t.Errorf("logged %q, want one WARN", got)
	}
}

// TestSinkErrorRereadOnlyTheMetricSettings: only the two OTEL_METRIC_EXPORT_*
// variables Setup reads itself are DEBUG when the SDK reports them; another
// variable is a WARN (diag.go, the second == of rereadSetting's test as !=
// made every variable but OTEL_METRIC_EXPORT_TIMEOUT DEBUG).
func TestSinkErrorRereadOnlyTheMetricSettings(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"OTEL_METRIC_EXPORT_INTERVAL": "DEBUG",
		"OTEL_METRIC_EXPORT_TIMEOUT":  "DEBUG",
		"OTEL_BSP_SCHEDULE_DELAY":     "WARN",
	} {
		h := &recordHandler{}
		NewDiagnostics(slog.New(h)).Logger().Error(errors.New("bad"), "parse duration", "environment variable", name)
		if got := h.messages(); len(got) != 1 || !strings.HasPrefix(got[0], want+" ") {
			t.Errorf("%s: logged %q, want one %s", name, got, want)
		}
	}
}

// TestSinkNamesTheKeys: an SDK message is logged with the keys of its
// key/value list, never the values, and without that suffix when there are
// none (diag.go, keysOf: `i < len(kv)` as >= and `len(keys) == 0` as !=).
func TestSinkNamesTheKeys(t *testing.T) {
	t.Parallel()
	h := &recordHandler{}
	l := NewDiagnostics(slog.New(h)).Logger()
	l.Info("with keys", "endpoint", "SECRET", "retry", 3)
	l.Info("no keys")
	want := []string{"WARN OpenTelemetry: with keys (endpoint, retry: values not shown)", "WARN OpenTelemetry: no keys"}
	if got := h.messages(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("logged %q, want %q", got, want)
	}
}
