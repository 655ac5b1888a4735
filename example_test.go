package lens_test

import (
	"context"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// exampleHost injects fixed host facts, so the examples do not depend on
// the machine.
var exampleHost = []detect.Option{
	detect.WithHostname(func() (string, error) { return "node07", nil }),
	detect.WithPID(1234),
	detect.WithGPUCount(func(context.Context) (int, bool) { return 8, true }),
	detect.WithKubernetesSecretsPath("/nonexistent/lens-example"),
}

func ExampleResourceAttributes() {
	env := environ.Map{
		"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=3,nv.dl.world_size=8,host.name=launcher",
	}
	cfg := lens.DefaultConfig()
	cfg.RunID = "exp-1"
	m, err := lens.ResourceAttributes(context.Background(), cfg,
		lens.WithEnv(env), lens.WithDetectOptions(exampleHost...))
	if err != nil {
		panic(err)
	}
	for _, key := range []string{"service.instance.id", "nv.dl.rank", "host.name", "host.gpu.count"} {
		v, _ := m.Get(key)
		fmt.Printf("%s = %v (%v)\n", key, v, v.Kind())
	}
	// Output:
	// service.instance.id = exp-1-rank3 (string)
	// nv.dl.rank = 3 (int64)
	// host.name = node07 (string)
	// host.gpu.count = 8 (int64)
}

func ExampleResourceAttributes_callerAndLauncher() {
	// A Slurm launcher published slurm.job.id; the caller's value is only a
	// default for the launcher-authoritative keys, but wins elsewhere.
	env := environ.Map{
		"SLURM_JOB_ID":             "12345",
		"OTEL_RESOURCE_ATTRIBUTES": "slurm.job.id=launch,nv.dl.role=worker",
	}
	m, _ := lens.ResourceAttributes(context.Background(), lens.Config{RunID: "12345"},
		lens.WithEnv(env), lens.WithDetectOptions(exampleHost...),
		lens.WithResourceAttributes(
			attribute.String("slurm.job.id", "default"),
			attribute.String("nv.dl.role", "trainer"),
			attribute.Int("nv.dl.rank", 0),
		))
	for _, key := range []string{"slurm.job.id", "nv.dl.role", "service.instance.id"} {
		v, _ := m.Get(key)
		fmt.Printf("%s = %v\n", key, v)
	}
	// Output:
	// slurm.job.id = launch
	// nv.dl.role = trainer
	// service.instance.id = 12345-rank0
}

func ExampleSetup() {
	ctx := context.Background()
	cfg := lens.DefaultConfig()
	cfg.Enabled = true
	cfg.RunID = "exp-1"
	spans := tracetest.NewInMemoryExporter()
	h, err := lens.Setup(ctx, cfg,
		lens.WithEnv(environ.Map{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.rank=5"}),
		lens.WithDetectOptions(exampleHost...),
		lens.WithSpanExporter(spans),                       // instead of OTLP
		lens.WithMetricReader(sdkmetric.NewManualReader()), // instead of OTLP
	)
	if err != nil {
		panic(err)
	}
	defer h.Shutdown(ctx)

	_, span := h.Tracer("example").Start(ctx, "step")
	span.End()
	_ = h.ForceFlush(ctx)

	id, _ := spans.GetSpans()[0].Resource.Set().Value(attribute.Key("service.instance.id"))
	fmt.Println("exporting:", h.IsExporting())
	fmt.Println("exported service.instance.id:", id.AsString())
	// Output:
	// exporting: true
	// exported service.instance.id: exp-1-rank5
}

func ExampleSetup_disabled() {
	h, _ := lens.Setup(context.Background(), lens.Config{}) // the zero Config is disabled
	_, span := h.Tracer("example").Start(context.Background(), "noop")
	span.End()
	fmt.Println(h.IsExporting(), span.IsRecording(), h.Shutdown(context.Background()))
	// Output: false false <nil>
}

func ExampleFromEnv() {
	env := environ.Map{
		"NEMO_LENS_ENABLED":      "yes",
		"NEMO_LENS_EXPORTER":     " console ",
		"LEGACY_RUN_ID":          "run-7",
		"OTEL_SERVICE_NAME":      "trainer",
		"NEMO_LENS_LOGS_ENABLED": "",
	}
	cfg, err := lens.FromEnv(lens.WithEnv(env), lens.WithFallbackPrefix("LEGACY"))
	fmt.Println(cfg.Enabled, cfg.Exporter, cfg.RunID, cfg.ServiceName, !cfg.TracesDisabled, cfg.LogsEnabled, err)

	_, err = lens.FromEnv(lens.WithEnv(environ.Map{"NEMO_LENS_ENABLED": "maybe"}))
	fmt.Println(err)
	// Output:
	// true console run-7 trainer true false <nil>
	// lens: NEMO_LENS_ENABLED="maybe": expected a boolean (1/0, true/false, yes/no, on/off)
}

func ExampleNewRunID() {
	fmt.Println(lens.NewRunID(environ.Map{"SLURM_JOB_ID": "12345"}))
	fmt.Println(len(lens.NewRunID(environ.Map{})))
	// Output:
	// 12345
	// 12
}

func ExampleHandle_Logger() {
	// With logs disabled the logger discards; it is never nil.
	h, _ := lens.Setup(context.Background(), lens.Config{})
	h.Logger().Info("dropped")
	fmt.Println(h.Logger().Enabled(context.Background(), slog.LevelError))
	// Output: false
}
