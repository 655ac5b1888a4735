package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/e2e/internal/slurm"
	"github.com/nemolens/lens-go/e2e/internal/worker"
)

// This file holds every call into lens-go; adapt here if the API changes.

// runWorker is the whole instrumented program: configuration from the
// environment, Setup, one span (continuing $TRACEPARENT), Shutdown.
func runWorker(ctx context.Context, o *options, rec *worker.Record) error {
	cfg, err := lens.FromEnv()
	if err != nil {
		return fmt.Errorf("lens.FromEnv: %w", err)
	}
	var opts []lens.SetupOption
	if o.rankEnv != "" {
		rank, err := atoi(o.rankEnv, os.Getenv(o.rankEnv))
		if err != nil {
			return err
		}
		opts = append(opts, lens.WithResourceAttributes(attribute.Int("nv.dl.rank", rank)))
	}
	if o.rankFrom != "" {
		opts = append(opts, lens.WithRankFrom(o.rankFrom))
	}
	h, err := lens.Setup(ctx, cfg, opts...)
	if err != nil {
		return fmt.Errorf("lens.Setup: %w", err)
	}
	rec.RunID = h.Config().RunID
	rec.Exporting = h.IsExporting()
	rec.Resource = slurm.EncodeAttrs(h.Attributes())

	// No code of its own for the trace context: lens.Setup read
	// TRACEPARENT, and a span started without a parent continues it.
	_, span := h.Tracer("github.com/nemolens/lens-go/e2e/cmd/worker").Start(ctx, o.span)
	if ro, ok := span.(sdktrace.ReadOnlySpan); ok && ro.Parent().IsValid() {
		rec.ParentSpanID = ro.Parent().SpanID().String()
	}
	sc := span.SpanContext()
	rec.SpanName = o.span
	rec.TraceID = sc.TraceID().String()
	rec.SpanID = sc.SpanID().String()
	span.End()

	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := h.Shutdown(sctx); err != nil {
		return fmt.Errorf("lens Handle.Shutdown: %w", err)
	}
	if c := h.SpanCounts(); c.Exported != c.Ended {
		return fmt.Errorf("lens exported %d of %d span(s): %+v", c.Exported, c.Ended, c)
	}
	return nil
}

// publishAndRun publishes the current carrier extended with the job-level
// attributes (overrides) and nv.dl.world_size = ranks, and, while it is
// published, calls run for each rank with carrier.ChildEnv(ctx,
// {nv.dl.rank: rank}) — the process environment, which now holds the
// published carrier. The children run concurrently.
func publishAndRun(ctx context.Context, attrs []string, ranks int, run func(rank int, env []string) (worker.Child, error), rec *worker.Record) error {
	job := attr.WithCapacity(len(attrs) + 1)
	job.Set("nv.dl.world_size", attr.Int(ranks))
	for _, kv := range attrs {
		k, v, _ := strings.Cut(kv, "=")
		job.SetString(k, v)
	}
	published := carrier.Compose(carrier.Get(nil), nil, job)
	return carrier.Publish(ctx, nil, published, func(context.Context) error {
		children := make([]worker.Child, ranks)
		errs := make([]error, ranks)
		var wg sync.WaitGroup
		for k := range ranks {
			env, err := carrier.ChildEnv(ctx, attr.NewMap(attr.Entry{Key: "nv.dl.rank", Value: attr.Int(k)}))
			if err != nil {
				errs[k] = fmt.Errorf("rank %d: child environment: %v", k, err)
				continue
			}
			wg.Go(func() { children[k], errs[k] = run(k, env) })
		}
		wg.Wait()
		rec.Children = children
		return errors.Join(errs...)
	})
}

// runLauncher is a launcher with telemetry of its own: FromEnv, Setup, a
// span, and inside it the children, each started with
// carrier.ChildEnv(span context, {nv.dl.rank: k}) — or no override for the
// lens exec child, whose --attr gives the rank — so that every child gets
// this process's run id (NEMO_LENS_RUN_ID) and continues its trace
// (TRACEPARENT). The environments are built one after the other, the
// children run concurrently; the span ends when all have exited.
func runLauncher(ctx context.Context, o *options, specs []childSpec, rec *worker.Record) error {
	cfg, err := lens.FromEnv()
	if err != nil {
		return fmt.Errorf("lens.FromEnv: %w", err)
	}
	h, err := lens.Setup(ctx, cfg)
	if err != nil {
		return fmt.Errorf("lens.Setup: %w", err)
	}
	rec.RunID = h.Config().RunID
	rec.Exporting = h.IsExporting()
	rec.Resource = slurm.EncodeAttrs(h.Attributes())

	spanCtx, span := h.Tracer("github.com/nemolens/lens-go/e2e/cmd/worker").Start(ctx, o.span)
	sc := span.SpanContext()
	rec.SpanName = o.span
	rec.TraceID = sc.TraceID().String()
	rec.SpanID = sc.SpanID().String()

	envs := make([][]string, len(specs))
	errs := make([]error, len(specs))
	for i, s := range specs {
		var overrides *attr.Map
		if !s.exec {
			overrides = attr.NewMap(attr.Entry{Key: "nv.dl.rank", Value: attr.Int(s.rank)})
		}
		env, err := carrier.ChildEnv(spanCtx, overrides)
		if err != nil {
			errs[i] = fmt.Errorf("child %d: child environment: %v", i, err)
		}
		envs[i] = env
	}
	children := make([]worker.Child, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		if errs[i] != nil {
			continue
		}
		wg.Go(func() { children[i], errs[i] = startChild(s, envs[i]) })
	}
	wg.Wait()
	rec.Children = children
	span.End()

	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := h.Shutdown(sctx); err != nil {
		errs = append(errs, fmt.Errorf("lens Handle.Shutdown: %w", err))
	} else if c := h.SpanCounts(); c.Exported != c.Ended {
		errs = append(errs, fmt.Errorf("lens exported %d of %d span(s): %+v", c.Exported, c.Ended, c))
	}
	return errors.Join(errs...)
}

func writeStdout(rec *worker.Record) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rec)
}
