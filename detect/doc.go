// Package detect detects the resource attributes of the current process
// exactly as NVIDIA NeMo Lens does: the local host/process/GPU count, the
// Slurm job (merged with the launcher-provided carrier
// OTEL_RESOURCE_ATTRIBUTES), Kubernetes, the job and run UUIDs, and the type
// reconstruction of carrier strings. The rules are stated in
// docs/detection.md (docs/README.md lists every anchor). It also adapts the
// detectors to the OpenTelemetry SDK ([Detector], [LocalDetector],
// [SlurmDetector], [KubernetesDetector] for resource.New(ctx,
// resource.WithDetectors(...))).
//
// Everything the detectors read from the outside world is injectable through
// the options ([WithEnv], [WithHostname], [WithPID], [WithGPUCount],
// [WithKubernetesSecretsPath], [WithNVML], [WithLocalRank],
// [WithNvidiaProcfs], [WithNvidiaSMI], [WithLogger]); without options the
// live process is read at call time. Detection never touches the network,
// never reads the Kubernetes service-account token, and starts a subprocess
// only for the nvidia-smi GPU count when CUDA_VISIBLE_DEVICES is absent (and
// for [VisibleGPUs] when the driver's procfs tree cannot be used). A detector
// whose platform is absent returns an empty map and no error; no function
// panics on bad input.
//
// [VisibleGPUs] is lens-go's extension, not the reference's
// (docs/detection.md#gpu-devices): the GPUs the process may use, from the
// NVIDIA driver's /proc/driver/nvidia/gpus, mapped through
// CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES and Slurm's GPU variables;
// [VisibleGPUAttributes] gives their resource keys (nv.gpu.visible.*) and
// [GPUDevice.InfoAttributes] those of one GPU.
//
// # Attributes
//
// [Local] (docs/detection.md#detect-local):
//
//	Key             Type    Source
//	host.name       string  os.Hostname ([WithHostname]); always
//	process.pid     int     os.Getpid ([WithPID]); always
//	host.gpu.count  int     CUDA_VISIBLE_DEVICES present: 0 when blank after trimming, else the number of
//	                        comma-separated items (no validation); absent: nvidia-smi --query-gpu=count
//	                        --format=csv,noheader (5 s timeout), omitted on any failure
//
// [Slurm] (docs/detection.md#detect-slurm), active when SLURM_JOB_ID is
// non-empty or the carrier holds a valid allowlisted key. Each key takes the
// carrier value when it is valid and non-empty, else the local value; lists
// are "first non-empty wins"; values are not trimmed:
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
// [Kubernetes] (docs/detection.md#detect-kubernetes), active iff
// KUBERNETES_SERVICE_HOST is non-empty or /var/run/secrets/kubernetes.io
// exists (only checked, never read):
//
//	Key                 Type    Environment source
//	k8s.namespace.name  string  K8S_NAMESPACE
//	k8s.pod.name        string  K8S_POD_NAME, else (absent or empty) HOSTNAME
//	k8s.pod.uid         string  K8S_POD_UID
//	k8s.node.name       string  K8S_NODE_NAME
//	k8s.container.name  string  K8S_CONTAINER_NAME
//	k8s.job.name        string  K8S_JOB_NAME
//
// [Ranks] (docs/detection.md#detect-ranks; on request only, never called by
// [All] or a detector) reads nv.dl.rank, nv.dl.world_size and
// nv.dl.local_rank, as int64 by the strict integer rule, from the variables
// of the launcher the caller names:
//
//	Launcher   nv.dl.rank            nv.dl.world_size  nv.dl.local_rank
//	slurm      SLURM_PROCID          SLURM_NTASKS      SLURM_LOCALID
//	torchrun   RANK                  WORLD_SIZE        LOCAL_RANK
//	k8s-index  JOB_COMPLETION_INDEX  -                 -
//
// The launcher names are [RankFromSlurm], [RankFromTorchrun] and
// [RankFromK8sIndex] ([RankSources], [ValidRankFrom]). A variable that is
// absent, empty or not an integer, and an unknown launcher, give no
// attribute and a warning.
//
// [All] = local, then Slurm, then Kubernetes; a later layer overwrites
// equal keys; host.name is always present (docs/detection.md#detect-all).
//
// [JobUUID] / [RunUUID] (docs/detection.md#uuids) read SLURM_CLUSTER_NAME,
// SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, SLURM_RESTART_COUNT,
// TORCHELASTIC_RESTART_COUNT and TORCHELASTIC_RUN_ID; they are UUIDv5 in the
// URL namespace, computed with crypto/sha1. [JobUUIDName] and [RunUUIDName]
// return the name strings.
//
// [GPU] (docs/detection.md#detect-gpu; provisional; not called by [All])
// reads LOCAL_RANK, SLURM_LOCALID and CUDA_VISIBLE_DEVICES and produces
// nv.gpu.index (int), nv.gpu.model, nv.gpu.uuid, nv.gpu.serial,
// nv.gpu.pci_bus_id, nv.gpu.compute_capability, nv.gpu.memory_total (int,
// bytes) and nv.gpu.driver_version through an [NVML] (default:
// [NvidiaSMI.Query]).
//
// [Normalize] (docs/detection.md#type-reconstruction) turns carrier strings
// of the DL/GPU integer fields into int64 and stringifies the DL/GPU string
// fields; see package lensconv for the key lists.
//
// # Integer rule
//
// slurm.array.count, slurm.nnodes, slurm.ntasks, slurm.restart_count (carrier
// and local values), the DL/GPU integer fields and [Ranks] use the strict
// integer rule: after trimming with Python's str.strip set, [+-]?[0-9]+
// with ASCII digits only, within int64 (docs/compatibility.md#integer-rule).
// The result is an int64 attribute. The local rank of [GPU] is read with
// Python's int() instead (docs/compatibility.md#python-int).
//
// # Divergences from the Python reference (port decisions)
//
// Each is listed, with its reason, in
// docs/compatibility.md#intentional-divergences.
//
//   - Integers outside int64 are invalid (Python's are unbounded): a Slurm
//     value falls back or is omitted, a DL/GPU field is kept as a string with
//     a warning (docs/compatibility.md#divergence-int64).
//   - The strict integer rule is applied to local Slurm values too, where
//     the reference's local derivation calls Python's int(): "1_0" and
//     non-ASCII digits omit the key, "5\x1f" gives 5; the explanation says
//     what the reference reads
//     (docs/compatibility.md#divergence-slurm-local-integers).
//   - If the host-name lookup fails, host.name is "" and a WARNING is logged
//     (Python's gethostname does not fail;
//     docs/compatibility.md#divergence-hostname-failure).
//   - Normalize keeps a null value of a string field null (Python's str()
//     would render "None"; docs/compatibility.md#divergence-normalize-null).
//   - nvidia-smi: the host.gpu.count probe counts only GPU records, lines
//     that are base-10 integers (ASCII digits) after Python's strip; a
//     non-blank line that is not one gives no count (the reference counts
//     every non-blank line, garbage included, but a garbage line is not a
//     GPU). Its output is read up to 1 MiB: more gives no count (the
//     reference reads it all). The tool runs in a process group of its own,
//     killed whole on timeout, cancellation, oversized output and exit, so
//     no descendant outlives the probe (the reference kills only the tool).
//     Lines, the UTF-8 rule and the 5 s timeout are the reference's.
//     The live NVML of [GPU] is nvidia-smi, run the same way, whose
//     memory.total is in MiB (converted to bytes); the local rank is parsed
//     like Python's int(), but values beyond int64 fail.
//   - Messages are Go log/slog records carrying the reference's logger name
//     in a "logger" attribute; only the substrings the reference's tests
//     check are guaranteed.
//
// # Provenance
//
// Pass an [Explanation] with [WithExplanation] to learn where each attribute
// came from and which candidates were discarded (used by the CLI's
// --explain).
package detect
