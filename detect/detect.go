package detect

import (
	"context"

	"github.com/nemolens/lens-go/attr"
)

// All is the reference's detect_resource(): [Local], then [Slurm], then
// [Kubernetes], each later layer overwriting equal keys. The result always
// contains host.name. Detection reads the environment, the host name, the
// process id, the GPU probe and the existence of the Kubernetes secrets
// path — all injectable through opts — and never touches the network. With
// [WithExplanation], every key's origin is recorded, layer by layer.
//
// ctx bounds the GPU probe (nvidia-smi); when ctx is done the probe is not
// run and host.gpu.count is omitted unless CUDA_VISIBLE_DEVICES gives it.
func All(ctx context.Context, opts ...Option) *attr.Map {
	c := newConfig(opts)
	// 3 local keys, up to 23 Slurm keys and 6 Kubernetes keys.
	m := attr.WithCapacity(32)
	localInto(ctx, &c, m)
	slurmInto(&c, m)
	kubernetesInto(&c, m)
	return m
}
