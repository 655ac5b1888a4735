// Package resources detects the resource attributes of the current process
// exactly as NVIDIA NeMo Lens does (SPEC §1.2–§1.6, §4, §5, §6.5): the local
// host/process/GPU count, the Slurm job (merged with the launcher-provided
// carrier OTEL_RESOURCE_ATTRIBUTES), Kubernetes, the job and run UUIDs, and
// the type reconstruction of carrier strings. It also adapts the detectors
// to the OpenTelemetry SDK ([Detector], [LocalDetector], [SlurmDetector],
// [KubernetesDetector] for resource.New(ctx, resource.WithDetectors(...))).
//
// Everything the detectors read from the outside world is injectable through
// [Options] (environment, host name, process id, GPU probe, Kubernetes
// secrets path, logger); the zero Options reads the live process at call
// time. Detection never touches the network, never reads the Kubernetes
// service-account token, and starts a subprocess only for the nvidia-smi GPU
// count when CUDA_VISIBLE_DEVICES is absent. A detector whose platform is
// absent returns an empty map and no error; no function panics on bad input.
//
// # Attributes
//
// [DetectLocal] (SPEC §1.2):
//
//	Key             Type    Source
//	host.name       string  os.Hostname (Options.Hostname); always
//	process.pid     int     os.Getpid (Options.PID); always
//	host.gpu.count  int     CUDA_VISIBLE_DEVICES present: 0 when blank after trimming, else the number of
//	                        comma-separated items (no validation); absent: nvidia-smi --query-gpu=count
//	                        --format=csv,noheader (5 s timeout), omitted on any failure
//
// [DetectSlurm] (SPEC §1.3, §1.4), active when SLURM_JOB_ID is non-empty or
// the carrier holds a valid allowlisted key. Each key takes the carrier value
// when it is valid and non-empty, else the local value; lists are "first
// non-empty wins"; values are not trimmed:
//
//	Key                          Type    Environment source
//	slurm.job.id                 string  SLURM_ARRAY_JOB_ID + "_" + SLURM_ARRAY_TASK_ID in array mode, else SLURM_JOB_ID
//	slurm.job.id.raw             string  SLURM_JOB_ID
//	slurm.array.job_id           string  SLURM_ARRAY_JOB_ID, else SLURM_JOB_ID
//	slurm.array.task_id          string  SLURM_ARRAY_TASK_ID ("0" when absent, omitted when empty)
//	slurm.array.count            int     SLURM_ARRAY_TASK_COUNT (1 when absent or empty, omitted when invalid)
//	slurm.sluid                  string  LENS_SLURM_SLUID, NV_LAUNCH_SLUID
//	slurm.array.sluid            string  LENS_SLURM_ARRAY_SLUID, NV_LAUNCH_ARRAY_SLUID
//	slurm.job.name               string  SLURM_JOB_NAME
//	slurm.cluster.name           string  SLURM_CLUSTER_NAME
//	slurm.partition              string  SLURM_JOB_PARTITION, SLURM_PARTITION
//	slurm.nnodes                 int     SLURM_JOB_NUM_NODES, SLURM_NNODES (chosen first, then validated)
//	slurm.ntasks                 int     SLURM_NTASKS
//	slurm.restart_count          int     SLURM_RESTART_COUNT (0 when absent or empty, omitted when invalid)
//	slurm.job.user               string  SLURM_JOB_USER
//	slurm.job.account            string  SLURM_JOB_ACCOUNT
//	slurm.job.qos                string  SLURM_JOB_QOS
//	slurm.job.reservation        string  SLURM_JOB_RESERVATION
//	slurm.segment                string  SLURM_SEGMENT
//	slurm.topology.addr          string  SLURM_TOPOLOGY_ADDR
//	slurm.topology.addr_pattern  string  SLURM_TOPOLOGY_ADDR_PATTERN
//	slurm.head_node.name         string  SLURMD_NODENAME, only when SLURM_STEP_ID and SLURM_STEPID are absent or empty
//	nv.dl.job.uuid               string  DeriveJobUUID: SLURM_CLUSTER_NAME, SLURM_JOB_ID, SLURM_ARRAY_JOB_ID,
//	                                     SLURM_ARRAY_TASK_ID
//	nv.dl.run.uuid               string  carrier only (never derived by detection)
//
// The carrier itself is OTEL_RESOURCE_ATTRIBUTES, decoded with
// carrier.Parse. What real Slurm sets (Slurm 22.05): the batch step has no
// SLURM_STEP_ID, so slurm.head_node.name appears in the batch script and not
// in srun tasks; SLURM_PARTITION is never set by Slurm (only
// SLURM_JOB_PARTITION); SLURM_RESTART_COUNT is absent before the first
// requeue (hence the default 0); the salloc shell has no SLURMD_NODENAME,
// SLURM_JOB_USER or SLURM_TOPOLOGY_*; array tasks carry SLURM_ARRAY_JOB_ID
// and SLURM_ARRAY_TASK_ID, and for the highest-numbered task SLURM_JOB_ID
// equals SLURM_ARRAY_JOB_ID, so array mode is keyed on the presence of
// SLURM_ARRAY_TASK_ID, never on comparing ids.
//
// [DetectKubernetes] (SPEC §1.5), active iff KUBERNETES_SERVICE_HOST is
// non-empty or /var/run/secrets/kubernetes.io exists (only checked, never
// read):
//
//	Key                 Type    Environment source
//	k8s.namespace.name  string  K8S_NAMESPACE
//	k8s.pod.name        string  K8S_POD_NAME, else (absent or empty) HOSTNAME
//	k8s.pod.uid         string  K8S_POD_UID
//	k8s.node.name       string  K8S_NODE_NAME
//	k8s.container.name  string  K8S_CONTAINER_NAME
//	k8s.job.name        string  K8S_JOB_NAME
//
// [Detect] = local, then Slurm, then Kubernetes; a later layer overwrites
// equal keys; host.name is always present.
//
// [DeriveJobUUID] / [DeriveRunUUID] (SPEC §5) read SLURM_CLUSTER_NAME,
// SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, SLURM_RESTART_COUNT,
// TORCHELASTIC_RESTART_COUNT and TORCHELASTIC_RUN_ID; they are UUIDv5 in the
// URL namespace, computed with crypto/sha1. [JobUUIDName] and [RunUUIDName]
// return the name strings.
//
// [DetectGPU] (SPEC §9, provisional; not called by Detect) reads LOCAL_RANK,
// SLURM_LOCALID and CUDA_VISIBLE_DEVICES and produces nv.gpu.index (int),
// nv.gpu.model, nv.gpu.uuid, nv.gpu.serial, nv.gpu.pci_bus_id,
// nv.gpu.compute_capability, nv.gpu.memory_total (int, bytes) and
// nv.gpu.driver_version through an [NVML] (default: [NvidiaSMI.Query]).
//
// [Normalize] (SPEC §6.5) turns carrier strings of the DL/GPU integer fields
// into int64 and stringifies the DL/GPU string fields; see package semconv
// for the key lists.
//
// # Integer rule
//
// slurm.array.count, slurm.nnodes, slurm.ntasks, slurm.restart_count (carrier
// and local values) and the DL/GPU integer fields use the strict rule of
// carrier.ParseInt: after trimming, [+-]?[0-9]+ with ASCII digits only. The
// result is an int64 attribute.
//
// # Divergences from the Python reference (port decisions)
//
//   - Integers outside int64 are invalid (Python's are unbounded): a Slurm
//     value falls back or is omitted, a DL/GPU field is kept as a string with
//     a warning (SPEC §4, §10.4).
//   - The strict integer rule is applied to local Slurm values too
//     (SPEC §10.1, following the docs).
//   - If the host-name lookup fails, host.name is "" and a WARNING is logged
//     (Python's gethostname does not fail).
//   - Normalize keeps a null value of a string field null (Python's str()
//     would render "None").
//   - DetectGPU's live NVML is nvidia-smi, whose memory.total is in MiB
//     (converted to bytes); the local rank is parsed like Python's int(),
//     but values beyond int64 fail.
//   - Messages are Go log/slog records carrying the reference's logger name
//     in a "logger" attribute; only the substrings the reference's tests
//     check are guaranteed.
//
// # Provenance
//
// Pass an [Explanation] in [Options.Explain] to learn where each attribute
// came from and which candidates were discarded (used by the CLI's
// --explain).
package detect
