package detect

import (
	"context"
	"log/slog"
	"strconv"
	"strings"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/logx"
	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/lensconv"
)

// Environment variables detect_slurm reads besides those of the UUIDs.
const (
	envSlurmArrayTaskCount   = "SLURM_ARRAY_TASK_COUNT"
	envLensSlurmSLUID        = "LENS_SLURM_SLUID"
	envNVLaunchSLUID         = "NV_LAUNCH_SLUID"
	envLensSlurmArraySLUID   = "LENS_SLURM_ARRAY_SLUID"
	envNVLaunchArraySLUID    = "NV_LAUNCH_ARRAY_SLUID"
	envSlurmJobName          = "SLURM_JOB_NAME"
	envSlurmJobPartition     = "SLURM_JOB_PARTITION"
	envSlurmPartition        = "SLURM_PARTITION"
	envSlurmJobNumNodes      = "SLURM_JOB_NUM_NODES"
	envSlurmNNodes           = "SLURM_NNODES"
	envSlurmNTasks           = "SLURM_NTASKS"
	envSlurmJobUser          = "SLURM_JOB_USER"
	envSlurmJobAccount       = "SLURM_JOB_ACCOUNT"
	envSlurmJobQOS           = "SLURM_JOB_QOS"
	envSlurmJobReservation   = "SLURM_JOB_RESERVATION"
	envSlurmSegment          = "SLURM_SEGMENT"
	envSlurmTopologyAddr     = "SLURM_TOPOLOGY_ADDR"
	envSlurmTopologyAddrPatt = "SLURM_TOPOLOGY_ADDR_PATTERN"
	envSlurmdNodename        = "SLURMD_NODENAME"
	envSlurmStepID           = "SLURM_STEP_ID"
	envSlurmStepIDOld        = "SLURM_STEPID"
)

// Sources of derived Slurm values, rendered for [Origin.Source].
const (
	srcDefault    = "default"
	srcArrayJob   = "env " + envSlurmArrayJobID + "+" + envSlurmArrayTaskID
	sourceCarrier = "carrier"
)

// Slurm returns the Slurm attributes, the reference's detect_slurm
// (docs/detection.md#detect-slurm): the valid launcher-provided values of
// the carrier (OTEL_RESOURCE_ATTRIBUTES in the environment of [WithEnv])
// merged over the values derived from the local Slurm environment. It never
// fails; without Slurm it returns an empty map. The rules are in
// docs/detection.md: activation (#slurm-activation), array mode
// (#slurm-array-mode), the table of keys and their variables
// (#slurm-local-derivation), the integer rule (#slurm-local-integers),
// the inherited keys (#slurm-inherited-keys) and the order of the result
// (#slurm-result-order).
//
// Rejected carrier values and invalid local integers are logged at DEBUG
// (logger "nemo.lens.resources.slurm") and recorded in the explanation of
// [WithExplanation].
//
// Options used: WithEnv, WithLogger, WithExplanation. ctx is not consulted
// (nothing blocks); it is there for symmetry with [Local].
func Slurm(_ context.Context, opts ...Option) *attr.Map {
	c := newConfig(opts)
	m := &attr.Map{}
	slurmInto(&c, m)
	return m
}

// rejection is a carrier value of an allowlisted key that was dropped.
type rejection struct {
	key, value string
	empty      bool
}

func (r rejection) reason() string {
	if r.empty {
		return "carrier value for " + r.key + " is empty"
	}
	return "carrier value " + strconv.Quote(r.value) + " for " + r.key + " is not a base-10 integer"
}

// mayHoldInherited reports whether carrier text can contain an allowlisted
// key. Keys are trimmed but never decoded, so each allowlisted key appears
// literally in the text; a carrier without "slurm." or "nv.dl." cannot hold
// one and need not be scanned.
func mayHoldInherited(text string) bool {
	return strings.Contains(text, "slurm.") || strings.Contains(text, "nv.dl.")
}

