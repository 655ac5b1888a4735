package lensconv

// Version is the OpenTelemetry semantic-conventions version the attribute
// names follow (the reference's SEMCONV_VERSION). The resources built by
// lens-go are nevertheless schemaless (docs/resource.md#sdk-schema-url).
const Version = "1.29.0"

// Service and deployment attributes (docs/resource.md#lens-base-map).
const (
	// ServiceName is the configured service name (string).
	ServiceName = "service.name"
	// ServiceVersion is the library's own version (string).
	ServiceVersion = "service.version"
	// ServiceInstanceID is "{run_id}-rank{rank}" when derived (string).
	ServiceInstanceID = "service.instance.id"
	// DeploymentEnvironment comes from DEPLOYMENT_ENV, else ENVIRONMENT (string).
	DeploymentEnvironment = "deployment.environment"
)

// Attributes the OpenTelemetry SDK adds itself, layer 1 of the resource
// (docs/resource.md#resource-precedence).
const (
	// TelemetrySDKLanguage is the SDK's language (string).
	TelemetrySDKLanguage = "telemetry.sdk.language"
	// TelemetrySDKName is the SDK's name (string).
	TelemetrySDKName = "telemetry.sdk.name"
	// TelemetrySDKVersion is the SDK's version (string).
	TelemetrySDKVersion = "telemetry.sdk.version"
)

// Local attributes, produced by detect_local. They always describe the live
// process (docs/detection.md#detect-local).
const (
	// HostName is the OS host name (string).
	HostName = "host.name"
	// ProcessPID is the current process id (int).
	ProcessPID = "process.pid"
	// HostGPUCount is the number of visible GPUs (int).
	HostGPUCount = "host.gpu.count"
)

// NeMo and Weights & Biases attributes (docs/resource.md#lens-base-map).
const (
	// NemoRunID is the configured run id (string).
	NemoRunID = "nemo.run.id"
	// NemoUserID is the configured user (string).
	NemoUserID = "nemo.user.id"
	// NemoSpanTruncated is a span attribute marking a truncated span (bool).
	NemoSpanTruncated = "nemo.span.truncated"
	// WandbEntity is the W&B entity (string).
	WandbEntity = "wandb.entity"
	// WandbProject is the W&B project (string).
	WandbProject = "wandb.project"
)

// Slurm attributes: the 21 live keys, in emission order
// (docs/detection.md#slurm-local-derivation).
const (
	// SlurmJobID is "{SLURM_ARRAY_JOB_ID}_{SLURM_ARRAY_TASK_ID}" in array
	// mode, else SLURM_JOB_ID (string).
	SlurmJobID = "slurm.job.id"
	// SlurmJobIDRaw is SLURM_JOB_ID verbatim (string).
	SlurmJobIDRaw = "slurm.job.id.raw"
	// SlurmArrayJobID is SLURM_ARRAY_JOB_ID, else SLURM_JOB_ID (string).
	SlurmArrayJobID = "slurm.array.job_id"
	// SlurmArrayTaskID is SLURM_ARRAY_TASK_ID, default "0" (string).
	SlurmArrayTaskID = "slurm.array.task_id"
	// SlurmArrayCount is SLURM_ARRAY_TASK_COUNT, default 1 (int).
	SlurmArrayCount = "slurm.array.count"
	// SlurmSLUID is LENS_SLURM_SLUID or NV_LAUNCH_SLUID (string).
	SlurmSLUID = "slurm.sluid"
	// SlurmArraySLUID is LENS_SLURM_ARRAY_SLUID or NV_LAUNCH_ARRAY_SLUID (string).
	SlurmArraySLUID = "slurm.array.sluid"
	// SlurmJobName is SLURM_JOB_NAME (string).
	SlurmJobName = "slurm.job.name"
	// SlurmClusterName is SLURM_CLUSTER_NAME (string).
	SlurmClusterName = "slurm.cluster.name"
	// SlurmPartition is SLURM_JOB_PARTITION, else SLURM_PARTITION (string).
	SlurmPartition = "slurm.partition"
	// SlurmNNodes is SLURM_JOB_NUM_NODES, else SLURM_NNODES (int).
	SlurmNNodes = "slurm.nnodes"
	// SlurmNTasks is SLURM_NTASKS (int).
	SlurmNTasks = "slurm.ntasks"
	// SlurmRestartCount is SLURM_RESTART_COUNT, default 0 (int).
	SlurmRestartCount = "slurm.restart_count"
	// SlurmJobUser is SLURM_JOB_USER (string).
	SlurmJobUser = "slurm.job.user"
	// SlurmJobAccount is SLURM_JOB_ACCOUNT (string).
	SlurmJobAccount = "slurm.job.account"
	// SlurmJobQOS is SLURM_JOB_QOS (string).
	SlurmJobQOS = "slurm.job.qos"
	// SlurmJobReservation is SLURM_JOB_RESERVATION (string).
	SlurmJobReservation = "slurm.job.reservation"
	// SlurmSegment is SLURM_SEGMENT (string).
	SlurmSegment = "slurm.segment"
	// SlurmTopologyAddr is SLURM_TOPOLOGY_ADDR (string).
	SlurmTopologyAddr = "slurm.topology.addr"
	// SlurmTopologyAddrPattern is SLURM_TOPOLOGY_ADDR_PATTERN (string).
	SlurmTopologyAddrPattern = "slurm.topology.addr_pattern"
	// SlurmHeadNodeName is SLURMD_NODENAME outside a step (string).
	SlurmHeadNodeName = "slurm.head_node.name"
)

