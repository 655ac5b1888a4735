package resources

import (
	"context"

	"github.com/nemolens/lens-go/attr"
)

// Detect is the reference's detect_resource() (SPEC §1.6): [DetectLocal],
// then [DetectSlurm], then [DetectKubernetes], each later layer overwriting
// equal keys. The result always contains host.name. Detection reads the
// environment, the host name, the process id, the GPU probe and the
// existence of the Kubernetes secrets path — all injectable through opts —
// and never touches the network. With [Options.Explain] set, every key's
// origin is recorded, layer by layer.
func Detect(ctx context.Context, opts Options) *attr.Map {
	// 3 local keys, up to 23 Slurm keys and 6 Kubernetes keys.
	m := attr.WithCapacity(32)
	detectLocalInto(ctx, &opts, m)
	detectSlurmInto(&opts, m)
	detectKubernetesInto(&opts, m)
	return m
}
