package assembly

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/process"
	"github.com/nemolens/lens-go/internal/telemetry"
	"github.com/nemolens/lens-go/lensconv"
)

// JobAttributes returns the job attributes lens's detection gives a process
// whose environment is env (lens.JobAttributes documents them): nemo.run.id
// by the run-id rule without the random draw, the launcher's ranks when
// rankFrom names one, the Slurm and the Kubernetes keys. opts are passed to
// detection after env. The warnings are those of detect.Ranks.
func JobAttributes(ctx context.Context, env environ.Lookuper, rankFrom string, opts ...detect.Option) (*attr.Map, []string) {
	env = environ.Or(env)
	m := attr.WithCapacity(24)
	// The configured run id, as FromEnv reads it (NEMO_LENS_RUN_ID, trimmed,
	// yielding to a launcher's id when a lens-go parent drew it); else the
	// launcher's id. Its configuration errors concern other variables.
	cfg, _ := telemetry.FromEnv(env, "", "")
	runID := cfg.RunID
	if runID == "" {
		runID, _, _ = process.LauncherRunID(env)
	}
	if runID != "" {
		m.SetString(lensconv.NemoRunID, runID)
	}
	var warnings []string
	if rankFrom != "" {
		var kvs []attribute.KeyValue
		kvs, warnings = detect.Ranks(env, rankFrom)
		ranks, _ := attr.FromKeyValues(kvs...)
		m.Update(ranks)
	}
	d := make([]detect.Option, 0, len(opts)+1)
	d = append(append(d, opts...), detect.WithEnv(env))
	m.Update(detect.Slurm(ctx, d...))
	m.Update(detect.Kubernetes(ctx, d...))
	return m, warnings
}
