package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"
)

// wallTimeCommand runs a command n times (stdin and stdout /dev/null,
// stderr discarded) and prints one line: mean, median, min and max wall
// time and mean user+system CPU time, in seconds.
func wallTimeCommand(args []string) error {
	fs := flag.NewFlagSet("walltime", flag.ContinueOnError)
	n := fs.Int("n", 20, "runs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return fmt.Errorf("no command")
	}
	var walls []float64
	var cpu time.Duration
	for range max(1, *n) {
		cmd := exec.Command(argv[0], argv[1:]...)
		t0 := time.Now()
		err := cmd.Run()
		walls = append(walls, time.Since(t0).Seconds())
		var exitErr *exec.ExitError
		if err != nil && !errors.As(err, &exitErr) {
			return err
		}
		_, c := childUsage(cmd.ProcessState)
		cpu += c
	}
	slices.Sort(walls)
	mean := 0.0
	for _, v := range walls {
		mean += v
	}
	mean /= float64(len(walls))
	median := walls[len(walls)/2]
	if len(walls)%2 == 0 {
		median = (walls[len(walls)/2-1] + walls[len(walls)/2]) / 2
	}
	_, err := fmt.Fprintf(os.Stdout, "mean=%.6f median=%.6f min=%.6f max=%.6f cpu=%.6f runs=%d\n",
		mean, median, walls[0], walls[len(walls)-1], cpu.Seconds()/float64(len(walls)), len(walls))
	return err
}