// Retired Slurm keys: never read, never emitted
// (docs/detection.md#slurm-retired-keys).
const (
	// SlurmNodelist is retired (it was SLURM_NODELIST in v0.1.0).
	SlurmNodelist = "slurm.nodelist"
	// SlurmCluster is retired; use [SlurmClusterName].
	SlurmCluster = "slurm.cluster"
	// SlurmTorchelasticRestartCount is retired; torchelastic restarts feed
	// [NVDLRunUUID].
	SlurmTorchelasticRestartCount = "slurm.torchelastic.restart_count"
)

// Deep-learning participant attributes; the typed ones are listed in
// docs/detection.md#type-reconstruction-keys.
const (
	// NVDLRank is the global rank (int).
	NVDLRank = "nv.dl.rank"
	// NVDLWorldSize is the world size (int).
	NVDLWorldSize = "nv.dl.world_size"
	// NVDLLocalRank is the node-local rank (int).
	NVDLLocalRank = "nv.dl.local_rank"
	// NVDLRole is the participant's role: trainer, ckpt_worker, launcher,
	// generator, … (string).
	NVDLRole = "nv.dl.role"
	// NVDLProviderName is the framework: mcore, vllm, sglang, … (string).
	NVDLProviderName = "nv.dl.provider.name"
	// NVDLTopologySizeTP is the tensor-parallel size (int).
	NVDLTopologySizeTP = "nv.dl.topology.size.tp"
	// NVDLTopologySizePP is the pipeline-parallel size (int).
	NVDLTopologySizePP = "nv.dl.topology.size.pp"
	// NVDLTopologySizeDP is the data-parallel size (int).
	NVDLTopologySizeDP = "nv.dl.topology.size.dp"
	// NVDLTrainingConfigGlobalBatchSize is the global batch size (int).
	NVDLTrainingConfigGlobalBatchSize = "nv.dl.training.config.global_batch_size"
	// NVDLTrainingConfigMicroBatchSize is the micro batch size (int).
	NVDLTrainingConfigMicroBatchSize = "nv.dl.training.config.micro_batch_size"
	// NVDLTrainingConfigSequenceLength is the sequence length (int).
	NVDLTrainingConfigSequenceLength = "nv.dl.training.config.sequence_length"
	// NVDLTrainingConfigOptimizer is the optimizer name (string).
	NVDLTrainingConfigOptimizer = "nv.dl.training.config.optimizer"
	// NVDLTrainingConfigRecomputeGranularity is the activation-recompute
	// granularity (string).
	NVDLTrainingConfigRecomputeGranularity = "nv.dl.training.config.recompute_granularity"
	// NVDLTrainingTargetTrainIters is the target iteration count (int).
	NVDLTrainingTargetTrainIters = "nv.dl.training.target.train_iters"
	// NVDLTrainingTargetTrainSamples is the target sample count (int).
	NVDLTrainingTargetTrainSamples = "nv.dl.training.target.train_samples"
	// NVDLTrainingTargetTrainTokens is the target token count (int).
	NVDLTrainingTargetTrainTokens = "nv.dl.training.target.train_tokens"
	// NVDLLaunchContainerImage is the container image of the task (string).
	NVDLLaunchContainerImage = "nv.dl.launch.container.image"
	// NVDLJobUUID is the job identity, stable across restarts (string, UUIDv5).
	NVDLJobUUID = "nv.dl.job.uuid"
	// NVDLRunUUID is the run identity, new per attempt (string, UUIDv5).
	NVDLRunUUID = "nv.dl.run.uuid"
	// NVDLSoftwareTorch is the PyTorch version (string).
	NVDLSoftwareTorch = "nv.dl.software.torch"
	// NVDLSoftwareCUDA is the CUDA version (string).
	NVDLSoftwareCUDA = "nv.dl.software.cuda"
	// NVDLSoftwareNCCL is the NCCL version (string).
	NVDLSoftwareNCCL = "nv.dl.software.nccl"
	// NVDLSoftwareTransformerEngine is the Transformer Engine version (string).
	NVDLSoftwareTransformerEngine = "nv.dl.software.transformer_engine"
)