// inheritedValues appends to dst the valid values of the allowlisted keys
// of the carrier text, in carrier order: non-empty after decoding and, for
// the four integer keys, passing the strict integer rule (then int64). It
// returns the dropped values.
//
// The text is scanned with exactly the rules of carrier.Parse (split on
// every ',', skip segments without '=', key = trimmed text before the first
// '=', never decoded; value = the rest, trimmed, then decoded; a repeated key
// keeps its first position and takes its last value), but only the
// allowlisted keys are kept and decoded: filtering by key commutes with
// parsing, and skipping the other values saves their decoding.
func inheritedValues(dst []attr.Entry, text string) ([]attr.Entry, []rejection) {
	start := len(dst)
	for seg := range strings.SplitSeq(text, ",") {
		k, raw, ok := strings.Cut(seg, "=")
		if !ok {
			continue
		}
		k = pytext.TrimSpace(k)
		if !lensconv.IsInheritedKey(k) {
			continue
		}
		v := attr.String(carrier.Decode(pytext.TrimSpace(raw)))
		i := start
		for i < len(dst) && dst[i].Key != k {
			i++
		}
		if i < len(dst) {
			dst[i].Value = v
		} else {
			dst = append(dst, attr.Entry{Key: k, Value: v})
		}
	}
	var rejected []rejection
	out := dst[:start]
	for _, e := range dst[start:] {
		s := e.Value.AsString()
		if s == "" {
			rejected = append(rejected, rejection{key: e.Key, empty: true})
			continue
		}
		if lensconv.IsSlurmIntegerKey(e.Key) {
			n, err := pytext.ParseInt(s)
			if err != nil {
				rejected = append(rejected, rejection{key: e.Key, value: s})
				continue
			}
			e.Value = attr.Int64(n)
		}
		out = append(out, e)
	}
	return out, rejected
}

// slurmInto appends the Slurm attributes to dst, which must not hold any
// allowlisted key (the local keys are disjoint from them).
func slurmInto(c *config, dst *attr.Map) {
	env := c.env
	var inheritedBuf [23]attr.Entry // the allowlist has 23 keys
	inherited := inheritedBuf[:0]
	var rejected []rejection
	if text, _ := env.LookupEnv(carrier.EnvVar); mayHoldInherited(text) {
		inherited, rejected = inheritedValues(inherited, text)
	}
	var d slurmDeriver
	d.explain = c.explain != nil
	if jobID, ok := environ.NonEmpty(env, envSlurmJobID); ok {
		d.derive(env, jobID)
	}
	start := dst.Len()
	// Activation is implicit: without a local job id and without a valid
	// inherited value, nothing is appended.
	mergeInto(dst, inherited, d.entries[:d.n], false)
	if len(rejected) > 0 || len(d.invalid) > 0 {
		logSlurmRejections(c, rejected, d.invalid)
	}
	if c.explain != nil {
		fromCarrier := make(map[string]bool, len(inherited))
		for _, e := range inherited {
			fromCarrier[e.Key] = true
		}
		explainSlurm(c.explain, dst, start, &d, rejected, fromCarrier)
	}
}

func logSlurmRejections(c *config, rejected []rejection, invalid []omission) {
	// Every message is DEBUG: when nobody takes DEBUG records, neither the
	// named logger (slog.Logger.With allocates) nor the reasons are built.
	base := c.logger
	if base == nil {
		base = slog.Default()
	}
	if !base.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	l := logx.Logger(base, logx.Slurm)
	for _, r := range rejected {
		l.Debug("ignoring the inherited Slurm value; using the local value if any", "key", r.key, "reason", r.reason())
	}
	for _, o := range invalid {
		l.Debug("ignoring an invalid local Slurm integer", "key", o.key, "reason", o.reason)
	}
}

// omission records why a derived key was not produced (or a local candidate
// not used).
type omission struct{ key, reason string }

// slurmDeriver builds the locally derived values in emission order in a
// fixed array (no allocation) and, when explaining, their sources.
type slurmDeriver struct {
	env     environ.Lookuper
	explain bool
	entries [22]attr.Entry
	sources [22]string // only when explaining
	n       int
	omitted []omission // only when explaining
	notes   []omission // notes on used local values, only when explaining
	invalid []omission // invalid local integers (always, for logging)
}

// lookup returns the derived value of key and its source.
func (d *slurmDeriver) lookup(key string) (v attr.Value, source string, ok bool) {
	for i := range d.n {
		if d.entries[i].Key == key {
			return d.entries[i].Value, d.sources[i], true
		}
	}
	return attr.Value{}, "", false
}

