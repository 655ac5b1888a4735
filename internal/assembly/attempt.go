package assembly

import (
	"os"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/rounds"
	"github.com/nemolens/lens-go/internal/telemetry"
	"github.com/nemolens/lens-go/internal/traceid"
)

// Attempt returns the trace identity of the job attempt env describes
// (docs/tracing.md#attempt-trace-id): the trace id of its attempt UUID
// (detect.AttemptUUID of env and runID, the configured run id — not one
// drawn at random; its nv.dl.run.uuid but under NVRx and torchrun's dynamic
// rendezvous) and the previous attempt's: for a torchrun dynamic-rendezvous
// round, the round before it on this node, from the node's record of rounds
// (docs/tracing.md#round-links: detect.RoundsKey, rounds.Note under
// rounds.Dir of env), which this call adds the round to; otherwise, and when
// the record tells none, detect.PreviousAttemptUUID. It is false when the
// environment gives no run identity. A record that cannot be read or
// written only costs the link.
func Attempt(env environ.Lookuper, runID string) (traceid.Attempt, bool) {
	u, ok := detect.AttemptUUID(env, runID)
	if !ok {
		return traceid.Attempt{}, false
	}
	tid, err := traceid.FromUUID(u)
	if err != nil { // detect.RunUUID always gives a canonical UUIDv5
		return traceid.Attempt{}, false
	}
	a := traceid.Attempt{TraceID: tid}
	if key, ok := detect.RoundsKey(env, runID); ok {
		if p, ok, _ := rounds.Note(rounds.Dir(env, os.Getuid()), key, u); ok {
			a.Previous, _ = traceid.FromUUID(p)
			return a, true
		}
	}
	if p, ok := detect.PreviousAttemptUUID(env, runID); ok {
		a.Previous, _ = traceid.FromUUID(p)
	}
	return a, true
}

// Identify returns the job attempt (when perAttempt: [Attempt] of the run
// id as configured, before it is filled) and cfg with its run id filled
// ([Options.FillRunID]): the identity every span-exporting process takes
// before it builds its resource.
func (o *Options) Identify(cfg telemetry.Config, perAttempt bool) (traceid.Attempt, telemetry.Config) {
	var attempt traceid.Attempt
	if perAttempt {
		attempt, _ = Attempt(o.Env, cfg.RunID)
	}
	return attempt, o.FillRunID(cfg)
}