// Per-worker GPU identity, the keys of detect_gpu
// (docs/detection.md#detect-gpu).
const (
	// NVGPUIndex is the physical (NVML) device index (int).
	NVGPUIndex = "nv.gpu.index"
	// NVGPUModel is the device name, e.g. "NVIDIA H100" (string).
	NVGPUModel = "nv.gpu.model"
	// NVGPUUUID is the device UUID, e.g. "GPU-…" (string).
	NVGPUUUID = "nv.gpu.uuid"
	// NVGPUSerial is the board serial number (string).
	NVGPUSerial = "nv.gpu.serial"
	// NVGPUPCIBusID is the PCI bus id, e.g. "00000000:81:00.0" (string).
	NVGPUPCIBusID = "nv.gpu.pci_bus_id"
	// NVGPUComputeCapability is "major.minor", e.g. "9.0" (string).
	NVGPUComputeCapability = "nv.gpu.compute_capability"
	// NVGPUMemoryTotal is the total device memory in bytes (int).
	NVGPUMemoryTotal = "nv.gpu.memory_total"
	// NVGPUDriverVersion is the driver version, e.g. "550.54.15" (string).
	NVGPUDriverVersion = "nv.gpu.driver_version"
)

// The GPUs a process may use, lens-go's extension of the GPU identity
// (docs/detection.md#gpu-devices): each value is a comma-separated list with
// one item per device, in the order CUDA numbers the devices for the process
// (item i is cuda:i). With one GPU per rank, each value is exactly the label
// value of the DCGM exporter's series for that GPU (docs/backends.md#gpu-join).
const (
	// NVGPUVisibleUUID lists the devices' UUIDs, "GPU-…" (string; DCGM's
	// UUID label). A MIG instance is listed by its parent GPU's UUID.
	NVGPUVisibleUUID = "nv.gpu.visible.uuid"
	// NVGPUVisibleIndex lists the devices' node-level NVML indices, "0,3"
	// (string; DCGM's gpu label). Omitted when an index is unknown (a
	// container given GPUs by UUID).
	NVGPUVisibleIndex = "nv.gpu.visible.index"
	// NVGPUVisiblePCIBusID lists the devices' PCI bus ids in NVML's form,
	// "00000000:81:00.0" (string; DCGM's pci_bus_id label).
	NVGPUVisiblePCIBusID = "nv.gpu.visible.pci_bus_id"
	// NVGPUVisibleModel lists the devices' model names (string; DCGM's
	// modelName label).
	NVGPUVisibleModel = "nv.gpu.visible.model"
	// NVGPUVisibleDevice lists the devices' character devices, "nvidia3"
	// for /dev/nvidia3 (string; DCGM's device label). Omitted when a minor
	// number is unknown.
	NVGPUVisibleDevice = "nv.gpu.visible.device"
	// NVGPUVisibleMIG lists the MIG instances' ids, "MIG-…", with an empty
	// item for a whole GPU (string). Present only when a MIG instance is
	// visible.
	NVGPUVisibleMIG = "nv.gpu.visible.mig_uuid"
)

