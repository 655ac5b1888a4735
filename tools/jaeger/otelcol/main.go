// Command otelcol is the log receiver of the end-to-end tests: a minimal
// OpenTelemetry Collector with the OTLP receiver, the batch processor, the
// contrib file exporter (OTLP JSON, one line per batch) and the healthcheckv2
// extension — all Apache-2.0. Build it with scripts/build-backends.sh.
//
// It lives in the tools/jaeger module on purpose: Jaeger v2 is itself a
// Collector distribution, so this command uses the very module versions of
// Jaeger's graph (collector v0.140.0 / v1.46.0, contrib v0.140.1). It adds one
// module (fileexporter) and a few small dependencies, and every package it
// shares with Jaeger is compiled once for both.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckv2extension"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

func components() (otelcol.Factories, error) {
	f := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
	var errs [4]error
	f.Extensions, errs[0] = otelcol.MakeFactoryMap[extension.Factory](healthcheckv2extension.NewFactory())
	f.Receivers, errs[1] = otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory())
	f.Processors, errs[2] = otelcol.MakeFactoryMap[processor.Factory](batchprocessor.NewFactory())
	f.Exporters, errs[3] = otelcol.MakeFactoryMap[exporter.Factory](fileexporter.NewFactory())
	return f, errors.Join(errs[:]...)
}

func main() {
	cmd := otelcol.NewCommand(otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "otelcol",
			Description: "lens-go e2e log receiver (OTLP in, OTLP JSON file out)",
			Version:     "v0.140.0",
		},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{envprovider.NewFactory(), fileprovider.NewFactory()},
			},
		},
	})
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "otelcol:", err)
		os.Exit(1)
	}
}
