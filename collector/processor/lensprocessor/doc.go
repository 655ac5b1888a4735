// Package lensprocessor is the OpenTelemetry Collector processor of type
// "lens": it gives the telemetry of a node's processes — processes lens
// never touched, with a plain OpenTelemetry SDK — the job attributes that
// lens's own detection gives a process in the same environment
// (lens.JobAttributes: slurm.*, nv.dl.job.uuid, nemo.run.id, k8s.* and,
// with rank_from, nv.dl.rank, nv.dl.world_size, nv.dl.local_rank).
//
// For each resource with process.pid, and with host.name absent or naming
// this node, it reads /proc/<pid>/environ — walking up the parent chain to
// the first process that a scheduler, a launcher or a pod started
// (detect.InJob) — and sets every job attribute the resource does not
// already have: it never overwrites. Slurm's cgroup (/proc/<pid>/cgroup:
// job_<id> or a SLUID directory, step_<id>, task_<n>) cross-checks the
// environment and is the fallback when the environment cannot be read
// (no root, no CAP_SYS_PTRACE), said once in the Collector's log.
//
// Results are cached per process, keyed by pid and start time (field 22 of
// /proc/<pid>/stat), so a reused pid never inherits another job; the cache
// is a bounded LRU (cache_size). A process not in the cache is read in the
// background; a batch waits for it at most resolve_timeout, and reads are
// bounded (max_environ_bytes, O_NONBLOCK, regular files only).
//
// For metrics with the DCGM exporter's GPU labels (UUID, gpu, pci_bus_id,
// device, GPU_I_ID) it finds the job holding each GPU from the processes'
// GPU allocation (SLURM_STEP_GPUS, SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES,
// NVIDIA_VISIBLE_DEVICES mapped through the NVIDIA driver's procfs tree by
// detect.VisibleGPUs) and emits one point of the info series lens.gpu.job
// per GPU (value 1; labels UUID, gpu, Hostname and the job's), for PromQL's
// "* on(UUID) group_left(...)"; the job's labels on every GPU point are an
// option (labels_on_points), because they multiply series.
//
// README.md states the configuration; docs/collector.md in the repository
// is the guide.
package lensprocessor
