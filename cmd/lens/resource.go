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
	usage:   "[--format text|json|env] [--explain] [--attr KEY=VALUE]...",
	help: `Print the resource an enabled telemetry setup (lens.Setup) would export for
this process and its configuration (NEMO_LENS_*, OTEL_SERVICE_NAME,
WANDB_*, DEPLOYMENT_ENV/ENVIRONMENT, the carrier and the detectors), layer
by layer, lowest first: telemetry.sdk.*, the carrier, the Lens base map,
the --attr values as the caller's resource attributes, detection, type
reconstruction and service.instance.id ("{run_id}-rank{nv.dl.rank}" when a
rank exists). The rules are in docs/resource.md#resource-precedence. It is
printed whether or not NEMO_LENS_ENABLED is set.

An empty NEMO_LENS_RUN_ID is filled as Setup fills it: SLURM_JOB_ID, else
TORCHELASTIC_RUN_ID (unless it is torchrun's default "none"), else a random
12-hex-digit id (a different one on every call).

--attr values are strings, as if the caller passed them in its
resource_attributes; type reconstruction turns the known integer fields
(nv.dl.rank, nv.dl.world_size, ...) into integers as it does for the carrier.
--format and --explain are as for lens detect.`,
	setup: func(fs *flag.FlagSet) runFunc {
		format := choiceFlag(fs, "format", "text", "output `format`: text, json or env", "text", "json", "env")
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
		return nil, fmt.Errorf("configuration: %w", err)
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
