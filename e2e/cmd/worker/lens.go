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

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

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
	var opts []lens.Option
	if o.rankEnv != "" {
		rank, err := atoi(o.rankEnv, os.Getenv(o.rankEnv))
		if err != nil {
			return err
		}
		opts = append(opts, lens.WithResourceAttributes(attribute.Int("nv.dl.rank", rank)))
	}
	h, err := lens.Setup(ctx, cfg, opts...)
	if err != nil {
		return fmt.Errorf("lens.Setup: %w", err)
	}
	rec.RunID = h.Config().RunID
	rec.Exporting = h.IsExporting()
	rec.Resource = slurm.EncodeAttrs(h.Attributes())

	parent := propagation.TraceContext{}.Extract(ctx, envCarrier{})
	if p := trace.SpanContextFromContext(parent); p.IsValid() {
		rec.ParentSpanID = p.SpanID().String()
	}
	_, span := h.Tracer("github.com/nemolens/lens-go/e2e/cmd/worker").Start(parent, o.span)
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
	if n := h.DroppedSpans(); n != 0 {
		return fmt.Errorf("lens dropped %d span(s)", n)
	}
	return nil
}

// publishAndRun publishes the current carrier extended with the job-level
// attributes (overrides) and nv.dl.world_size = ranks, and, while it is
// published, calls run for each rank with carrier.ChildEnv(nil, nil,
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
			env, dropped := carrier.ChildEnv(nil, nil, attr.NewMap(attr.Entry{Key: "nv.dl.rank", Value: attr.Int(k)}))
			if len(dropped) > 0 {
				errs[k] = fmt.Errorf("rank %d: carrier entries dropped: %v", k, dropped)
				continue
			}
			wg.Go(func() { children[k], errs[k] = run(k, env) })
		}
		wg.Wait()
		rec.Children = children
		return errors.Join(errs...)
	})
}

// envCarrier reads TRACEPARENT/TRACESTATE from the process environment for
// the W3C propagator (the environment-variable carrier convention).
type envCarrier struct{}

func (envCarrier) Get(key string) string { return os.Getenv(strings.ToUpper(key)) }
func (envCarrier) Set(string, string)    {}
func (envCarrier) Keys() []string        { return []string{"traceparent", "tracestate"} }

func writeStdout(rec *worker.Record) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rec)
}
