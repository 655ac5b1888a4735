package lensprocessor

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
)

// The component's type and stability (metadata.yaml).
var (
	componentType = component.MustNewType("lens")
)

const stability = component.StabilityLevelAlpha

// NewFactory returns the factory of the lens processor (type "lens").
func NewFactory() processor.Factory {
	return processor.NewFactory(
		componentType,
		func() component.Config { return createDefaultConfig() },
		processor.WithTraces(createTraces, stability),
		processor.WithMetrics(createMetrics, stability),
		processor.WithLogs(createLogs, stability),
	)
}

var capabilities = consumer.Capabilities{MutatesData: true}

// shared holds one processor per configuration, so that the traces,
// metrics and logs pipelines of one component share their cache (the
// Collector passes the same *Config to each).
var shared = struct {
	sync.Mutex
	m map[*Config]*sharedProcessor
}{m: map[*Config]*sharedProcessor{}}

type sharedProcessor struct {
	p    *lensProcessor
	refs int
}

func acquire(set processor.Settings, cfg *Config) (*lensProcessor, processorhelper.Option, processorhelper.Option) {
	shared.Lock()
	defer shared.Unlock()
	s, ok := shared.m[cfg]
	if !ok {
		s = &sharedProcessor{p: newLensProcessor(cfg, set.Logger)}
		shared.m[cfg] = s
	}
	s.refs++
	start := processorhelper.WithStart(s.p.start)
	var once sync.Once
	stop := processorhelper.WithShutdown(func(ctx context.Context) error {
		var last bool
		once.Do(func() {
			shared.Lock()
			s.refs--
			if last = s.refs == 0; last {
				delete(shared.m, cfg)
			}
			shared.Unlock()
		})
		if last {
			return s.p.shutdown(ctx)
		}
		return nil
	})
	return s.p, start, stop
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, start, stop := acquire(set, cfg.(*Config))
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithCapabilities(capabilities), start, stop)
}

func createMetrics(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Metrics) (processor.Metrics, error) {
	p, start, stop := acquire(set, cfg.(*Config))
	return processorhelper.NewMetrics(ctx, set, cfg, next, p.processMetrics,
		processorhelper.WithCapabilities(capabilities), start, stop)
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, start, stop := acquire(set, cfg.(*Config))
	return processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs,
		processorhelper.WithCapabilities(capabilities), start, stop)
}
