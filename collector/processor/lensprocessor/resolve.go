package lensprocessor

import (
	"context"
	"errors"
	"io/fs"
	"strconv"
	"sync"

	"go.uber.org/zap"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/lensconv"
)

// maxWalk bounds the walk up the parent chain.
const maxWalk = 64

// Sources of a jobInfo.
const (
	sourceEnviron = "environ"
	sourceCgroup  = "cgroup"
)

// jobInfo is what the processor stamps on the resources of one process:
// the attributes, in order, and where they came from. An empty one is a
// process outside any job.
type jobInfo struct {
	attrs  []attr.Entry
	source string
	pid    int         // the process whose environment was read
	env    environ.Map // that environment (nil from the cgroup)
}

// resolver finds the job of a process from procfs.
type resolver struct {
	fs       procFS
	rankFrom string
	hostname string
	logger   *zap.Logger

	fallbackOnce sync.Once // the cgroup fallback is said once
	mismatchOnce sync.Once // an environ/cgroup disagreement is said once

	mu     sync.Mutex
	sluids map[string]string // SLUID → SLURM_JOB_ID, learned from readable environments
	maxIDs int
}

func newResolver(fsys procFS, rankFrom, hostname string, logger *zap.Logger, maxIDs int) *resolver {
	return &resolver{fs: fsys, rankFrom: rankFrom, hostname: hostname, logger: logger, sluids: map[string]string{}, maxIDs: maxIDs}
}

// resolve finds the job of pid: the first process of its parent chain,
// itself included, whose environment holds a scheduler's, a launcher's or a
// pod's variables (detect.InJob), described by lens.JobAttributes; Slurm's
// cgroup of pid cross-checks it, and is the fallback when no environment
// can be read or none is a job's.
func (r *resolver) resolve(ctx context.Context, pid int) *jobInfo {
	cg, _ := r.fs.cgroup(pid)
	var denied error
	cur := pid
	for range maxWalk {
		env, err := r.fs.environ(cur)
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				denied = err
			}
			break
		}
		if detect.InJob(env) {
			if info := r.fromEnviron(ctx, cur, env, cg); info != nil {
				return info
			}
			break
		}
		if cur == 1 {
			break
		}
		st, err := r.fs.stat(cur)
		if err != nil || st.ppid < 1 {
			break
		}
		cur = st.ppid
	}
	if !cg.found() {
		return &jobInfo{}
	}
	if denied != nil {
		r.fallbackOnce.Do(func() {
			r.logger.Warn("lens processor: cannot read a process's environment; using Slurm's cgroup (job, step, task) instead: "+
				"run the Collector as root or with CAP_SYS_PTRACE for the full job attributes",
				zap.Error(denied))
		})
	}
	return r.fromCgroup(cg)
}

// fromEnviron describes the job of env, the environment of pid; nil when
// Slurm's cgroup names another job (the cgroup is then used).
func (r *resolver) fromEnviron(ctx context.Context, pid int, env environ.Map, cg slurmCgroup) *jobInfo {
	jobID, _ := environ.NonEmpty(env, "SLURM_JOB_ID")
	switch {
	case cg.jobID != "" && jobID != "" && jobID != cg.jobID:
		r.mismatchOnce.Do(func() {
			r.logger.Warn("lens processor: a process's SLURM_JOB_ID is not the job of its cgroup; the cgroup's job is used",
				zap.Int("pid", pid), zap.String("SLURM_JOB_ID", jobID), zap.String("cgroup job", cg.jobID))
		})
		return nil
	case cg.sluid != "" && jobID != "":
		r.learn(cg.sluid, jobID)
	}
	m, warnings := lens.JobAttributes(ctx, env, r.rankFrom,
		detect.WithKubernetesSecretsPath(r.fs.path(pid, "root"+detect.DefaultKubernetesSecretsPath)))
	for _, w := range warnings {
		r.logger.Debug("lens processor: "+w, zap.Int("pid", pid))
	}
	if m.Len() == 0 {
		return &jobInfo{}
	}
	m.SetString(lensconv.HostName, r.hostname)
	return &jobInfo{attrs: m.Entries(), source: sourceEnviron, pid: pid, env: env}
}

// fromCgroup describes the job of Slurm's cgroup: slurm.job.id and
// slurm.job.id.raw (the cgroup holds the raw job id: an array task's
// slurm.job.id would be <array job>_<task>), nemo.run.id (lens's run id of a
// Slurm job is the raw SLURM_JOB_ID), slurm.sluid, and nv.dl.rank from
// task_<n> with rank_from slurm.
func (r *resolver) fromCgroup(cg slurmCgroup) *jobInfo {
	m := attr.WithCapacity(6)
	jobID := cg.jobID
	if jobID == "" {
		jobID = r.lookupSLUID(cg.sluid)
	}
	if jobID != "" {
		m.SetString(lensconv.SlurmJobID, jobID)
		m.SetString(lensconv.SlurmJobIDRaw, jobID)
		m.SetString(lensconv.NemoRunID, jobID)
	}
	if cg.sluid != "" {
		m.SetString(lensconv.SlurmSLUID, cg.sluid)
	}
	if r.rankFrom == detect.RankFromSlurm && cg.task != "" {
		if n, err := strconv.ParseInt(cg.task, 10, 64); err == nil {
			m.Set(lensconv.NVDLRank, attr.Int64(n))
		}
	}
	m.SetString(lensconv.HostName, r.hostname)
	return &jobInfo{attrs: m.Entries(), source: sourceCgroup}
}

func (r *resolver) learn(sluid, jobID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.sluids[sluid]; !ok && len(r.sluids) >= r.maxIDs {
		clear(r.sluids) // bounded: start over
	}
	r.sluids[sluid] = jobID
}

func (r *resolver) lookupSLUID(sluid string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sluids[sluid]
}
