// Package lensconv names the resource attributes of lens-go (semantic
// conventions [Version] 1.29.0 plus the NeMo Lens namespaces) and holds the
// type maps that detection and type reconstruction use.
//
// Keys are untyped string constants. The type maps are exposed as functions
// that return fresh slices ([SlurmKeys], [SlurmIntegerKeys], [InheritedKeys],
// [RetiredSlurmKeys], [IntegerKeys], [StringKeys], [LocalKeys],
// [KubernetesKeys]) and as predicates ([IsInheritedKey], [IsIntegerKey],
// …, [TypeOf]); the package has no mutable state. It reads no environment
// variables itself: the tables below name the variables the detectors of
// package detect read for each key. The rules behind the tables are stated
// in docs/ (docs/README.md lists them).
//
// # Service, deployment and identity
//
// The Lens base map and service.instance.id (docs/resource.md#lens-base-map,
// docs/resource.md#service-instance-id):
//
//	Key                     Type    Source
//	service.name            string  config service name (OTEL_SERVICE_NAME, trimmed; default "nemo"); caller may override
//	service.version         string  the library's module version
//	service.instance.id     string  "{run_id}-rank{rank}" when a rank and a run id exist and no explicit id is given
//	deployment.environment  string  DEPLOYMENT_ENV, else ENVIRONMENT (present-but-empty DEPLOYMENT_ENV stops the fallback)
//	nemo.run.id             string  config run id (NEMO_LENS_RUN_ID; setup fills an empty one, docs/resource.md#run-id-fill-in)
//	nemo.user.id            string  config user (NEMO_LENS_USER_ID)
//	wandb.entity            string  WANDB_ENTITY
//	wandb.project           string  WANDB_PROJECT
//	nemo.span.truncated     bool    span attribute, not a resource attribute
//	telemetry.sdk.*         string  added by the OpenTelemetry SDK
//
// # Local
//
// The live process (docs/detection.md#detect-local):
//
//	Key             Type    Source
//	host.name       string  the OS host name (always)
//	process.pid     int     the current process id (always)
//	host.gpu.count  int     CUDA_VISIBLE_DEVICES present: 0 when blank after trimming, else the number of
//	                        comma-separated items; absent: nvidia-smi --query-gpu=count (omitted on failure)
//
// # Slurm
//
// The 21 live keys, in emission order (docs/detection.md#detect-slurm).
// Every key is also read from the carrier (OTEL_RESOURCE_ATTRIBUTES), where
// a valid non-empty value wins over the local one. "first non-empty" lists
// are tried left to right.
//
//	Key                          Type    Environment source
//	slurm.job.id                 string  "{SLURM_ARRAY_JOB_ID}_{SLURM_ARRAY_TASK_ID}" in array mode with a non-empty
//	                                     SLURM_ARRAY_JOB_ID, else SLURM_JOB_ID
//	slurm.job.id.raw             string  SLURM_JOB_ID
//	slurm.array.job_id           string  SLURM_ARRAY_JOB_ID, else SLURM_JOB_ID
//	slurm.array.task_id          string  SLURM_ARRAY_TASK_ID; "0" when absent; omitted when empty
//	slurm.array.count            int     SLURM_ARRAY_TASK_COUNT; 1 when absent or empty; omitted when invalid
//	slurm.sluid                  string  LENS_SLURM_SLUID, NV_LAUNCH_SLUID
//	slurm.array.sluid            string  LENS_SLURM_ARRAY_SLUID, NV_LAUNCH_ARRAY_SLUID
//	slurm.job.name               string  SLURM_JOB_NAME
//	slurm.cluster.name           string  SLURM_CLUSTER_NAME
//	slurm.partition              string  SLURM_JOB_PARTITION, SLURM_PARTITION
//	slurm.nnodes                 int     SLURM_JOB_NUM_NODES, SLURM_NNODES (chosen first, then validated)
//	slurm.ntasks                 int     SLURM_NTASKS
//	slurm.restart_count          int     SLURM_RESTART_COUNT; 0 when absent or empty; omitted when invalid
//	slurm.job.user               string  SLURM_JOB_USER
//	slurm.job.account            string  SLURM_JOB_ACCOUNT
//	slurm.job.qos                string  SLURM_JOB_QOS
//	slurm.job.reservation        string  SLURM_JOB_RESERVATION
//	slurm.segment                string  SLURM_SEGMENT
//	slurm.topology.addr          string  SLURM_TOPOLOGY_ADDR
//	slurm.topology.addr_pattern  string  SLURM_TOPOLOGY_ADDR_PATTERN
//	slurm.head_node.name         string  SLURMD_NODENAME, only when SLURM_STEP_ID and SLURM_STEPID are both absent or empty
//
// Retired, never read and never emitted: slurm.nodelist, slurm.cluster,
// slurm.torchelastic.restart_count.
//
// # Deep-learning participant
//
// Lens never derives these from RANK, WORLD_SIZE or LOCAL_RANK by default
// (only lens.WithRankFrom and lens exec --rank-from ask it to: detect.Ranks,
// docs/detection.md#detect-ranks); they come from the caller or the
// carrier, and type reconstruction turns carrier text into integers with
// the strict integer rule (docs/detection.md#type-reconstruction-keys,
// docs/compatibility.md#integer-rule).
//
//	Key                                          Type    Source
//	nv.dl.rank                                   int     caller / carrier
//	nv.dl.world_size                             int     caller / carrier
//	nv.dl.local_rank                             int     caller / carrier
//	nv.dl.role                                   string  caller / carrier (trainer, ckpt_worker, launcher, generator, …)
//	nv.dl.provider.name                          string  caller / carrier (mcore, vllm, sglang, …)
//	nv.dl.topology.size.{tp,pp,dp}               int     caller / carrier
//	nv.dl.training.config.global_batch_size      int     caller / carrier
//	nv.dl.training.config.micro_batch_size       int     caller / carrier
//	nv.dl.training.config.sequence_length        int     caller / carrier
//	nv.dl.training.config.optimizer              string  caller / carrier
//	nv.dl.training.config.recompute_granularity  string  caller / carrier
//	nv.dl.training.target.train_iters            int     caller / carrier
//	nv.dl.training.target.train_samples          int     caller / carrier
//	nv.dl.training.target.train_tokens           int     caller / carrier
//	nv.dl.software.{torch,cuda,nccl,transformer_engine}  string  caller / carrier (versions)
//	nv.dl.launch.container.image                 string  launcher (carrier); not typed
//	nv.dl.job.uuid                               string  carrier, else UUIDv5 of "nemo.lens.job/{cluster}/{jobkey}" from
//	                                                     SLURM_CLUSTER_NAME, SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID
//	nv.dl.run.uuid                               string  carrier only in detection; derive_nv_dl_run_uuid also reads
//	                                                     SLURM_RESTART_COUNT, TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_RUN_ID
//
// # GPU identity
//
// The reference's detect_gpu (docs/detection.md#detect-gpu):
//
//	Key                        Type    Source
//	nv.gpu.index               int     physical index: the local rank's item of CUDA_VISIBLE_DEVICES, else the local
//	                                   rank (LOCAL_RANK, SLURM_LOCALID)
//	nv.gpu.model               string  NVML device name
//	nv.gpu.uuid                string  NVML device UUID
//	nv.gpu.serial              string  NVML serial
//	nv.gpu.pci_bus_id          string  NVML PCI bus id
//	nv.gpu.compute_capability  string  "major.minor"
//	nv.gpu.memory_total        int     total memory, bytes
//	nv.gpu.driver_version      string  NVML driver version
//
// # Kubernetes
//
// Upstream semantic-convention names (docs/detection.md#detect-kubernetes).
// Active iff KUBERNETES_SERVICE_HOST is non-empty or
// /var/run/secrets/kubernetes.io exists. Empty values are skipped.
//
//	Key                 Type    Environment source
//	k8s.namespace.name  string  K8S_NAMESPACE
//	k8s.pod.name        string  K8S_POD_NAME, else (absent or empty) HOSTNAME
//	k8s.pod.uid         string  K8S_POD_UID
//	k8s.node.name       string  K8S_NODE_NAME
//	k8s.container.name  string  K8S_CONTAINER_NAME
//	k8s.job.name        string  K8S_JOB_NAME
//
// # Type maps
//
// [TypeOf] covers the union of the Slurm map (the 23 [InheritedKeys]: the
// four [SlurmIntegerKeys] are int, the rest string), the DL/GPU integer map
// ([IntegerKeys]) and the DL/GPU string map ([StringKeys]). Port decision:
// the GPU string fields (nv.gpu.uuid, …) are in [StringKeys] because the
// reference registers a GPU type map; stringifying them is the identity for
// string values (docs/compatibility.md#divergence-gpu-string-fields).
//
// Legacy names of older releases (dl.rank, dl.world_size and the span-level
// dl.*) are provided for migration only; nothing in lens-go emits them.
package lensconv
