package main

import (
	"bytes"
	"os"
	"strconv"
)

// procStatus returns a "kB" field of /proc/self/status in bytes (VmRSS,
// VmHWM), or 0 where there is none.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok || string(name) != field {
			continue
		}
		rest = bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))
		n, err := strconv.ParseInt(string(rest), 10, 64)
		if err != nil {
			return 0
		}
		return n << 10
	}
	return 0
}

// resetPeakRSS resets VmHWM to the current resident set (Linux 4.0 and
// later), so that it then gives the peak of what follows.
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}
