package main

import (
	"log"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/prometheusreceiver"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/resourceprocessor"
)

var _ = []any{component.Type{}, confmap.Conf{}, envprovider.NewFactory, fileprovider.NewFactory, connector.Factory(nil), exporter.Factory(nil),
	debugexporter.NewFactory, otlpexporter.NewFactory, otlphttpexporter.NewFactory, extension.Factory(nil), otelcol.NewCommand, processor.Factory(nil),
	batchprocessor.NewFactory, memorylimiterprocessor.NewFactory, receiver.Factory(nil), otlpreceiver.NewFactory, prometheusreceiver.NewFactory,
	processorhelper.NewTraces, processortest.NewNopSettings, consumertest.NewNop, componenttest.NewNopTelemetrySettings, ptrace.NewTraces, zap.NewNop, resourceprocessor.NewFactory, log.Println}

func main() {}
