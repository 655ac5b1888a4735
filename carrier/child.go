package carrier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/envprop"
	"github.com/nemolens/lens-go/internal/process"
	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/lensconv"
)

// MaxEnvEntry is the longest "NAME=value" string Linux passes to a new
// program: MAX_ARG_STRLEN, 32 pages of 4096 bytes, including the
// terminating NUL. A longer environment string makes execve fail with E2BIG
// ("argument list too long"), so the command never starts. The longest
// carrier text a child can receive is therefore
// MaxEnvEntry - len("OTEL_RESOURCE_ATTRIBUTES=") - 1 = 131046 bytes.
const MaxEnvEntry = 32 * 4096

// ErrCarrierTooLarge is wrapped by the error of [ChildEnv] when the composed
// carrier cannot be passed to a child: its "OTEL_RESOURCE_ATTRIBUTES=…"
// string is longer than [MaxEnvEntry] (checked on Linux, where the limit
// exists). The environment ChildEnv returns then carries the inherited
// carrier unchanged when that one can be passed, and no carrier otherwise.
var ErrCarrierTooLarge = errors.New("carrier: the composed carrier is too long for a child's environment")

// Error implements error: a Dropped entry is also the error ChildEnv
// reports for it.
func (d Dropped) Error() string { return d.Err.Error() }

// Unwrap returns the reason ([ErrKeyNotCarried] or [ErrInvalidUTF8]).
func (d Dropped) Unwrap() error { return d.Err }

// ChildOption configures [ChildEnv].
type ChildOption interface {
	applyChild(*childConfig)
}

type childOptionFunc func(*childConfig)

func (f childOptionFunc) applyChild(c *childConfig) { f(c) }

type childConfig struct {
	environ    []string
	hasEnviron bool
	defaults   *attr.Map
	propagator propagation.TextMapPropagator
}

// WithEnviron sets the environment the child's is built from (default
// os.Environ()), as "KEY=value" strings; a later duplicate wins, as in
// os/exec.
func WithEnviron(list []string) ChildOption {
	return childOptionFunc(func(c *childConfig) { c.environ, c.hasEnviron = list, true })
}

// WithDefaults sets defaults under the inherited carrier: Extend(carrier,
// defaults, overrides).
func WithDefaults(m *attr.Map) ChildOption {
	return childOptionFunc(func(c *childConfig) { c.defaults = m })
}

// WithPropagator sets the propagator that writes the trace context into the
// child's environment (default: the global propagator, otel.GetTextMapPropagator,
// or W3C trace context and baggage when the global is the default no-op).
func WithPropagator(p propagation.TextMapPropagator) ChildOption {
	return childOptionFunc(func(c *childConfig) { c.propagator = p })
}

