// Command probe is run inside Slurm jobs by the end-to-end tests. Each
// invocation writes ONE JSON file (slurm.Record) into the output directory:
// the Slurm-related environment it saw and what lens-go's detectors made of
// it. The file name is <label>.<SLURM_JOB_ID>.<SLURM_STEP_ID|batch>.<SLURM_PROCID>.json.
//
// Usage: probe [-out DIR] [-label NAME]   (or $LENS_PROBE_OUT, $LENS_PROBE_LABEL)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nemolens/lens-go/e2e/internal/slurm"
)

// recordedPrefixes select the environment variables copied into the record.
var recordedPrefixes = []string{"SLURM_", "SLURMD_", "TORCHELASTIC_", "LENS_SLURM_", "NV_LAUNCH_"}

var recordedNames = []string{"HOSTNAME", "OTEL_RESOURCE_ATTRIBUTES", "CUDA_VISIBLE_DEVICES", "KUBERNETES_SERVICE_HOST"}

func main() {
	out := flag.String("out", os.Getenv(slurm.ProbeOutEnv), "output directory (default $"+slurm.ProbeOutEnv+")")
	label := flag.String("label", os.Getenv(slurm.ProbeLabelEnv), "label for the output file name (default $"+slurm.ProbeLabelEnv+")")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "probe: no output directory (-out or $"+slurm.ProbeOutEnv+")")
		os.Exit(2)
	}
	if err := run(*out, *label); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(1)
	}
}

func run(dir, label string) error {
	rec := slurm.Record{Label: label, PID: os.Getpid(), Env: map[string]string{}}
	rec.OSHostname, _ = os.Hostname()
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if recorded(k) {
			rec.Env[k] = v
		}
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				rec.Error = fmt.Sprintf("detector panicked: %v", p)
			}
		}()
		r := detectAll(context.Background())
		rec.Slurm, rec.Detect = r.slurm, r.detect
		rec.JobUUID, rec.RunUUID, rec.RunUUIDOK = r.jobUUID, r.runUUID, r.runUUIDOK
	}()

	base := slurm.RecordFileName(label, os.LookupEnv)
	name := filepath.Join(dir, base)
	if err := slurm.WriteJSON(dir, base, rec); err != nil {
		return err
	}
	if rec.Error != "" {
		return fmt.Errorf("%s (record written to %s)", rec.Error, name)
	}
	return nil
}

func recorded(k string) bool {
	for _, n := range recordedNames {
		if k == n {
			return true
		}
	}
	for _, p := range recordedPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}