func (d *slurmDeriver) add(key string, v attr.Value, source string) {
	d.entries[d.n] = attr.Entry{Key: key, Value: v}
	d.sources[d.n] = source
	d.n++
}

// addEnv adds a value read from the variable name.
func (d *slurmDeriver) addEnv(key, value, name string) {
	source := ""
	if d.explain {
		source = "env " + name
	}
	d.add(key, attr.String(value), source)
}

// first adds the first non-empty of the variables.
func (d *slurmDeriver) first(key string, names ...string) {
	for _, name := range names {
		if v, ok := environ.NonEmpty(d.env, name); ok {
			d.addEnv(key, v, name)
			return
		}
	}
}

// integer adds the strict-integer value of the first non-empty variable of
// names (chosen first, then validated). When none is non-empty, the default
// applies if hasDefault.
func (d *slurmDeriver) integer(key string, def int64, hasDefault bool, names ...string) {
	for i, name := range names {
		v, ok := environ.NonEmpty(d.env, name)
		if !ok {
			continue
		}
		n, err := pytext.ParseInt(v)
		if err != nil {
			reason := name + "=" + strconv.Quote(v) + " is not a base-10 integer"
			if py, ok := pytext.IntText(v); ok {
				// "1_0", non-ASCII digits, beyond int64: the reference's
				// local derivation (Python int()) would have read py.
				reason += " (the Python reference's int() reads " + py + "; lens applies the strict integer rule to local values too)"
			}
			if i+1 < len(names) {
				reason += " (" + strings.Join(names[i+1:], ", ") + " not consulted)"
			}
			d.invalid = append(d.invalid, omission{key, reason})
			if d.explain {
				d.omitted = append(d.omitted, omission{key, reason})
			}
			return
		}
		source := ""
		if d.explain {
			source = "env " + name
			if _, ok := pytext.IntText(v); !ok {
				// U+001C–U+001F at the edges: str.strip (the strict rule's
				// trim) removes them, Python's int() does not.
				d.notes = append(d.notes, omission{key, name + "=" + strconv.Quote(v) + " is read as " +
					strconv.FormatInt(n, 10) + " (the Python reference's int() rejects it and omits " + key +
					"; lens applies the strict integer rule to local values too)"})
			}
		}
		d.add(key, attr.Int64(n), source)
		return
	}
	if hasDefault {
		d.add(key, attr.Int64(def), srcDefault)
	}
}

func (d *slurmDeriver) omit(key, reason string) {
	if d.explain {
		d.omitted = append(d.omitted, omission{key, reason})
	}
}

