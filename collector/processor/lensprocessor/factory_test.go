package lensprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"
)

// TestFactoryShared: the traces, metrics and logs processors of one
// component share one processor (one cache, one GPU scan), started once
// and shut down with the last of them.
func TestFactoryShared(t *testing.T) {
	t.Parallel()
	f := NewFactory()
	if f.Type().String() != "lens" {
		t.Fatalf("type %q", f.Type())
	}
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.ProcRoot = t.TempDir()
	cfg.GPU.NvidiaProcfs = t.TempDir() + "/gpus"
	ctx, set, host := context.Background(), processortest.NewNopSettings(f.Type()), componenttest.NewNopHost()
	tp, err := f.CreateTraces(ctx, set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	mp, err := f.CreateMetrics(ctx, set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	lp, err := f.CreateLogs(ctx, set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	shared.Lock()
	s := shared.m[cfg]
	shared.Unlock()
	if s == nil || s.refs != 3 {
		t.Fatalf("shared %+v, want one processor with 3 users", s)
	}
	if err := tp.Start(ctx, host); err != nil {
		t.Fatal(err)
	}
	if err := mp.Start(ctx, host); err != nil {
		t.Fatal(err)
	}
	if err := lp.Start(ctx, host); err != nil {
		t.Fatal(err)
	}
	if !tp.Capabilities().MutatesData {
		t.Error("the processor changes resources: MutatesData must be true")
	}
	for _, c := range []interface{ Shutdown(context.Context) error }{tp, mp, lp} {
		if err := c.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	shared.Lock()
	_, left := shared.m[cfg]
	shared.Unlock()
	if left {
		t.Error("the shared processor outlives its users")
	}
	select {
	case <-s.p.gpu.done:
	default:
		t.Error("the GPU scan still runs after shutdown")
	}
}
