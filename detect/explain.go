package detect

import (
	"slices"
	"sync"
)

// Origin records where the value of one resource attribute came from, for
// the CLI's --explain.
//
// Source names the winning source, for example "carrier",
// "env SLURM_JOB_NUM_NODES", "env SLURM_ARRAY_JOB_ID+SLURM_ARRAY_TASK_ID",
// "hostname", "pid", "env CUDA_VISIBLE_DEVICES", "nvidia-smi", "default" or
// `derived (UUIDv5 of "nemo.lens.job/probe/12")`. An empty Source means the
// key was considered but not emitted; Notes then say why.
//
// Notes lists the candidates that were discarded and why, in the order they
// were recorded, e.g. `carrier value "abc" for slurm.nnodes is not a base-10
// integer; used SLURM_JOB_NUM_NODES` or `SLURM_STEP_ID is set (inside a
// step)` for a key that was not emitted.
type Origin struct {
	Key    string
	Source string
	Notes  []string
}

// Emitted reports whether the key got a value (Source is not empty).
func (o Origin) Emitted() bool { return o.Source != "" }

// Explanation collects [Origin]s while resources are detected and assembled.
// Pass a non-nil *Explanation with [WithExplanation] to fill it; a nil
// *Explanation ignores every call, so recording costs nothing when nobody
// asks. Origins are kept in the order of their first record. It is safe for
// concurrent use. The zero value is ready to use.
type Explanation struct {
	mu      sync.Mutex
	origins []Origin
	index   map[string]int
}

func (e *Explanation) entry(key string) *Origin {
	if i, ok := e.index[key]; ok {
		return &e.origins[i]
	}
	if e.index == nil {
		e.index = make(map[string]int)
	}
	e.index[key] = len(e.origins)
	e.origins = append(e.origins, Origin{Key: key})
	return &e.origins[len(e.origins)-1]
}

// Record sets the source of key's value and appends notes. When key already
// had a different, non-empty source, a note "replaces the value from
// <old source>" is added first, so a layer that overrides another stays
// visible. A nil receiver does nothing.
func (e *Explanation) Record(key, source string, notes ...string) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.entry(key)
	if o.Source != "" && o.Source != source {
		o.Notes = append(o.Notes, "replaces the value from "+o.Source)
	}
	o.Source = source
	o.Notes = append(o.Notes, notes...)
}

// Note appends notes to key without changing its source. A key that was
// never recorded is added with an empty Source (considered, not emitted). A
// nil receiver does nothing.
func (e *Explanation) Note(key string, notes ...string) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.entry(key)
	o.Notes = append(o.Notes, notes...)
}

// Discard marks key as not emitted (its Source becomes empty) and appends
// notes, for a layer that removes a key an earlier layer recorded. The old
// source, if any, is kept in a note "discarded the value from <old source>".
// A nil receiver does nothing.
func (e *Explanation) Discard(key string, notes ...string) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.entry(key)
	if o.Source != "" {
		o.Notes = append(o.Notes, "discarded the value from "+o.Source)
	}
	o.Source = ""
	o.Notes = append(o.Notes, notes...)
}

// Origins returns a copy of all origins in the order of their first record.
// A nil receiver returns nil.
func (e *Explanation) Origins() []Origin {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Origin, len(e.origins))
	for i, o := range e.origins {
		o.Notes = slices.Clone(o.Notes)
		out[i] = o
	}
	return out
}

// Origin returns a copy of key's origin and whether one was recorded.
func (e *Explanation) Origin(key string) (Origin, bool) {
	if e == nil {
		return Origin{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	i, ok := e.index[key]
	if !ok {
		return Origin{}, false
	}
	o := e.origins[i]
	o.Notes = slices.Clone(o.Notes)
	return o, true
}