// derive computes the local Slurm attributes; jobID is the non-empty
// SLURM_JOB_ID.
func (d *slurmDeriver) derive(env environ.Lookuper, jobID string) {
	d.env = env
	taskID, arrayMode := env.LookupEnv(envSlurmArrayTaskID)
	arrayJobID, hasArrayJob := environ.NonEmpty(env, envSlurmArrayJobID)

	if arrayMode && hasArrayJob {
		d.add(lensconv.SlurmJobID, attr.String(arrayJobID+"_"+taskID), srcArrayJob)
	} else {
		d.addEnv(lensconv.SlurmJobID, jobID, envSlurmJobID)
	}
	d.addEnv(lensconv.SlurmJobIDRaw, jobID, envSlurmJobID)
	if hasArrayJob {
		d.addEnv(lensconv.SlurmArrayJobID, arrayJobID, envSlurmArrayJobID)
	} else {
		d.addEnv(lensconv.SlurmArrayJobID, jobID, envSlurmJobID)
	}
	switch {
	case !arrayMode:
		d.add(lensconv.SlurmArrayTaskID, attr.String("0"), srcDefault)
	case taskID != "":
		d.addEnv(lensconv.SlurmArrayTaskID, taskID, envSlurmArrayTaskID)
	default:
		d.omit(lensconv.SlurmArrayTaskID, envSlurmArrayTaskID+" is set but empty")
	}
	d.integer(lensconv.SlurmArrayCount, 1, true, envSlurmArrayTaskCount)
	d.first(lensconv.SlurmSLUID, envLensSlurmSLUID, envNVLaunchSLUID)
	d.first(lensconv.SlurmArraySLUID, envLensSlurmArraySLUID, envNVLaunchArraySLUID)
	d.first(lensconv.SlurmJobName, envSlurmJobName)
	d.first(lensconv.SlurmClusterName, envSlurmClusterName)
	d.first(lensconv.SlurmPartition, envSlurmJobPartition, envSlurmPartition)
	d.integer(lensconv.SlurmNNodes, 0, false, envSlurmJobNumNodes, envSlurmNNodes)
	d.integer(lensconv.SlurmNTasks, 0, false, envSlurmNTasks)
	d.integer(lensconv.SlurmRestartCount, 0, true, envSlurmRestartCount)
	d.first(lensconv.SlurmJobUser, envSlurmJobUser)
	d.first(lensconv.SlurmJobAccount, envSlurmJobAccount)
	d.first(lensconv.SlurmJobQOS, envSlurmJobQOS)
	d.first(lensconv.SlurmJobReservation, envSlurmJobReservation)
	d.first(lensconv.SlurmSegment, envSlurmSegment)
	d.first(lensconv.SlurmTopologyAddr, envSlurmTopologyAddr)
	d.first(lensconv.SlurmTopologyAddrPattern, envSlurmTopologyAddrPatt)
	step := SlurmStep(env)
	if step == "" {
		d.first(lensconv.SlurmHeadNodeName, envSlurmdNodename)
	} else if d.explain {
		d.omit(lensconv.SlurmHeadNodeName, step+" is set (inside a step)")
	}
	var buf [128]byte
	name := appendJobUUIDName(buf[:0], env)
	source := ""
	if d.explain {
		source = "derived (UUIDv5 of " + strconv.Quote(string(name)) + ")"
	}
	d.add(lensconv.NVDLJobUUID, attr.String(uuid5(name)), source)
}

// SlurmStep returns the variable that makes env a task of a Slurm job step
// — SLURM_STEP_ID, else SLURM_STEPID, when non-empty — or "" outside a step:
// in the batch script (Slurm's batch step, which has no step id) and
// without Slurm. It is the rule by which slurm.head_node.name is left out
// inside a step (docs/detection.md#detect-slurm), and the one by which lens
// taskprolog tells the batch step from a step's task.
func SlurmStep(env environ.Lookuper) string {
	env = environ.Or(env)
	if _, ok := environ.NonEmpty(env, envSlurmStepID); ok {
		return envSlurmStepID
	}
	if _, ok := environ.NonEmpty(env, envSlurmStepIDOld); ok {
		return envSlurmStepIDOld
	}
	return ""
}

// usedText describes a source for "…; used X" notes.
func usedText(source string) string {
	if s, ok := strings.CutPrefix(source, "env "); ok {
		return s
	}
	if source == srcDefault {
		return "the default"
	}
	return source
}

func explainSlurm(e *Explanation, dst *attr.Map, start int, d *slurmDeriver, rejected []rejection, fromCarrier map[string]bool) {
	entries := dst.Entries()[start:]
	added := make(map[string]bool, len(entries))
	for _, entry := range entries {
		key := entry.Key
		added[key] = true
		local, source, derived := d.lookup(key)
		if !fromCarrier[key] {
			e.Record(key, source)
			continue
		}
		var notes []string
		if derived {
			notes = append(notes, "the carrier value wins over "+usedText(source)+" ("+strconv.Quote(local.String())+")")
		}
		e.Record(key, sourceCarrier, notes...)
	}
	for _, r := range rejected {
		if added[r.key] {
			_, source, _ := d.lookup(r.key)
			e.Note(r.key, r.reason()+"; used "+usedText(source))
		} else {
			e.Note(r.key, r.reason()) // the key's Source stays empty: not emitted
		}
	}
	for _, o := range d.omitted {
		if added[o.key] {
			e.Note(o.key, o.reason+": the local value is not used")
		} else {
			e.Note(o.key, o.reason)
		}
	}
	for _, o := range d.notes {
		if fromCarrier[o.key] {
			e.Note(o.key, o.reason+"; the carrier value is used")
		} else {
			e.Note(o.key, o.reason)
		}
	}
}
