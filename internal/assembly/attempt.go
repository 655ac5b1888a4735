package assembly

import (
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/traceid"
)

// Attempt returns the trace identity of the job attempt env describes
// (docs/tracing.md#attempt-trace-id): the trace id of its nv.dl.run.uuid
// (detect.RunUUID of env and runID, the configured run id — not one drawn
// at random) and the previous attempt's (detect.PreviousRunUUID). It is
// false when the environment gives no run identity.
func Attempt(env environ.Lookuper, runID string) (traceid.Attempt, bool) {
	u, ok := detect.RunUUID(env, runID)
	if !ok {
		return traceid.Attempt{}, false
	}
	tid, err := traceid.FromUUID(u)
	if err != nil { // detect.RunUUID always gives a canonical UUIDv5
		return traceid.Attempt{}, false
	}
	a := traceid.Attempt{TraceID: tid}
	if p, ok := detect.PreviousRunUUID(env, runID); ok {
		a.Previous, _ = traceid.FromUUID(p)
	}
	return a, true
}
