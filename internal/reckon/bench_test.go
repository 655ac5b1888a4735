package reckon

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseGroupPlan: sacct output of a job requeued 9 times with 100
// steps per attempt (1,030 rows), parsed, grouped and planned.
func BenchmarkParseGroupPlan(b *testing.B) {
	var sb strings.Builder
	for a := range 10 {
		state := "REQUEUED"
		if a == 9 {
			state = "COMPLETED"
		}
		db := fmt.Sprint(100 + a)
		sb.WriteString(row("9", "9", "train", state, "2026-12-01T10:00:09", db))
		sb.WriteString(row("9.batch", "9.batch", "batch", "COMPLETED", "2026-12-01T10:00:09", db))
		sb.WriteString(row("9.extern", "9.extern", "extern", "COMPLETED", "2026-12-01T10:00:09", db))
		for s := range 100 {
			sb.WriteString(row(fmt.Sprintf("9.%d", s), fmt.Sprintf("9.%d", s), "python", "COMPLETED", "2026-12-01T10:00:08", db))
		}
	}
	out := sb.String()
	b.ReportAllocs()
	for b.Loop() {
		jobs, err := parseGroup(out, false)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Plans(jobs, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
