//go:build !linux

package usage

import (
	"syscall"

	"go.opentelemetry.io/otel/attribute"
)

// SpanAttributes returns nil: the rusage fields and units are Linux's
// (docs/usage.md#span-attributes).
func SpanAttributes(*syscall.Rusage) []attribute.KeyValue { return nil }

// CPUTimes returns zeros outside Linux.
func CPUTimes(*syscall.Rusage) (user, system float64) { return 0, 0 }
