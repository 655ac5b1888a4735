package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/internal/assembly"
	"github.com/nemolens/lens-go/internal/telemetry"
)

var resourceCommand = &command{
	name:    "resource",
	summary: "print the resource telemetry setup would export",
	usage:   "",
	help: `Print the resource an enabled telemetry setup (lens.Setup) would export
for this process, layer by layer (docs/resource.md#resource-precedence),
whether or not NEMO_LENS_ENABLED is set; --attr values are the caller's
resource attributes. --format and --explain are as for lens detect.`,
	setup: func(fs *flag.FlagSet) runFunc {
		format := choiceFlag(fs, "format", "text", "the output format", "text", "json", "env")
		explain := fs.Bool("explain", false, "say where every attribute came from")
		var attrs attrList
		fs.Var(&attrs, "attr", "a caller resource attribute `KEY=VALUE` (a string; repeatable)")
		return func(ctx context.Context, a *app, args []string) error {
			e, err := explanation(args, *explain, format.value)
			if err != nil {
				return err
			}
			m, err := a.resource(ctx, attrs.m, e)
			if err != nil {
				return err
			}
			return a.writeAttrs("resource", format.value, m, e)
		}
	},
}

// resource returns the attributes of the resource an enabled lens.Setup
// exports for this process's configuration with the caller attributes
// caller, recording origins in e when it is not nil.
func (a *app) resource(ctx context.Context, caller *attr.Map, e *detect.Explanation) (*attr.Map, error) {
	cfg, err := telemetry.FromEnv(a.env, "", "")
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", unprefixed(err))
	}
	o := &assembly.Options{
		Attrs:   caller.KeyValues(),
		Env:     a.env,
		Detect:  a.detectOptions(),
		Explain: e,
		Logger:  a.logger,
	}
	cfg = o.FillRunID(cfg)
	base := assembly.SDKAttributes()
	for _, b := range base {
		e.Record(b.Key, "OpenTelemetry SDK")
	}
	return assembly.ResourceAttributes(ctx, cfg, o, base[:], true)
}
