package main

import (
	"context"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/e2e/internal/slurm"
)

type detected struct {
	slurm, detect []slurm.Attr
	jobUUID       string
	runUUID       string
	runUUIDOK     bool
}

// detectAll is the ONLY place that calls lens-go: the live process (no
// options: os environment, os.Hostname, os.Getpid; nil environ.Lookuper:
// the live environment). Adapt here if the library API changes.
func detectAll(ctx context.Context) detected {
	var d detected
	d.slurm = slurm.EncodeAttrs(detect.Slurm(ctx))
	d.detect = slurm.EncodeAttrs(detect.All(ctx))
	d.jobUUID = detect.JobUUID(nil)
	d.runUUID, d.runUUIDOK = detect.RunUUID(nil, "")
	return d
}

// encode turns an attribute map into ordered, typed JSON entries: int64 and
// float64 values become JSON numbers, so the test can tell an integer from a
// string that looks like one.
