package detect

import (
	"context"

	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/attr"
)

// detector adapts a detection function to resource.Detector.
type detector func(ctx context.Context) *attr.Map

// Detect implements resource.Detector. The resource is schemaless
// (docs/resource.md#sdk-schema-url), so merging it with the SDK's detectors
// never raises resource.ErrSchemaURLConflict; integer keys are int64
// attributes. An
// absent platform gives an empty resource and a nil error. A done ctx gives
// a nil resource and ctx's error, as the SDK's detectors do.
func (d detector) Detect(ctx context.Context) (*resource.Resource, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m := d(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return m.Resource(), nil
}

// LocalDetector returns a resource.Detector for [Local], for use with
// resource.New(ctx, resource.WithDetectors(...)).
func LocalDetector(opts ...Option) resource.Detector {
	return detector(func(ctx context.Context) *attr.Map { return Local(ctx, opts...) })
}

// SlurmDetector returns a resource.Detector for [Slurm]; it yields an empty
// resource outside Slurm.
func SlurmDetector(opts ...Option) resource.Detector {
	return detector(func(ctx context.Context) *attr.Map { return Slurm(ctx, opts...) })
}

// KubernetesDetector returns a resource.Detector for [Kubernetes]; it yields
// an empty resource outside Kubernetes.
func KubernetesDetector(opts ...Option) resource.Detector {
	return detector(func(ctx context.Context) *attr.Map { return Kubernetes(ctx, opts...) })
}

// Detector returns a resource.Detector for [All] (local, then Slurm, then
// Kubernetes). It is detection only: the whole resource lens.Setup exports
// (service.*, nemo.run.id, type reconstruction, service.instance.id) comes
// from lens.Detector.
func Detector(opts ...Option) resource.Detector {
	return detector(func(ctx context.Context) *attr.Map { return All(ctx, opts...) })
}
