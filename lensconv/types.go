package lensconv

import "strconv"

// Type is the value type a key is registered with in the type maps.
type Type uint8

// The registered value types. The zero Type is not a valid type.
const (
	// TypeString marks a string-valued key.
	TypeString Type = iota + 1
	// TypeInt marks an integer-valued (int64) key.
	TypeInt
)

// String returns "string", "int" or "Type(n)".
func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeInt:
		return "int"
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// The key lists are unexported arrays: the accessors return fresh slices so
// that no caller can modify the package's state.
var (
	slurmKeys = [...]string{
		SlurmJobID, SlurmJobIDRaw, SlurmArrayJobID, SlurmArrayTaskID,
		SlurmArrayCount, SlurmSLUID, SlurmArraySLUID, SlurmJobName,
		SlurmClusterName, SlurmPartition, SlurmNNodes, SlurmNTasks,
		SlurmRestartCount, SlurmJobUser, SlurmJobAccount, SlurmJobQOS,
		SlurmJobReservation, SlurmSegment, SlurmTopologyAddr,
		SlurmTopologyAddrPattern, SlurmHeadNodeName,
	}
	slurmIntegerKeys = [...]string{SlurmArrayCount, SlurmNNodes, SlurmNTasks, SlurmRestartCount}
	retiredSlurmKeys = [...]string{SlurmNodelist, SlurmCluster, SlurmTorchelasticRestartCount}
	integerKeys      = [...]string{
		NVDLRank, NVDLWorldSize, NVDLLocalRank,
		NVDLTopologySizeTP, NVDLTopologySizePP, NVDLTopologySizeDP,
		NVDLTrainingConfigGlobalBatchSize, NVDLTrainingConfigMicroBatchSize,
		NVDLTrainingConfigSequenceLength,
		NVDLTrainingTargetTrainIters, NVDLTrainingTargetTrainSamples,
		NVDLTrainingTargetTrainTokens,
		NVGPUIndex, NVGPUMemoryTotal,
	}
	stringKeys = [...]string{
		NVDLRole, NVDLProviderName,
		NVDLTrainingConfigOptimizer, NVDLTrainingConfigRecomputeGranularity,
		NVDLSoftwareTorch, NVDLSoftwareCUDA, NVDLSoftwareNCCL, NVDLSoftwareTransformerEngine,
		NVGPUUUID, NVGPUPCIBusID, NVGPUSerial, NVGPUModel,
		NVGPUComputeCapability, NVGPUDriverVersion,
	}
	localKeys      = [...]string{HostName, ProcessPID, HostGPUCount}
	kubernetesKeys = [...]string{
		K8sNamespaceName, K8sPodName, K8sPodUID, K8sNodeName, K8sContainerName, K8sJobName,
	}
)

// SlurmKeys returns the 21 live slurm.* keys in detect_slurm's emission
// order (docs/detection.md#slurm-result-order): job.id, job.id.raw,
// array.job_id, array.task_id, array.count, sluid, array.sluid, job.name,
// cluster.name, partition, nnodes, ntasks, restart_count, job.user,
// job.account, job.qos, job.reservation, segment, topology.addr,
// topology.addr_pattern, head_node.name.
func SlurmKeys() []string { s := slurmKeys; return s[:] }

// SlurmIntegerKeys returns the four integer-typed Slurm keys
// (slurm.array.count, slurm.nnodes, slurm.ntasks, slurm.restart_count), in
// emission order. Their values follow the strict integer rule, for carrier
// and local values alike (docs/compatibility.md#integer-rule).
func SlurmIntegerKeys() []string { s := slurmIntegerKeys; return s[:] }

// InheritedKeys returns the 23-key allowlist of carrier keys that
// detect_slurm reads (docs/detection.md#slurm-inherited-keys): the 21
// [SlurmKeys] followed by nv.dl.job.uuid and nv.dl.run.uuid. These are the
// launcher-authoritative keys: a valid carrier value beats both the local
// value and the caller (docs/resource.md#launcher-authoritative-keys).
func InheritedKeys() []string {
	out := make([]string, 0, len(slurmKeys)+2)
	out = append(out, slurmKeys[:]...)
	return append(out, NVDLJobUUID, NVDLRunUUID)
}

// RetiredSlurmKeys returns the retired Slurm keys (slurm.nodelist,
// slurm.cluster, slurm.torchelastic.restart_count): never read, never
// emitted.
func RetiredSlurmKeys() []string { s := retiredSlurmKeys; return s[:] }

// IntegerKeys returns the DL and GPU integer fields that type
// reconstruction converts (docs/detection.md#type-reconstruction-keys):
// nv.dl.rank, nv.dl.world_size, nv.dl.local_rank,
// nv.dl.topology.size.{tp,pp,dp},
// nv.dl.training.config.{global_batch_size,micro_batch_size,sequence_length},
// nv.dl.training.target.{train_iters,train_samples,train_tokens},
// nv.gpu.index and nv.gpu.memory_total. The Slurm integers are not included
// (see [SlurmIntegerKeys]).
func IntegerKeys() []string { s := integerKeys; return s[:] }

