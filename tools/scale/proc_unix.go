//go:build unix

package main

import (
	"os"
	"syscall"
	"time"
)

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childUsage returns the peak resident set (bytes) and the user+system CPU
// time of a process that has exited.
func childUsage(ps *os.ProcessState) (maxRSS int64, cpu time.Duration) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0
	}
	// Linux reports ru_maxrss in KiB.
	return int64(ru.Maxrss) << 10, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
