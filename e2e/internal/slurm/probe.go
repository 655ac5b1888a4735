package slurm

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// Probe flags/environment: the probe (e2e/cmd/probe) writes one Record per
// invocation into the directory given by -out or $LENS_PROBE_OUT, labelled by
// -label or $LENS_PROBE_LABEL.
const (
	ProbeOutEnv   = "LENS_PROBE_OUT"
	ProbeLabelEnv = "LENS_PROBE_LABEL"
)

// Record is what one probe invocation saw and detected.
type Record struct {
	Label      string            `json:"label"`
	PID        int               `json:"pid"`
	OSHostname string            `json:"os_hostname"`
	Env        map[string]string `json:"env"` // present variables only: SLURM_*, SLURMD_*, HOSTNAME, OTEL_RESOURCE_ATTRIBUTES, ...
	Slurm      []Attr            `json:"detect_slurm"`
	Detect     []Attr            `json:"detect"`
	JobUUID    string            `json:"job_uuid"`
	RunUUID    string            `json:"run_uuid"`
	RunUUIDOK  bool              `json:"run_uuid_ok"`
	Error      string            `json:"error,omitempty"`

	File string `json:"-"` // where it was read from
}

// Attr is one entry of a detected attribute map, in insertion order. Kind is
// "string", "int64", "bool", "float64" or "null"; Value is the typed JSON
// value (a JSON number for int64 and float64, never a quoted string).
type Attr struct {
	Key   string          `json:"key"`
	Kind  string          `json:"kind"`
	Value json.RawMessage `json:"value"`
}

// String returns the value of a string attribute (ok false for other kinds).
func (a Attr) String() (string, bool) {
	if a.Kind != "string" {
		return "", false
	}
	var s string
	if err := json.Unmarshal(a.Value, &s); err != nil {
		return "", false
	}
	return s, true
}

// Int64 returns the value of an int64 attribute; ok is false unless Kind is
// "int64" and the JSON value is an integer number (not a quoted string).
func (a Attr) Int64() (int64, bool) {
	if a.Kind != "int64" {
		return 0, false
	}
	n, err := strconv.ParseInt(string(a.Value), 10, 64)
	return n, err == nil
}

// Lookup returns the attribute key of attrs.
func Lookup(attrs []Attr, key string) (Attr, bool) {
	for _, a := range attrs {
		if a.Key == key {
			return a, true
		}
	}
	return Attr{}, false
}

// Keys returns the keys of attrs in order.
func Keys(attrs []Attr) []string {
	out := make([]string, len(attrs))
	for i, a := range attrs {
		out[i] = a.Key
	}
	return out
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// RecordFileName is the probe's output file name:
// <label>.<SLURM_JOB_ID>.<SLURM_STEP_ID or "batch">.<SLURM_PROCID or "x">.json
// (missing job id: "nojob"). lookup is os.LookupEnv or equivalent.
func RecordFileName(label string, lookup func(string) (string, bool)) string {
	get := func(k, def string) string {
		if v, ok := lookup(k); ok && v != "" {
			return v
		}
		return def
	}
	if label == "" {
		label = "probe"
	}
	parts := []string{label, get("SLURM_JOB_ID", "nojob"), get("SLURM_STEP_ID", "batch"), get("SLURM_PROCID", "x")}
	for i, p := range parts {
		parts[i] = unsafeName.ReplaceAllString(p, "_")
	}
	return strings.Join(parts, ".") + ".json"
}

// ReadRecords reads dir/<label>.*.json, sorted by file name.
func ReadRecords(dir, label string) ([]Record, error) {
	return ReadJSON(dir, label, func(r *Record, file string) { r.File = file })
}
