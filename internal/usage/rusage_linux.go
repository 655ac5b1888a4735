package usage

import (
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"
)

// SpanAttributes are the span attributes of ru, the rusage of the wait4
// that reaped the command (docs/usage.md#span-attributes); nil for a nil
// ru.
func SpanAttributes(ru *syscall.Rusage) []attribute.KeyValue {
	if ru == nil {
		return nil
	}
	return []attribute.KeyValue{
		attribute.Float64(CPUTimeUser, seconds(ru.Utime)),
		attribute.Float64(CPUTimeSystem, seconds(ru.Stime)),
		attribute.Int64(MemoryPeak, ru.Maxrss*1024),
		attribute.Int64(PagingFaultsMinor, ru.Minflt),
		attribute.Int64(PagingFaultsMajor, ru.Majflt),
		attribute.Int64(DiskIORead, ru.Inblock*512),
		attribute.Int64(DiskIOWrite, ru.Oublock*512),
		attribute.Int64(ContextSwitchesVoluntary, ru.Nvcsw),
		attribute.Int64(ContextSwitchesInvoluntary, ru.Nivcsw),
	}
}

// CPUTimes are the user and system CPU times of ru in seconds.
func CPUTimes(ru *syscall.Rusage) (user, system float64) {
	return seconds(ru.Utime), seconds(ru.Stime)
}

func seconds(tv syscall.Timeval) float64 {
	return (time.Duration(tv.Nano()) * time.Nanosecond).Seconds()
}