// StringKeys returns the DL and GPU string fields of the type maps
// (docs/detection.md#type-reconstruction-keys): nv.dl.role,
// nv.dl.provider.name, nv.dl.training.config.{optimizer,recompute_granularity},
// nv.dl.software.{torch,cuda,nccl,transformer_engine}, and nv.gpu.uuid,
// pci_bus_id, serial, model, compute_capability, driver_version. The Slurm
// strings and both UUIDs are not included (see [InheritedKeys]).
func StringKeys() []string { s := stringKeys; return s[:] }

// LocalKeys returns the keys detect_local produces (host.name, process.pid,
// host.gpu.count). They always describe the live process, so processes that
// publish a carrier for their children strip them first.
func LocalKeys() []string { s := localKeys; return s[:] }

// KubernetesKeys returns the keys detect_kubernetes may produce, in its
// order.
func KubernetesKeys() []string { s := kubernetesKeys; return s[:] }

// IsSlurmKey reports whether key is one of the 21 live [SlurmKeys].
func IsSlurmKey(key string) bool {
	switch key {
	case SlurmJobID, SlurmJobIDRaw, SlurmArrayJobID, SlurmArrayTaskID,
		SlurmArrayCount, SlurmSLUID, SlurmArraySLUID, SlurmJobName,
		SlurmClusterName, SlurmPartition, SlurmNNodes, SlurmNTasks,
		SlurmRestartCount, SlurmJobUser, SlurmJobAccount, SlurmJobQOS,
		SlurmJobReservation, SlurmSegment, SlurmTopologyAddr,
		SlurmTopologyAddrPattern, SlurmHeadNodeName:
		return true
	}
	return false
}

// IsSlurmIntegerKey reports whether key is one of the four [SlurmIntegerKeys].
func IsSlurmIntegerKey(key string) bool {
	switch key {
	case SlurmArrayCount, SlurmNNodes, SlurmNTasks, SlurmRestartCount:
		return true
	}
	return false
}

// IsInheritedKey reports whether key is on the 23-key allowlist
// ([InheritedKeys]).
func IsInheritedKey(key string) bool {
	return key == NVDLJobUUID || key == NVDLRunUUID || IsSlurmKey(key)
}

// IsRetiredSlurmKey reports whether key is one of the [RetiredSlurmKeys].
func IsRetiredSlurmKey(key string) bool {
	switch key {
	case SlurmNodelist, SlurmCluster, SlurmTorchelasticRestartCount:
		return true
	}
	return false
}

// IsIntegerKey reports whether key is one of the DL/GPU [IntegerKeys].
func IsIntegerKey(key string) bool {
	switch key {
	case NVDLRank, NVDLWorldSize, NVDLLocalRank,
		NVDLTopologySizeTP, NVDLTopologySizePP, NVDLTopologySizeDP,
		NVDLTrainingConfigGlobalBatchSize, NVDLTrainingConfigMicroBatchSize,
		NVDLTrainingConfigSequenceLength,
		NVDLTrainingTargetTrainIters, NVDLTrainingTargetTrainSamples,
		NVDLTrainingTargetTrainTokens,
		NVGPUIndex, NVGPUMemoryTotal:
		return true
	}
	return false
}

// IsStringKey reports whether key is one of the DL/GPU [StringKeys].
func IsStringKey(key string) bool {
	switch key {
	case NVDLRole, NVDLProviderName,
		NVDLTrainingConfigOptimizer, NVDLTrainingConfigRecomputeGranularity,
		NVDLSoftwareTorch, NVDLSoftwareCUDA, NVDLSoftwareNCCL, NVDLSoftwareTransformerEngine,
		NVGPUUUID, NVGPUPCIBusID, NVGPUSerial, NVGPUModel,
		NVGPUComputeCapability, NVGPUDriverVersion:
		return true
	}
	return false
}

// IsLocalKey reports whether key is one of the [LocalKeys].
func IsLocalKey(key string) bool {
	return key == HostName || key == ProcessPID || key == HostGPUCount
}

// TypeOf returns the registered type of key in the union of the Slurm, DL
// and GPU type maps (the 23 [InheritedKeys], [IntegerKeys] and
// [StringKeys]); ok is false for any other key, whose type is never
// inferred.
func TypeOf(key string) (t Type, ok bool) {
	switch {
	case IsSlurmIntegerKey(key), IsIntegerKey(key):
		return TypeInt, true
	case IsInheritedKey(key), IsStringKey(key):
		return TypeString, true
	}
	return 0, false
}