// ChildEnv returns the environment for a child process (exec.Cmd.Env)
// that makes it part of this process's job: the environment of
// [WithEnviron] (default os.Environ()) with
//
//   - its carrier replaced by Extend(inherited carrier, defaults, overrides)
//     — the inherited carrier is the last OTEL_RESOURCE_ATTRIBUTES entry, as
//     in os/exec; every entry of it is removed and the composed one appended
//     (set even when the composed text is empty);
//   - NEMO_LENS_RUN_ID set to this process's run id when the environment
//     holds no non-empty one, so that every process of the run reports the
//     same nemo.run.id and service.instance.id prefix, Go and Python alike:
//     the run id of this process's enabled lens.Setup, else its
//     NEMO_LENS_RUN_ID, else SLURM_JOB_ID, TORCHELASTIC_RUN_ID, an MPI
//     job's id or a random id drawn once per process (lens.NewRunID); a
//     random id goes with NEMO_LENS_RUN_ID_DRAWN, the same value, so that a
//     launcher's id below outranks it, and an inherited random id that a
//     launcher's id outranks is replaced (docs/resource.md#run-id-launcher);
//   - the trace context of ctx, when ctx holds a valid span context, written
//     by the propagator as environment variables (TRACEPARENT, TRACESTATE,
//     BAGGAGE: the OpenTelemetry environment-variable carrier convention,
//     with the key normalisation of
//     go.opentelemetry.io/contrib/propagators/envcar), replacing the
//     variables of the propagator's fields; without a span the inherited
//     ones pass through, so the child continues the parent's trace;
//   - when the child would report this process's own service.instance.id
//     (it inherits the same rank and run id, or the same explicit id), an
//     explicit service.instance.id "<this process's id>.<n>" in its carrier,
//     n counting such children of this process from 1 — so that no two
//     processes of a job share an instance id, whichever language the child
//     is written in (the Python reference honours an explicit id in the
//     carrier).
//
// The process environment is never modified, so any number of goroutines
// may build child environments at once. This is how Go programs should
// start the processes of a job.
//
// The returned environment is always usable. The error is nil, or joins:
// one [Dropped] per entry the carrier cannot hold (errors.Is with
// [ErrKeyNotCarried] or [ErrInvalidUTF8]); and [ErrCarrierTooLarge] when the
// composed carrier does not fit in an environment string (the environment
// then keeps the inherited carrier, or none when that does not fit either,
// so the child still starts).
func ChildEnv(ctx context.Context, overrides *attr.Map, opts ...ChildOption) ([]string, error) {
	var c childConfig
	for _, o := range opts {
		if o != nil {
			o.applyChild(&c)
		}
	}
	list := c.environ
	if !c.hasEnviron {
		list = os.Environ()
	}
	const prefix = EnvVar + "="
	current, _ := environ.Last(list, EnvVar)
	out := make([]string, 0, len(list)+4)
	var runID, runIDEntry string
	for _, kv := range list {
		if strings.HasPrefix(kv, prefix) || strings.HasPrefix(kv, process.DrawnRunIDEnv+"=") {
			continue
		}
		if v, ok := strings.CutPrefix(kv, process.RunIDEnv+"="); ok {
			runID, runIDEntry = pytext.TrimSpace(v), kv
			continue
		}
		out = append(out, kv)
	}
	// An inherited run id is kept unless it is one drawn at random that a
	// launcher's id outranks (docs/resource.md#run-id-launcher); a drawn
	// one is handed down marked as such.
	inherited := listEnv(list)
	if process.Configured(inherited, runID, pytext.TrimSpace) == "" {
		runID = process.RunID(inherited, pytext.TrimSpace)
		runIDEntry = process.RunIDEnv + "=" + runID
	}
	out = append(out, runIDEntry)
	if process.Drawn(inherited, runID, pytext.TrimSpace) {
		out = append(out, process.DrawnRunIDEnv+"="+runID)
	}

	composed := Compose(Parse(current), c.defaults, overrides)
	distinctInstance(composed, runID)
	text, dropped := Format(composed)
	var errs []error
	for _, d := range dropped {
		errs = append(errs, d)
	}
	switch {
	case Fits(text):
		out = append(out, prefix+text)
	case Fits(current):
		out = append(out, prefix+current)
		errs = append(errs, fmt.Errorf("%w (%d bytes, at most %d): the child gets the inherited carrier unchanged",
			ErrCarrierTooLarge, len(prefix)+len(text)+1, MaxEnvEntry))
	default:
		errs = append(errs, fmt.Errorf("%w (%d bytes, at most %d), and so is the inherited one: the child gets no carrier",
			ErrCarrierTooLarge, len(prefix)+len(text)+1, MaxEnvEntry))
	}

	p := c.propagator
	if p == nil {
		if p = otel.GetTextMapPropagator(); len(p.Fields()) == 0 {
			p = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
		}
	}
	return envprop.Inject(ctx, out, p), errors.Join(errs...)
}

// Fits reports whether a child can be given text as its carrier: whether
// the environment string "OTEL_RESOURCE_ATTRIBUTES=text" fits in
// [MaxEnvEntry] bytes with its terminating NUL (on Linux; other systems
// have no per-string limit).
func Fits(text string) bool {
	return runtime.GOOS != "linux" || len(EnvVar)+1+len(text)+1 <= MaxEnvEntry
}

// distinctInstance gives the child an explicit service.instance.id derived
// from this process's own when the child would otherwise report the same
// one (see ChildEnv).
func distinctInstance(child *attr.Map, runID string) {
	self, ok := process.CurrentIdentity()
	if !ok || self.InstanceID == "" {
		return
	}
	would, ok := childInstanceID(child, runID)
	if !ok || would != self.InstanceID {
		return
	}
	child.Set(lensconv.ServiceInstanceID, attr.String(self.InstanceID+"."+strconv.FormatUint(process.NextChild(), 10)))
}

// childInstanceID is the service.instance.id a child with carrier m and run
// id runID reports: the carrier's explicit id, else "{run}-rank{rank}" with
// the rank as type reconstruction renders it.
func childInstanceID(m *attr.Map, runID string) (string, bool) {
	if v, ok := m.Get(lensconv.ServiceInstanceID); ok && !v.IsNull() {
		return v.Text()
	}
	rank, ok := m.Get(lensconv.NVDLRank)
	if !ok || rank.IsNull() || runID == "" {
		return "", false
	}
	if rank.Kind() == attr.KindString {
		if n, err := pytext.ParseInt(rank.AsString()); err == nil {
			rank = attr.Int64(n)
		}
	}
	text, _ := rank.Text()
	return runID + "-rank" + text, true
}

// listEnv looks variables up in an environment list (the last entry wins).
type listEnv []string

func (l listEnv) LookupEnv(key string) (string, bool) { return environ.Last(l, key) }
