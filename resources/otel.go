package resources

import (
	"context"

	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/attr"
)

// detector adapts a detection function to resource.Detector.
type detector func(ctx context.Context) *attr.Map

// Detect implements resource.Detector. The resource is schemaless
// (SPEC §11.4), so merging it with the SDK's detectors never raises
// resource.ErrSchemaURLConflict; integer keys are int64 attributes. An
// absent platform gives an empty resource and a nil error.
func (d detector) Detect(ctx context.Context) (*resource.Resource, error) {
	return d(ctx).Resource(), nil
}

// LocalDetector returns a resource.Detector for [DetectLocal], for use with
// resource.New(ctx, resource.WithDetectors(...)).
func LocalDetector(opts Options) resource.Detector {
	return detector(func(ctx context.Context) *attr.Map { return DetectLocal(ctx, opts) })
}

// SlurmDetector returns a resource.Detector for [DetectSlurm]; it yields an
// empty resource outside Slurm.
func SlurmDetector(opts Options) resource.Detector {
	return detector(func(context.Context) *attr.Map { return DetectSlurm(opts) })
}

// KubernetesDetector returns a resource.Detector for [DetectKubernetes]; it
// yields an empty resource outside Kubernetes.
func KubernetesDetector(opts Options) resource.Detector {
	return detector(func(context.Context) *attr.Map { return DetectKubernetes(opts) })
}

// Detector returns a resource.Detector for the merged [Detect] (local, then
// Slurm, then Kubernetes).
func Detector(opts Options) resource.Detector {
	return detector(func(ctx context.Context) *attr.Map { return Detect(ctx, opts) })
}
