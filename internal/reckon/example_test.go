package reckon_test

import (
	"fmt"
	"os"

	"github.com/nemolens/lens-go/internal/reckon"
)

// A requeued job, as sacct -D reported it on the e2e cluster: two records,
// two attempts, each with its own spans.
func Example() {
	out, err := os.ReadFile("testdata/requeued.sacct")
	if err != nil {
		panic(err)
	}
	rows, err := reckon.Parse(string(out), false)
	if err != nil {
		panic(err)
	}
	jobs, err := reckon.Group(rows)
	if err != nil {
		panic(err)
	}
	plans, err := reckon.Plans(jobs, reckon.Options{})
	if err != nil {
		panic(err)
	}
	for _, p := range plans {
		fmt.Printf("attempt %d (record %s, %s) trace %s\n", p.Attempt.Number, p.Attempt.DBIndex, p.Attempt.Alloc.State, p.TraceID)
		for _, s := range p.Spans() {
			fmt.Printf("  %-26s %s  %s\n", s.Name, s.Start.Format("15:04:05"), s.End.Format("15:04:05"))
		}
	}
	// Output:
	// attempt 0 (record 3, REQUEUED) trace 020fca1cbbf156a7852deae9f117f414
	//   slurm.phase.deferred       21:10:39  21:10:39
	//   slurm.phase.queued         21:10:39  21:10:40
	//   slurm.record.allocation    21:10:40  21:10:42
	//   slurm.record.batch         21:10:40  21:10:42
	//   slurm.record.extern        21:10:40  21:10:42
	//   slurm.record.step          21:10:40  21:10:41
	//   slurm.phase.workload       21:10:40  21:10:41
	//   slurm.phase.cleanup_tail   21:10:42  21:10:42
	// attempt 1 (record 5, COMPLETED) trace 3c729bf6625156b4bbe7cbc761e00a65
	//   slurm.phase.deferred       21:10:43  21:10:44
	//   slurm.phase.queued         21:10:44  21:10:45
	//   slurm.record.allocation    21:10:45  21:10:46
	//   slurm.record.batch         21:10:45  21:10:46
	//   slurm.record.extern        21:10:45  21:10:46
	//   slurm.record.step          21:10:45  21:10:46
	//   slurm.phase.workload       21:10:45  21:10:46
	//   slurm.phase.cleanup_tail   21:10:46  21:10:46
	//   slurm.phase.requeue_gap    21:10:42  21:10:45
}
