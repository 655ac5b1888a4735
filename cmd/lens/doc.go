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
//	lens taskprolog [--policy FILE]      (also: any name with "taskprolog")
//	lens exec [--attr KEY=VALUE]... [--role ROLE] [--rank-from slurm|torchrun|k8s-index|mpi]
//	          [--signals auto|relay|direct|aside] [--command-args] [--flush-timeout D]
//	          [--] COMMAND [ARG...]
//	lens emit-spans [--service NAME] [--flush-timeout D] --span NAME,START,END[,PARENT]...
//	lens reckon [--infra-step NAME[,NAME...]]... [--wait D] [--flush-timeout D] JOBID
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
//	     run identity; lens resource cannot read its configuration; lens
//	     emit-spans cannot set up tracing or export; an I/O error (the
//	     message is on stderr)
//	2    usage error: unknown command or flag, a missing or extra argument,
//	     an invalid flag value, JSON input that is not one object. stderr
//	     holds one line "lens COMMAND: REASON" and the usage; and invalid
//	     spans for lens emit-spans (one line per problem, no usage)
//	3    lens emit-spans, lens reckon: every span reached the collector,
//	     which rejected some (an OTLP partial success; the count line on
//	     stderr); they are not retried, and a rerun would send the others
//	     again (docs/tracing.md#export-counts)
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
// # Commands
//
// Each command's manual is its section of docs/cli.md; "lens help COMMAND"
// prints its short form:
//
//	lens detect         docs/cli.md#lens-detect
//	lens resource       docs/cli.md#lens-resource
//	lens carrier parse  docs/cli.md#lens-carrier-parse
//	lens carrier format docs/cli.md#lens-carrier-format
//	lens carrier extend docs/cli.md#lens-carrier-extend
//	lens carrier check  docs/cli.md#lens-carrier-check
//	lens uuid           docs/cli.md#lens-uuid
//	lens env            docs/cli.md#lens-env
//	lens exec           docs/cli.md#lens-exec
//	lens emit-spans     docs/cli.md#lens-emit-spans
//	lens taskprolog     docs/cli.md#lens-taskprolog
//	lens reckon         docs/cli.md#lens-reckon
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
//	                               the exporter and span processing (exec,
//	                               emit-spans)
//	TRACEPARENT, TRACESTATE        the parent trace context (exec,
//	                               emit-spans)
//	NEMO_LENS_TRACE_PER_ATTEMPT    one trace per job attempt (exec,
//	                               emit-spans, env;
//	                               docs/tracing.md#trace-per-attempt)
//	PATH                           the command to run (exec)
//	LENS_LOG_LEVEL                 the level of the library's log records
//	LENS_TASKPROLOG, LENS_TASKPROLOG_POLICY
//	                               lens taskprolog's opt-out and policy file
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
