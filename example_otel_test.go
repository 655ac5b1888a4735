package lens_test

// This file imports the OpenTelemetry SDK's resource package and its
// semantic conventions beside the lens-go packages, with no import alias:
// the lens-go package names (lens, detect, lensconv, carrier, environ, attr)
// are chosen not to collide with OpenTelemetry's (resource, semconv,
// attribute, propagation).

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/lensconv"
)

// ExampleDetector gives an OpenTelemetry setup of your own the resource
// lens.Setup would export: every layer, typed integers, the rank-derived
// service.instance.id.
func ExampleDetector() {
	env := environ.Map{
		"SLURM_JOB_ID":             "12345",
		"SLURM_CLUSTER_NAME":       "eos",
		"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=3,nv.dl.world_size=8",
	}
	res, err := resource.New(context.Background(),
		resource.WithAttributes(semconv.ServiceNamespace("training")),
		// Last, so that the Lens values win on every key they share.
		resource.WithDetectors(lens.Detector(lens.Config{},
			lens.WithEnv(env), lens.WithDetectOptions(exampleHost...))),
	)
	if err != nil {
		panic(err)
	}
	for _, key := range []attribute.Key{
		semconv.ServiceNamespaceKey, semconv.ServiceInstanceIDKey,
		lensconv.NVDLRank, lensconv.NemoRunID, lensconv.SlurmClusterName,
	} {
		v, _ := res.Set().Value(key)
		fmt.Printf("%s = %s (%s)\n", key, v.String(), v.Type())
	}
	// Output:
	// service.namespace = training (STRING)
	// service.instance.id = 12345-rank3 (STRING)
	// nv.dl.rank = 3 (INT64)
	// nemo.run.id = 12345 (STRING)
	// slurm.cluster.name = eos (STRING)
}

// Example_detectionBesideTheSDK uses lens-go's detection alone, beside the SDK's own
// detectors.
func Example_detectionBesideTheSDK() {
	res, err := resource.New(context.Background(),
		resource.WithTelemetrySDK(),
		resource.WithDetectors(detect.SlurmDetector(detect.WithEnv(environ.Map{"SLURM_JOB_ID": "7", "SLURM_NTASKS": "16"}))),
	)
	if err != nil {
		panic(err)
	}
	v, _ := res.Set().Value(lensconv.SlurmNTasks)
	fmt.Println(lensconv.SlurmNTasks, v.AsInt64(), res.SchemaURL() == semconv.SchemaURL)
	// Output:
	// slurm.ntasks 16 true
}
