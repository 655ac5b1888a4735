// Command lens inspects and hands on NeMo Lens resource attributes from the
// shell: the OTEL_RESOURCE_ATTRIBUTES carrier, the Slurm, Kubernetes and
// local detectors, the job and run UUIDs, and the resource that telemetry
// setup exports. It also runs a command with the composed carrier in its
// environment and, when telemetry is enabled, a span around it. Every
// result is the one the lens-go library (and the Python reference, NeMo
// Lens) computes; the command adds no logic of its own. The rules are stated
// in docs/ (docs/README.md lists them).
//
// # Synopsis
//
//	lens detect   [--only local|slurm|kubernetes] [--format text|json|env] [--explain]
//	lens resource [--format text|json|env] [--explain] [--attr KEY=VALUE]...
//	lens carrier parse  < CARRIER
//	lens carrier format < JSON
//	lens carrier extend [--defaults JSON] [--overrides JSON] < CARRIER
//	lens carrier check  [--require KEYS] [--forbid KEYS] < CARRIER
//	lens uuid job [--name]
//	lens uuid run [--run-id ID] [--name]
//	lens env --stage sbatch|task [--container-image IMAGE]
//	lens exec [--attr KEY=VALUE]... [--role ROLE] [--rank-from slurm|torchrun|k8s-index]
//	          [--signals auto|relay|direct] [--command-args] [--flush-timeout D]
//	          [--] COMMAND [ARG...]
//	lens help [COMMAND...] | lens [COMMAND...] --help | lens --version
//
// Flags are written --name VALUE, --name=VALUE, -name VALUE or -name=VALUE
// (the standard library's flag package); flags come before positional
// arguments. "lens --version" prints "lens VERSION" (the lens-go module
// version of the binary, "(devel)" for a build from a working tree, or the
// version a release build stamped: docs/install.md#version), then the lines
// "commit: ", "modified: " (true, false or unknown), "go: " and "platform: ".
//
// # Exit status
//
//	0    success
//	1    failure: lens carrier check found a problem; lens uuid run has no
//	     run identity; lens resource cannot read its configuration; an I/O
//	     error (the message is on stderr)
//	2    usage error: unknown command or flag, a missing or extra argument,
//	     an invalid flag value, JSON input that is not one object. stderr
//	     holds one line "lens COMMAND: REASON" and the usage
//	lens exec: the command's status; killed by signal N itself when signal
//	     N killed the command (128+N as PID 1); 126 when it was found and
//	     cannot be run; 127 when it is not found
//
// --help (also -h, -help, and "lens help COMMAND") prints the usage and the
// help text on stdout and exits 0.
//
// # Carrier text on stdin
//
// The carrier commands read carrier text on stdin. Exactly one trailing
// newline ("\n") is not part of it, so printf and echo can both be used;
// any other byte, including a second newline or "\r", is. Raw bytes that are
// not UTF-8 are read as they are (the parser keeps them).
//
// # lens detect
//
// Prints the attributes the detectors find for this process: local
// (host.name, process.pid, host.gpu.count), then Slurm (the environment and
// the valid inherited carrier keys of the allowlist), then Kubernetes, each
// later one overwriting equal keys — or only the detector --only names.
// The GPU count runs nvidia-smi (found in PATH, 5 s timeout) when
// CUDA_VISIBLE_DEVICES is unset.
//
//	--only DETECTOR   local, slurm or kubernetes (default: all, merged)
//	--format FORMAT   text (default), json or env
//	--explain         say where every attribute came from
//
// Formats:
//
//   - json: one JSON object and a newline; keys in emission order; strings
//     as JSON strings, integers as JSON integers, booleans as true/false,
//     null as null. A float is written in its carrier form, Python's repr
//     ("1.0", "1e+16", "-0.0"), which is a JSON number with a fraction or an
//     exponent; NaN and ±Inf, which JSON numbers cannot express, are written
//     as the strings "nan", "inf" and "-inf". JSON cannot hold bytes that are
//     not UTF-8: each such byte is written as \ufffd and the key is named on
//     stderr. HTML characters are not escaped.
//   - env: the carrier text of the attributes and a newline (entries the
//     carrier cannot hold are listed on stderr, as by lens carrier format).
//   - text: an aligned table KEY, VALUE, TYPE for people. Values that are
//     empty, edged with spaces, not printable or not UTF-8 are shown
//     Go-quoted; booleans as True/False, as the carrier writes them.
//
// --explain: for every attribute, the source that won — "carrier",
// "env SLURM_JOB_NUM_NODES", "hostname", "pid", "env CUDA_VISIBLE_DEVICES",
// "nvidia-smi", "default", "derived (...)", "caller", "config RunID",
// "OpenTelemetry SDK", … — and notes on candidates that were discarded and
// why (for example: carrier value "abc" for slurm.nnodes is not a base-10
// integer; used SLURM_JOB_NUM_NODES). Keys that were considered but not
// emitted are listed too. In text format it adds a SOURCE column and a
// "notes:" section after the table. In json format the output becomes
//
//	{"attributes": {...the plain object...},
//	 "explain": [{"key": K, "source": S or null, "notes": [...]}, ...]}
//
// with source null for a key that was considered but not emitted; without
// --explain, json is exactly the plain object. --explain cannot be combined
// with --format env.
//
// # lens resource
//
// Prints the resource an enabled lens.Setup exports for this process and
// its configuration, whether or not telemetry is enabled: telemetry.sdk.*
// (from the OpenTelemetry SDK's own detector), then lens.ResourceAttributes:
// the carrier, OTEL_SERVICE_NAME, the Lens base map (service.name,
// service.version, nemo.run.id, nemo.user.id, wandb.*,
// deployment.environment), the --attr values as the caller's resource
// attributes, detection, type reconstruction and the rank-derived
// service.instance.id ("{run_id}-rank{nv.dl.rank}").
//
//	--format FORMAT    text (default), json or env, as for lens detect
//	--explain          as for lens detect
//	--attr KEY=VALUE   a caller resource attribute (repeatable; a repeated
//	                   key keeps its first position and takes the last value)
//
// --attr values are strings: the caller's attributes of the library are
// typed, but a command line has no types; type reconstruction makes the
// known integer fields (nv.dl.rank, nv.dl.world_size, …) integers, as it
// does for the carrier. An empty NEMO_LENS_RUN_ID is filled as Setup fills
// it: SLURM_JOB_ID, else TORCHELASTIC_RUN_ID (unless it is torchrun's default
// "none"), else a random 12-hex-digit id, different on every call
// (docs/resource.md#run-id-fill-in).
// A configuration variable with an invalid value (NEMO_LENS_ENABLED=maybe)
// is an error (exit status 1).
//
// # lens carrier parse
//
// Parses the carrier text as the reference's parse_otel_resource_attributes
// does and prints one JSON object of string values, keys in carrier order,
// and a newline. Invalid UTF-8 is written as by lens detect --format json
// (\ufffd per byte, the key named on stderr).
//
// # lens carrier format
//
// Reads one JSON object on stdin and prints its carrier text, as the
// reference's format_otel_resource_attributes does, and a newline. Members
// map to attribute values as follows:
//
//   - string → string;
//   - an integer literal (no '.', 'e' or 'E') → integer; outside the int64
//     range it is carried as its decimal text, which is exactly what the
//     reference's unbounded int formats to;
//   - any other number → float, carried in Python repr form (1e16 →
//     "1e+16"); a magnitude too large for float64 becomes inf, too small 0.0,
//     as Python's float() does;
//   - true, false → boolean ("True", "False");
//   - null → omitted silently;
//   - an array or an object → dropped and reported (the reference drops
//     values of other types with a warning).
//
// A repeated key keeps its first position and takes its last value, as a
// Python dict does. JSON strings are decoded by encoding/json: invalid UTF-8
// and lone surrogate escapes become U+FFFD, so values that are not UTF-8
// cannot be expressed. Every dropped entry is listed on stderr, one line
// each, in map order:
//
//	lens carrier format: dropped "KEY": REASON
//
// (KEY Go-quoted); the exit status stays 0. Input that is not exactly one
// JSON object is a usage error whose reason gives the line, the column (in
// bytes) and the byte offset of the offending byte:
//
//	lens carrier format: stdin: invalid JSON at line 3, column 11 (byte offset 22): ...
//
// # lens carrier extend
//
// Prints format(compose(parse(CARRIER), DEFAULTS, OVERRIDES)) and a newline,
// as the reference's extend_otel_resource_attributes does: defaults <
// current carrier < overrides, where "" and null are values that win (a
// null hides the key, which is then omitted). Key order: the defaults'
// keys, then the carrier's new keys, then the overrides' new keys.
//
//	--defaults JSON    a JSON object of defaults (default {})
//	--overrides JSON   a JSON object of overrides (default {})
//
// The objects are read as by lens carrier format (a JSON null is a null
// value); an array or object member is reported as dropped when it is the
// value that wins. Dropped entries are listed on stderr as by lens carrier
// format; invalid JSON is a usage error naming the flag.
//
// # lens carrier check
//
// Checks the carrier text and prints one line per problem on stdout, in
// this order: malformed segment "SEG" (not blank, but no '=' or an empty key:
// parsers skip it), duplicate key "KEY", missing key "KEY" (required,
// absent), empty key "KEY" (required, value empty), forbidden key "KEY".
// Strings are Go-quoted. Exit status 1 when there is a problem; 0, printing
// nothing, otherwise.
//
//	--require KEYS   comma-separated keys that must be present and non-empty
//	--forbid KEYS    comma-separated keys that must be absent
//
// Both flags may be repeated; items are trimmed and empty items ignored.
//
// # lens uuid
//
// "lens uuid job" prints nv.dl.job.uuid and "lens uuid run" prints
// nv.dl.run.uuid (UUIDv5 of the name strings of docs/detection.md#uuids),
// each with a newline. The carrier never influences either.
//
//	--run-id ID   (run) the run id used outside Slurm; ignored in a Slurm job
//	--name        print the UUIDv5 name string instead of the UUID
//
// When the run UUID cannot be derived (no Slurm job id and no run id from
// --run-id or TORCHELASTIC_RUN_ID) lens uuid run prints nothing on stdout,
// a message on stderr, and exits 1.
//
// # lens env
//
// Prints one line for a POSIX shell to eval, the reference's
// "nemo-lens set-slurm-resource-attrs":
//
//	export OTEL_RESOURCE_ATTRIBUTES=VALUE
//
// VALUE is carrier.Extend(current carrier, defaults): the defaults are the
// Slurm attributes of this process (detect.Slurm), so existing carrier keys
// win (docs/compatibility.md#lens-env).
//
//	--stage STAGE            sbatch or task (required)
//	--container-image IMAGE  (task only) add nv.dl.launch.container.image
//
// Stage sbatch leaves out slurm.topology.addr and
// slurm.topology.addr_pattern (they describe one node). Stage task adds
// host.name (the OS host name) and, with --container-image,
// nv.dl.launch.container.image — also as defaults. --container-image with
// --stage sbatch is a usage error; an empty IMAGE is ignored, as in the
// reference. VALUE is quoted as Python's shlex.quote quotes it (unchanged
// when made only of [A-Za-z0-9_@%+=:,./-], else in single quotes with each
// ' written as '"'"'; docs/compatibility.md#shell-quoting), so the line is
// the reference's byte for byte and
//
//	eval "$(lens env --stage task)"
//
// reproduces VALUE exactly in sh, bash, dash and zsh, whatever it holds
// (carrier keys are never percent-encoded, so quotes, $(...), backticks,
// newlines and bytes that are not UTF-8 can reach it).
//
// # lens exec
//
// Runs COMMAND with ARGs as execvp(3) finds and runs it (no shell is
// involved, so no argument is expanded) with stdin, stdout and stderr
// passed through, in the
// environment carrier.ChildEnv builds: OTEL_RESOURCE_ATTRIBUTES is the
// current carrier extended with the --rank-from, --attr and --role values
// as overrides (in that order), NEMO_LENS_RUN_ID is lens's run id unless
// the environment already holds one, and, with telemetry, TRACEPARENT and
// TRACESTATE carry lens's span. Other variables pass through.
//
//	--attr KEY=VALUE     a carrier attribute for the command (a string
//	                     override; repeatable; also a caller attribute of the
//	                     span's resource)
//	--role ROLE          set nv.dl.role (applied after --attr)
//	--rank-from L        set nv.dl.rank, nv.dl.world_size and nv.dl.local_rank
//	                     from the launcher's variables: slurm (SLURM_PROCID,
//	                     SLURM_NTASKS, SLURM_LOCALID), torchrun (RANK,
//	                     WORLD_SIZE, LOCAL_RANK) or k8s-index
//	                     (JOB_COMPLETION_INDEX, rank only); strict integers;
//	                     a missing or invalid variable is reported on stderr
//	                     and its key left out. Opt-in: the Python reference
//	                     never reads these variables
//	                     (docs/detection.md#detect-ranks)
//	--command-args       record every argument in the span
//	                     (process.command_args); off by default, because
//	                     arguments may hold secrets
//	--flush-timeout D    bound the telemetry shutdown (default 5s)
//	--signals M          how signals reach the command: auto (direct inside
//	                     a Slurm job, else relay), relay or direct
//
// The command always starts: when the composed carrier is longer than one
// environment string can be (128 KiB on Linux), it gets the carrier lens
// inherited, or none when that does not fit either; when the kernel refuses
// the whole environment (E2BIG), lens retries the same way. Each fallback is
// said once on stderr.
//
// The command sees what it would see without lens: each signal once (lens
// passes on what it receives in relay mode; in direct mode the senders —
// Slurm, a process group, a terminal — reach the command themselves), its
// own exit status as lens's parent reads it, a parent-death SIGKILL when
// lens dies, its orphans reaped when lens is PID 1, and a start that
// telemetry never delays. The rules, and where lens still differs, are in
// docs/exec.md.
//
// Telemetry: when the configuration enables it (NEMO_LENS_ENABLED=true and
// traces on; OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER and the other standard
// switches are honoured as by lens.Setup), lens sets up tracing only —
// metrics and logs are not set up, the "console" exporter writes to
// stderr, no OpenTelemetry global is installed except the error handler and
// internal logger, which report through lens's logger — under the resource
// lens resource prints (with the override values as caller attributes), and
// records one span for the command's lifetime:
//
//   - name "lens exec BASENAME(COMMAND)", kind internal;
//   - attributes process.command (COMMAND as given), process.args_count,
//     process.executable.path and process.pid (once started),
//     process.exit.code (the exit status lens reports), and
//     process.command_args (COMMAND and ARGs) only with --command-args —
//     the OpenTelemetry semantic conventions make command lines opt-in
//     because they can hold credentials;
//   - status Error with "exit status N", "killed by signal S" or the start
//     error when the status is not 0;
//   - parent: the trace context in lens's own TRACEPARENT and TRACESTATE,
//     when valid (so lens exec nests under an instrumented launcher);
//     otherwise a new trace.
//
// The resource's service.instance.id is the one the command will report
// followed by ".lens-exec.<lens's pid>": a wrapper and the command it wraps
// never share an instance id, and both carry nv.dl.rank. The command
// receives the span's context in TRACEPARENT (and TRACESTATE when there is
// one; a stale TRACESTATE is removed), the OpenTelemetry
// environment-variable convention, so an instrumented command continues the
// trace as the span's child. After the command exits, lens ends the span and
// shuts telemetry down within --flush-timeout, whatever the collector does;
// a collector that refuses the connection ends it at once, with one line on
// stderr. A configuration or setup error is reported on stderr ("lens exec:
// telemetry disabled: ...") and the command runs without telemetry:
// telemetry never keeps the workload from running. Without telemetry
// TRACEPARENT and TRACESTATE pass through unchanged.
//
// # Diagnostics
//
// lens prints its own findings (dropped entries, invalid UTF-8, errors) on
// stderr. The library's log records (log/slog: the rank warning, dropped
// carrier entries, detector notes) are written to stderr as text only at
// or above LENS_LOG_LEVEL (debug, info, warn or error; default error),
// because lens already reports what matters and lens exec must not add
// noise to a workload's stderr.
//
// # Environment
//
// lens reads, depending on the command:
//
//	OTEL_RESOURCE_ATTRIBUTES       the carrier (detect, resource, env, exec)
//	SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID,
//	SLURM_ARRAY_TASK_COUNT, SLURM_JOB_NAME, SLURM_CLUSTER_NAME,
//	SLURM_JOB_PARTITION, SLURM_PARTITION, SLURMD_NODENAME, SLURM_STEP_ID,
//	SLURM_STEPID, SLURM_JOB_NUM_NODES, SLURM_NNODES, SLURM_NTASKS,
//	SLURM_RESTART_COUNT, SLURM_JOB_USER, SLURM_JOB_ACCOUNT, SLURM_JOB_QOS,
//	SLURM_JOB_RESERVATION, SLURM_SEGMENT, SLURM_TOPOLOGY_ADDR,
//	SLURM_TOPOLOGY_ADDR_PATTERN, LENS_SLURM_SLUID, NV_LAUNCH_SLUID,
//	LENS_SLURM_ARRAY_SLUID, NV_LAUNCH_ARRAY_SLUID
//	                               Slurm detection and the UUIDs
//	TORCHELASTIC_RUN_ID, TORCHELASTIC_RESTART_COUNT
//	                               the run UUID
//	KUBERNETES_SERVICE_HOST, K8S_NAMESPACE, K8S_POD_NAME, HOSTNAME,
//	K8S_POD_UID, K8S_NODE_NAME, K8S_CONTAINER_NAME, K8S_JOB_NAME
//	                               Kubernetes detection (also active when
//	                               /var/run/secrets/kubernetes.io exists)
//	CUDA_VISIBLE_DEVICES, PATH     host.gpu.count (PATH finds nvidia-smi)
//	NEMO_LENS_ENABLED, NEMO_LENS_TRACES_ENABLED, NEMO_LENS_METRICS_ENABLED,
//	NEMO_LENS_LOGS_ENABLED, NEMO_LENS_SPAN_GROUPS, NEMO_LENS_EXPORTER,
//	NEMO_LENS_RUN_ID, NEMO_LENS_USER_ID, OTEL_SERVICE_NAME, WANDB_ENTITY,
//	WANDB_PROJECT, DEPLOYMENT_ENV, ENVIRONMENT
//	                               the configuration and base map (resource,
//	                               exec)
//	OTEL_EXPORTER_OTLP_*, OTEL_BSP_*, OTEL_TRACES_SAMPLER*
//	                               the exporter and span processing (exec)
//	TRACEPARENT, TRACESTATE        the parent trace context (exec)
//	PATH                           the command to run (exec)
//	LENS_LOG_LEVEL                 the level of the library's log records
//
// lens sets OTEL_RESOURCE_ATTRIBUTES, and with telemetry TRACEPARENT and
// TRACESTATE, for the command of lens exec only; it never changes its own
// environment.
//
// # Examples
//
//	$ printf 'a=1,b=x%%2Cy' | lens carrier parse
//	{"a":"1","b":"x,y"}
//	$ echo '{"nemo.run.id":"exp/1,seed=7","nv.dl.rank":3}' | lens carrier format
//	nemo.run.id=exp%2F1%2Cseed%3D7,nv.dl.rank=3
//	$ SLURM_JOB_ID=12345 SLURM_CLUSTER_NAME=cluster-a lens uuid job
//	be34ba0f-41ed-5d53-84c1-e3f3dd25bfd7
//	$ eval "$(lens env --stage task --container-image nvcr.io/nvidia/nemo:25.04)"
//	$ NEMO_LENS_ENABLED=true lens exec --role trainer -- python train.py
//
// Port decisions (intentional differences from the Python reference's
// nemo-lens command, which has only set-slurm-resource-attrs): lens env is
// that command under a shorter name; every other command is new and
// prints what the library computes.
package main
