package main

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/nemolens/lens-go/attr"
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
	d.slurm = encode(resources.DetectSlurm(resources.Options{}))
	d.detect = encode(resources.Detect(ctx, resources.Options{}))
	d.jobUUID = resources.DeriveJobUUID(nil)
	d.runUUID, d.runUUIDOK = resources.DeriveRunUUID(nil, "")
	return d
}

// encode turns an attribute map into ordered, typed JSON entries: int64 and
// float64 values become JSON numbers, so the test can tell an integer from a
// string that looks like one.
func encode(m *attr.Map) []slurm.Attr {
	out := []slurm.Attr{}
	if m == nil {
		return out
	}
	for k, v := range m.All() {
		var a slurm.Attr
		a.Key = k
		var raw []byte
		var err error
		switch v.Kind() {
		case attr.KindString:
			a.Kind = "string"
			raw, err = json.Marshal(v.AsString())
		case attr.KindBool:
			a.Kind = "bool"
			raw, err = json.Marshal(v.AsBool())
		case attr.KindInt64:
			a.Kind = "int64"
			raw = strconv.AppendInt(nil, v.AsInt64(), 10)
		case attr.KindFloat64:
			a.Kind = "float64"
			raw, err = json.Marshal(v.AsFloat64()) // NaN/Inf fail: recorded as null
		case attr.KindNull:
			a.Kind = "null"
		default:
			a.Kind = "unknown:" + strconv.Itoa(int(v.Kind()))
		}
		if raw == nil || err != nil {
			raw = []byte("null")
		}
		a.Value = raw
		out = append(out, a)
	}
	return out
}
