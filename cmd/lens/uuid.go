package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/nemolens/lens-go/detect"
)

var uuidJobCommand = &command{
	name:    "uuid job",
	summary: "print nv.dl.job.uuid",
	usage:   "",
	manual:  "lens-uuid",
	help: `Print nv.dl.job.uuid: the UUIDv5 of "nemo.lens.job/CLUSTER/JOB" from
SLURM_CLUSTER_NAME and the job id (docs/detection.md#uuids). Outside a job
it is the UUID of nocluster/nojob, and lens says so on stderr.`,
	setup: func(fs *flag.FlagSet) runFunc {
		name := fs.Bool("name", false, "print the UUIDv5 name string instead of the UUID")
		return func(_ context.Context, a *app, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			out := detect.JobUUID(a.env)
			if *name {
				out = detect.JobUUIDName(a.env)
			}
			if n := detect.JobUUIDName(a.env); strings.HasSuffix(n, "/nojob") {
				fmt.Fprintf(a.stderr, "lens uuid job: %s\n", noJobNote(n))
			}
			_, err := fmt.Fprintln(a.stdout, out)
			return err
		}
	},
}

var uuidRunCommand = &command{
	name:    "uuid run",
	summary: "print nv.dl.run.uuid",
	usage:   "",
	manual:  "lens-uuid",
	help: `Print nv.dl.run.uuid: in a Slurm job from the cluster, the job and the
requeue count; outside one from --run-id, else TORCHELASTIC_RUN_ID
(docs/detection.md#uuids). Without either it exits 1.`,
	setup: func(fs *flag.FlagSet) runFunc {
		runID := fs.String("run-id", "", "the run `ID` used outside Slurm")
		name := fs.Bool("name", false, "print the UUIDv5 name string instead of the UUID")
		return func(_ context.Context, a *app, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			var out string
			var ok bool
			if *name {
				out, ok = detect.RunUUIDName(a.env, *runID)
			} else {
				out, ok = detect.RunUUID(a.env, *runID)
			}
			if !ok {
				fmt.Fprintln(a.stderr, "lens uuid run: no run identity: no Slurm job (SLURM_JOB_ID, SLURM_ARRAY_JOB_ID) and no run id (--run-id, TORCHELASTIC_RUN_ID)")
				return exitStatus(1)
			}
			_, err := fmt.Fprintln(a.stdout, out)
			return err
		}
	},
}

// noJobNote is what lens uuid job says on stderr when the environment names
// no Slurm job: its UUID is then the same on every machine.
func noJobNote(name string) string {
	return fmt.Sprintf("note: no Slurm job id in the environment (SLURM_JOB_ID, or SLURM_ARRAY_JOB_ID in an array task): this is the UUID of %q, the same for every process outside a job", name)
}
