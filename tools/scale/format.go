package main

import (
	"fmt"
	"math"
)

// fmtNS formats nanoseconds with three significant digits.
func fmtNS(ns float64) string {
	switch {
	case ns <= 0 || math.IsNaN(ns):
		return "—"
	case ns < 1e3:
		return sig3(ns) + " ns"
	case ns < 1e6:
		return sig3(ns/1e3) + " µs"
	case ns < 1e9:
		return sig3(ns/1e6) + " ms"
	}
	return sig3(ns/1e9) + " s"
}

// fmtBytes formats a byte count with three significant digits (KB, MB, GB:
// powers of 1000).
func fmtBytes(b float64) string {
	switch {
	case b < 0 || math.IsNaN(b):
		return "—"
	case b < 1e3:
		return fmt.Sprintf("%.0f B", b)
	case b < 1e6:
		return sig3(b/1e3) + " kB"
	case b < 1e9:
		return sig3(b/1e6) + " MB"
	}
	return sig3(b/1e9) + " GB"
}

// fmtCount formats a count with three significant digits (k, M, G).
func fmtCount(n float64) string {
	switch {
	case n < 1e3:
		return fmt.Sprintf("%.0f", n)
	case n < 1e6:
		return sig3(n/1e3) + " k"
	case n < 1e9:
		return sig3(n/1e6) + " M"
	}
	return sig3(n/1e9) + " G"
}

func fmtRatio(r float64) string {
	switch {
	case r <= 0 || math.IsNaN(r) || math.IsInf(r, 0):
		return "—"
	case r < 0.1:
		return fmt.Sprintf("%.2g", r)
	case r < 10:
		return fmt.Sprintf("%.2f", r)
	case r < 100:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.0f", r)
}

func sig3(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// fmtRSS formats a peak RSS; 0 means it was not measured (no GNU time).
func fmtRSS(b int64) string {
	if b <= 0 {
		return "—"
	}
	return fmtBytes(float64(b))
}
