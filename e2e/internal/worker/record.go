// Package worker is the record format of e2e/cmd/worker, the instrumented
// program of the lens-level end-to-end tests, and the helpers the tests use
// to read it back.
//
// Every worker invocation writes ONE JSON file (a Record) into its output
// directory: the process's identity (pid, parent pid, host name), the
// carrier and trace context it received, the trace and span ids of the span
// it exported, and the resource lens.Setup built. The tests use the record
// only for facts the process alone knows (its pid, its trace id, the exact
// carrier text it received); every attribute assertion reads Jaeger.
package worker

import (
	"regexp"
	"strconv"

	"github.com/nemolens/lens-go/e2e/internal/slurm"
)

// Modes of the worker program (-mode).
const (
	// ModeWorker sets up Lens from the environment, exports one span and
	// writes a Record.
	ModeWorker = "worker"
	// ModeParent publishes job-level carrier attributes, starts -ranks
	// children in worker mode with per-rank child environments, waits for
	// them and writes a Record listing their pids.
	ModeParent = "parent"
	// ModeLauncher sets up Lens, starts a span and, inside it, -ranks
	// children in worker mode (and one more under lens exec with -lens),
	// each with carrier.ChildEnv(span context, {nv.dl.rank: k}); it waits
	// for them, ends its span and writes a Record listing them.
	ModeLauncher = "launcher"
)

// EnvNames are the launcher and identity variables a Record copies (when
// present) into Record.Env.
var EnvNames = []string{
	"NEMO_LENS_RUN_ID", "SLURM_JOB_ID", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
	"TORCHELASTIC_RUN_ID", "RANK", "WORLD_SIZE", "LOCAL_RANK", "JOB_COMPLETION_INDEX",
	"KUBERNETES_SERVICE_HOST", "HOSTNAME",
	"NEMO_LENS_RUN_ID_DRAWN", "PMIX_NAMESPACE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
	"GROUP_RANK", "TORCHELASTIC_RESTART_COUNT", "MASTER_ADDR", "MASTER_PORT",
}

// EnvPrefixes select further variables copied into Record.Env.
var EnvPrefixes = []string{"K8S_"}

// Record is what one worker invocation saw and did.
type Record struct {
	Mode     string `json:"mode"`
	Label    string `json:"label"`
	PID      int    `json:"pid"`
	PPID     int    `json:"ppid"`
	Hostname string `json:"hostname"`

	// Carrier is OTEL_RESOURCE_ATTRIBUTES as the process received it;
	// CarrierSet says whether the variable existed.
	Carrier    string `json:"carrier"`
	CarrierSet bool   `json:"carrier_set"`
	// Traceparent and Tracestate are the TRACEPARENT/TRACESTATE variables
	// the process received ("" when absent).
	Traceparent string `json:"traceparent"`
	Tracestate  string `json:"tracestate"`
	// SlurmProcID is SLURM_PROCID ("" outside Slurm tasks).
	SlurmProcID string `json:"slurm_procid"`
	// Env holds the variables of EnvNames and EnvPrefixes the process
	// received (present ones only): its run id and rank sources.
	Env map[string]string `json:"env,omitempty"`

	// Worker and launcher mode: the exported span.
	SpanName     string `json:"span_name,omitempty"`
	TraceID      string `json:"trace_id,omitempty"`
	SpanID       string `json:"span_id,omitempty"`
	ParentSpanID string `json:"parent_span_id,omitempty"` // "" for a root span
	// RunID is the run id of the Handle's configuration (after Setup filled
	// an empty one); Exporting is Handle.IsExporting.
	RunID     string `json:"run_id,omitempty"`
	Exporting bool   `json:"exporting"`
	// Resource is Handle.Attributes() in order, typed.
	Resource []slurm.Attr `json:"resource,omitempty"`

	// Parent and launcher mode: the child processes, in rank order.
	Children []Child `json:"children,omitempty"`

	// Error is set when something failed (the program also exits non-zero).
	Error string `json:"error,omitempty"`

	File string `json:"-"` // where it was read from
}

// Child is one child process started by a parent.
type Child struct {
	Rank int `json:"rank"`
	PID  int `json:"pid"`
	// Carrier is the OTEL_RESOURCE_ATTRIBUTES entry of the environment the
	// parent built for the child.
	Carrier string `json:"carrier"`
	// ExitCode is the child's exit status (-1 when it did not exit normally).
	ExitCode int `json:"exit_code"`
	// Exec says the child is lens exec (launcher mode, -lens), which runs
	// the worker: PID is then lens's pid, the worker's parent.
	Exec bool `json:"exec,omitempty"`
	// RunID and Traceparent are the NEMO_LENS_RUN_ID and TRACEPARENT
	// entries of the environment the parent built ("" when absent).
	RunID       string `json:"run_id,omitempty"`
	Traceparent string `json:"traceparent,omitempty"`
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// FileName is the record file name of a process: <label>.<pid>.json.
func FileName(label string, pid int) string {
	if label == "" {
		label = "worker"
	}
	return unsafeName.ReplaceAllString(label, "_") + "." + strconv.Itoa(pid) + ".json"
}

// Write stores r in dir under FileName(r.Label, r.PID), atomically (write,
// then rename), so readers never see a partial file.
func Write(dir string, r *Record) error {
	return slurm.WriteJSON(dir, FileName(r.Label, r.PID), r)
}

// Read returns the records dir/<label>.*.json, sorted by file name.
func Read(dir, label string) ([]Record, error) {
	return slurm.ReadJSON(dir, label, func(r *Record, file string) { r.File = file })
}
