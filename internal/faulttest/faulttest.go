// Package faulttest holds the hostile inputs that the fault-injection
// suites of the library (faults_test.go) and of the lens command
// (cmd/lens/faults_test.go) both feed to what they test, so that the two
// suites try the same faults, and [NoHang], the liveness bound of calls
// that used to block forever. Only tests import it.
package faulttest

import (
	"strings"
	"testing"
	"time"
)

// Protocols are the OTLP protocols every fault is tried over.
func Protocols() []string { return []string{"grpc", "http/protobuf"} }

// ProtocolName is p as a subtest name ("http/protobuf" → "http-protobuf").
func ProtocolName(p string) string { return strings.ReplaceAll(p, "/", "-") }

// SecretCanary is a bearer token with an invalid escape: it must never be
// shown, on stderr or in an export.
const SecretCanary = "SECRETCANARY%zz"

// HeaderForms are malformed OTEL_EXPORTER_OTLP_HEADERS values holding
// [SecretCanary], by name: a value the exporters cannot unescape, an entry
// without '=', an invalid key.
func HeaderForms() map[string]string {
	return map[string]string{
		"bad-escape":    "authorization=Bearer " + SecretCanary,
		"missing-equal": "authorization Bearer " + SecretCanary,
		"invalid-key":   "Bearer " + SecretCanary + "=x",
	}
}

// CanaryParts are the pieces of the header forms that must never be shown.
func CanaryParts() []string { return []string{"SECRETCANARY", "Bearer", "%zz"} }

// BadNumbers are out-of-range or malformed values of every numeric setting
// lens reads, by variable. On the old code some of them killed the process
// before the command ran (an 18446744073710 ms interval overflows
// time.Duration; a queue of ten billion spans was allocated up front).
func BadNumbers() map[string]string {
	return map[string]string{
		"OTEL_BSP_MAX_QUEUE_SIZE":         "10000000000",
		"OTEL_BSP_MAX_EXPORT_BATCH_SIZE":  "-1",
		"OTEL_BSP_SCHEDULE_DELAY":         "18446744073710",
		"OTEL_BSP_EXPORT_TIMEOUT":         "0",
		"OTEL_METRIC_EXPORT_INTERVAL":     "18446744073710",
		"OTEL_METRIC_EXPORT_TIMEOUT":      "99999999999999999999",
		"OTEL_BLRP_MAX_QUEUE_SIZE":        "10000000000",
		"OTEL_BLRP_MAX_EXPORT_BATCH_SIZE": "0",
		"OTEL_BLRP_SCHEDULE_DELAY":        "18446744073710",
		"OTEL_BLRP_EXPORT_TIMEOUT":        "1e3",
		"OTEL_EXPORTER_OTLP_TIMEOUT":      "18446744073710",
	}
}

// BigCarrier is 44,012 bytes: nemo.run.id= and 22,000 "/:" pairs, which
// formatting re-encodes to 132,012 bytes, more than one Linux environment
// string holds.
func BigCarrier() string { return "nemo.run.id=" + strings.Repeat("/:", 22000) }

// FullCarrier is 131,046 bytes, the longest carrier a child can receive,
// made of invalid escapes that formatting re-encodes larger (%zz → %25zz).
func FullCarrier() string { return "a=" + strings.Repeat("%zz", 43681) + "x" }

// Lines returns the non-empty lines of s, without their line breaks.
func Lines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimRight(l, "\n"); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// NoHang runs f and returns its error; when f has not returned after a
// minute it fails t, naming what blocked. A liveness bound for calls that
// used to block forever (a FIFO, a full syslog queue, a stuck probe), not
// a timing assertion: they return at once when they work.
func NoHang(t testing.TB, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("%s blocked", what)
		return nil
	}
}
