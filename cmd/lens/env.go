package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/assembly"
	"github.com/nemolens/lens-go/internal/process"
	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/internal/shellquote"
	"github.com/nemolens/lens-go/internal/telemetry"
	"github.com/nemolens/lens-go/lensconv"
)

var envCommand = &command{
	name:     "env",
	summary:  "print a shell export of the carrier with the Slurm attributes",
	usage:    "",
	required: []string{"stage"},
	help: `Print "export OTEL_RESOURCE_ATTRIBUTES=VALUE" for a POSIX shell to eval:
the current carrier, kept as it is, followed by this process's Slurm
attributes it does not hold, shell-quoted. It is the reference's
"nemo-lens set-slurm-resource-attrs":
  eval "$(lens env --stage sbatch)"`,
	setup: func(fs *flag.FlagSet) runFunc {
		stage := choiceFlag(fs, "stage", "", "the launch stage (required)", "sbatch", "task")
		image := fs.String("container-image", "", "record `IMAGE` as nv.dl.launch.container.image (task only)")
		return func(ctx context.Context, a *app, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			switch {
			case stage.value == "":
				return usagef("--stage is required")
			case *image != "" && stage.value != "task":
				return usagef("--container-image requires --stage task")
			}
			text, ok, err := a.stageCarrier(ctx, a.env, stage.value, *image, func(format string, args ...any) {
				fmt.Fprintf(a.stderr, "lens env: "+format+"\n", args...)
			})
			if err != nil || !ok {
				return err
			}
			if id, _ := a.env.LookupEnv(slurmJobIDEnv); pytext.TrimSpace(id) == "" {
				fmt.Fprintln(a.stderr, "lens env: "+noSlurmJobNote)
			}
			if tp := a.attemptTraceparent(); tp != "" {
				if _, err := fmt.Fprintf(a.stdout, "export TRACEPARENT=%s\n", tp); err != nil {
					return err
				}
			}
			_, err = fmt.Fprintf(a.stdout, "export %s=%s\n", carrier.EnvVar, shellquote.Quote(text))
			return err
		}
	},
}

// attemptTraceparent returns the W3C traceparent under the job attempt's
// anchor span when the per-attempt mode is on and the environment holds no
// TRACEPARENT (docs/tracing.md#attempt-python), else "". A bad switch
// value or a missing attempt identity is said on stderr; lens env goes on.
func (a *app) attemptTraceparent() string {
	raw, _ := a.env.LookupEnv(telemetry.TracePerAttemptEnv)
	v := pytext.TrimSpace(raw)
	if v == "" {
		return ""
	}
	on, ok := telemetry.ParseBool(v)
	if !ok {
		fmt.Fprintf(a.stderr, "lens env: %v; no TRACEPARENT\n", &telemetry.ConfigError{Var: telemetry.TracePerAttemptEnv, Value: raw, Err: telemetry.ErrInvalidBool})
		return ""
	}
	if tp, _ := a.env.LookupEnv(traceparentEnv); !on || tp != "" {
		return ""
	}
	runID, _ := a.env.LookupEnv(process.RunIDEnv)
	attempt, ok := assembly.Attempt(a.env, process.Configured(a.env, pytext.TrimSpace(runID), pytext.TrimSpace))
	if !ok {
		fmt.Fprintf(a.stderr, "lens env: %s\n", telemetry.NoAttemptWarning)
		return ""
	}
	return attempt.Traceparent()
}

// slurmJobIDEnv is the variable whose absence means lens env runs outside a
// Slurm job: it then adds no slurm.* attributes, and says so.
const slurmJobIDEnv = "SLURM_JOB_ID"

const noSlurmJobNote = "note: no Slurm job found (SLURM_JOB_ID is not set): the export adds no slurm.* attributes"

// traceparentEnv is the W3C Trace Context variable of the environment
// carrier (the OpenTelemetry specification's environment propagation).
const traceparentEnv = "TRACEPARENT"

// stageCarrier returns the carrier `lens env --stage stage` exports in the
// environment env (docs/compatibility.md#lens-env): env's carrier extended
// with the Slurm attributes as defaults — without slurm.topology.* for
// sbatch; with host.name and, when image is not empty,
// nv.dl.launch.container.image for task. ok is false when nothing is to be
// exported (the result would not fit in an environment string and none is
// inherited). Entries the carrier cannot hold and the size fallback are
// reported through report, one line each (format and arguments, no
// prefix). The error is the host name probe's.
func (a *app) stageCarrier(ctx context.Context, env environ.Lookuper, stage, image string, report func(format string, args ...any)) (text string, ok bool, err error) {
	additions := detect.Slurm(ctx, append(a.detectOptions(), detect.WithEnv(env))...)
	switch stage {
	case "sbatch":
		additions.Delete(lensconv.SlurmTopologyAddr)
		additions.Delete(lensconv.SlurmTopologyAddrPattern)
	case "task":
		hostname := a.hostname
		if hostname == nil {
			hostname = os.Hostname
		}
		host, err := hostname()
		if err != nil {
			return "", false, fmt.Errorf("host name: %w", err)
		}
		additions.Set(lensconv.HostName, attr.String(host))
		if image != "" {
			additions.Set(lensconv.NVDLLaunchContainerImage, attr.String(image))
		}
	}
	current, had := env.LookupEnv(carrier.EnvVar)
	text, dropped := carrier.Append(current, additions)
	for _, d := range dropped {
		report("dropped %q: %s", d.Key, droppedReason(d.Err))
	}
	// Never export a carrier that would keep later commands from starting:
	// a carrier longer than one environment string can be (MAX_ARG_STRLEN on
	// Linux) makes every exec fail.
	if !carrier.Fits(text) {
		size := len(carrier.EnvVar) + 1 + len(text) + 1
		if !had || !carrier.Fits(current) {
			report("the carrier would be %d bytes, more than an environment string can hold (%d); printing nothing", size, carrier.MaxEnvEntry)
			return "", false, nil
		}
		report("the carrier would be %d bytes, more than an environment string can hold (%d); keeping the inherited one", size, carrier.MaxEnvEntry)
		text = current
	}
	return text, true, nil
}