// Per-GPU keys lens-go adds beside the reference's nv.gpu.* keys for one
// device, as on an info series with one point per GPU
// (docs/detection.md#gpu-devices).
const (
	// NVGPUOrdinal is the device's CUDA ordinal in the process: 0 for cuda:0
	// (int).
	NVGPUOrdinal = "nv.gpu.ordinal"
	// NVGPUDevice is the device's character device, "nvidia3" (string;
	// DCGM's device label).
	NVGPUDevice = "nv.gpu.device"
	// NVGPUMIGUUID is the MIG instance's id, "MIG-…" (string).
	NVGPUMIGUUID = "nv.gpu.mig_uuid"
)

// Hardware attributes of the OpenTelemetry semantic conventions
// (hardware/gpu, development status), for one GPU
// (docs/detection.md#gpu-devices).
const (
	// HWID identifies the component within the host: the GPU's UUID (string).
	HWID = "hw.id"
	// HWType is the component type: "gpu" (string).
	HWType = "hw.type"
	// HWVendor is the vendor name: "NVIDIA" (string).
	HWVendor = "hw.vendor"
	// HWModel is the model name (string).
	HWModel = "hw.model"
	// HWName is an easily recognisable name: the character device,
	// "nvidia3" (string).
	HWName = "hw.name"
)

// Kubernetes attributes, upstream semantic-convention names
// (docs/detection.md#detect-kubernetes).
const (
	// K8sNamespaceName is K8S_NAMESPACE (string).
	K8sNamespaceName = "k8s.namespace.name"
	// K8sPodName is K8S_POD_NAME, else HOSTNAME (string).
	K8sPodName = "k8s.pod.name"
	// K8sPodUID is K8S_POD_UID (string).
	K8sPodUID = "k8s.pod.uid"
	// K8sNodeName is K8S_NODE_NAME (string).
	K8sNodeName = "k8s.node.name"
	// K8sContainerName is K8S_CONTAINER_NAME (string).
	K8sContainerName = "k8s.container.name"
	// K8sJobName is K8S_JOB_NAME (string).
	K8sJobName = "k8s.job.name"
)

// Legacy attributes of older NeMo Lens releases (v0.1.0, v0.2.0): dl.rank
// and dl.world_size were resource attributes, the rest are span-level. They
// are not resource attributes of the current generation and nothing in
// lens-go emits them; the names are kept so that code migrating from those
// releases can refer to them.
const (
	// DLRank is the v0.1.0 resource attribute that nv.dl.rank replaced (int).
	DLRank = "dl.rank"
	// DLWorldSize is the v0.1.0 resource attribute that nv.dl.world_size replaced (int).
	DLWorldSize = "dl.world_size"
	// DLTensorParallelRank is the tensor-parallel rank (int).
	DLTensorParallelRank = "dl.tensor_parallel.rank"
	// DLTensorParallelSize is the tensor-parallel size (int).
	DLTensorParallelSize = "dl.tensor_parallel.size"
	// DLPipelineParallelRank is the pipeline-parallel rank (int).
	DLPipelineParallelRank = "dl.pipeline_parallel.rank"
	// DLPipelineParallelSize is the pipeline-parallel size (int).
	DLPipelineParallelSize = "dl.pipeline_parallel.size"
	// DLDataParallelRank is the data-parallel rank (int).
	DLDataParallelRank = "dl.data_parallel.rank"
	// DLDataParallelSize is the data-parallel size (int).
	DLDataParallelSize = "dl.data_parallel.size"
	// DLIteration is the training iteration (int).
	DLIteration = "dl.iteration"
	// DLMicrobatchID is the micro-batch id (int).
	DLMicrobatchID = "dl.microbatch_id"
	// DLBatchSize is the batch size (int).
	DLBatchSize = "dl.batch_size"
	// DLSequenceLength is the sequence length (int).
	DLSequenceLength = "dl.sequence_length"
	// DLLoss is the loss (float).
	DLLoss = "dl.loss"
	// DLGradNorm is the gradient norm (float).
	DLGradNorm = "dl.grad_norm"
	// DLLearningRate is the learning rate (float).
	DLLearningRate = "dl.learning_rate"
	// DLThroughputTFLOPS is the throughput in TFLOP/s (float).
	DLThroughputTFLOPS = "dl.throughput_tflops"
	// DLThroughputTokensPerSec is the throughput in tokens per second (float).
	DLThroughputTokensPerSec = "dl.throughput_tokens_per_sec"
)
