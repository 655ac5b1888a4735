package carrier_test

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
)

// TestMain routes the package's warnings (Format logs every dropped entry
// through slog's default logger) to logs, which discards them unless a test
// is capturing. Fuzzing would otherwise flood stderr.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(captureHandler{sink: logs}))
	os.Exit(m.Run())
}

// sink records log records while capturing is on. Only tests that are not
// parallel may turn it on (parallel tests run after them).
type sink struct {
	mu      sync.Mutex
	on      bool
	records []slog.Record
}

var logs = &sink{}

type captureHandler struct {
	sink  *sink
	attrs []slog.Attr
}

func (h captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h captureHandler) Handle(_ context.Context, r slog.Record) error {
	h.sink.mu.Lock()
	defer h.sink.mu.Unlock()
	if h.sink.on {
		r = r.Clone()
		r.AddAttrs(h.attrs...)
		h.sink.records = append(h.sink.records, r)
	}
	return nil
}

func (h captureHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return captureHandler{sink: h.sink, attrs: append(slices.Clip(h.attrs), as...)}
}

func (h captureHandler) WithGroup(string) slog.Handler { return h }

// capture turns recording on for the rest of the (non-parallel) test and
// returns a function that yields the records so far.
func capture(t *testing.T) func() []slog.Record {
	t.Helper()
	logs.mu.Lock()
	logs.on, logs.records = true, nil
	logs.mu.Unlock()
	t.Cleanup(func() {
		logs.mu.Lock()
		logs.on, logs.records = false, nil
		logs.mu.Unlock()
	})
	return func() []slog.Record {
		logs.mu.Lock()
		defer logs.mu.Unlock()
		return slices.Clone(logs.records)
	}
}

// recordAttrs returns a record's attributes as strings.
func recordAttrs(r slog.Record) map[string]string {
	out := map[string]string{}
	r.Attrs(func(a slog.Attr) bool {
		out[a.Key] = a.Value.String()
		return true
	})
	return out
}
