package lens_test

import (
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/environ"
)

// TestOptionsTyped: each option is accepted exactly by the functions that
// use it, so that a misplaced option is a compile error, not a silent no-op.
func TestOptionsTyped(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                    string
		opt                     any
		config, resource, setup bool
	}{
		{"WithEnv", lens.WithEnv(environ.Map{}), true, true, true},
		{"WithPrefix", lens.WithPrefix("X"), true, false, false},
		{"WithFallbackPrefix", lens.WithFallbackPrefix("Y"), true, false, false},
		{"WithResourceAttributes", lens.WithResourceAttributes(), false, true, true},
		{"WithRankFrom", lens.WithRankFrom(lens.RankFromSlurm), false, true, true},
		{"WithGPUDevices", lens.WithGPUDevices(), false, true, true},
		{"WithDetectOptions", lens.WithDetectOptions(), false, true, true},
		{"WithExplanation", lens.WithExplanation(nil), false, true, true},
		{"WithLogger", lens.WithLogger(nil), false, true, true},
		{"WithSpanExporter", lens.WithSpanExporter(tracetest.NewInMemoryExporter()), false, false, true},
		{"WithMetricReader", lens.WithMetricReader(nil), false, false, true},
		{"WithMetricExporter", lens.WithMetricExporter(nil), false, false, true},
		{"WithLogExporter", lens.WithLogExporter(nil), false, false, true},
		{"WithAllowReinit", lens.WithAllowReinit(), false, false, true},
		{"WithConsoleWriter", lens.WithConsoleWriter(nil), false, false, true},
		{"WithoutGlobals", lens.WithoutGlobals(), false, false, true},
	} {
		_, config := c.opt.(lens.ConfigOption)
		_, res := c.opt.(lens.ResourceOption)
		_, setup := c.opt.(lens.SetupOption)
		if config != c.config || res != c.resource || setup != c.setup {
			t.Errorf("%s: FromEnv %v, resource functions %v, Setup %v; want %v, %v, %v",
				c.name, config, res, setup, c.config, c.resource, c.setup)
		}
	}
}
