package main

import (
	"context"

	"github.com/nemolens/lens-go/e2e/internal/slurm"
	"github.com/nemolens/lens-go/resources"
)

type detected struct {
	slurm, detect []slurm.Attr
	jobUUID       string
	runUUID       string
	runUUIDOK     bool
}

// detect is the ONLY place that calls lens-go: the live process (zero
// Options: os environment, os.Hostname, os.Getpid; nil carrier.Env: the
// live environment). Adapt here if the library API changes.
func detect(ctx context.Context) detected {
	var d detected
	d.slurm = slurm.EncodeAttrs(resources.DetectSlurm(resources.Options{}))
	d.detect = slurm.EncodeAttrs(resources.Detect(ctx, resources.Options{}))
	d.jobUUID = resources.DeriveJobUUID(nil)
	d.runUUID, d.runUUIDOK = resources.DeriveRunUUID(nil, "")
	return d
}

// encode turns an attribute map into ordered, typed JSON entries: int64 and
// float64 values become JSON numbers, so the test can tell an integer from a
// string that looks like one.
