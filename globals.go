package lens

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/internal/telemetry"
)

// lensPropagator marks the propagator Setup installs, so that Shutdown can
// tell whether the global is still Lens's (composite propagators are slices
// and cannot be compared).
type lensPropagator struct{ propagation.TextMapPropagator }

// lensErrorHandler marks the error handler Setup installs.
type lensErrorHandler struct{ d *telemetry.Diagnostics }

func (h *lensErrorHandler) Handle(err error) { h.d.Handle(err) }

// installedGlobals remembers what Setup replaced.
type installedGlobals struct {
	errorHandler otel.ErrorHandler
	ours         *lensErrorHandler
	tp           trace.TracerProvider
	installedTP  trace.TracerProvider
	mp           metric.MeterProvider
	lp           log.LoggerProvider
	propagator   propagation.TextMapPropagator
	ourProp      *lensPropagator
}

// installDiagnostics routes the OpenTelemetry error handler and internal
// logger through d. The internal logger cannot be read back (the SDK has no
// getter), so it stays routed through the Lens logger after Shutdown.
func installDiagnostics(d *telemetry.Diagnostics) *installedGlobals {
	g := &installedGlobals{errorHandler: otel.GetErrorHandler(), ours: &lensErrorHandler{d: d}}
	otel.SetErrorHandler(g.ours)
	otel.SetLogger(d.Logger())
	return g
}

// install makes h's providers and propagator the globals.
func (g *installedGlobals) install(h *Handle) {
	if h.tracing != nil {
		g.tp = otel.GetTracerProvider()
		g.installedTP = h.tracing.Provider()
		otel.SetTracerProvider(g.installedTP)
	}
	if h.sdkMP != nil {
		g.mp = otel.GetMeterProvider()
		otel.SetMeterProvider(h.sdkMP)
	}
	if h.sdkLP != nil {
		g.lp = otel.GetLoggerProvider()
		otel.SetLoggerProvider(h.sdkLP)
	}
	if prev := otel.GetTextMapPropagator(); len(prev.Fields()) == 0 && h.propagator != nil {
		g.propagator = prev
		g.ourProp = &lensPropagator{h.propagator}
		otel.SetTextMapPropagator(g.ourProp)
	}
}

// restore puts back the previous globals that are still Lens's.
func (g *installedGlobals) restore(h *Handle) {
	g.restoreProviders(h)
	g.restoreDiagnostics()
}

// restoreProviders puts back the previous providers and propagator that
// are still Lens's.
func (g *installedGlobals) restoreProviders(h *Handle) {
	if g == nil {
		return
	}
	if g.installedTP != nil && otel.GetTracerProvider() == g.installedTP {
		otel.SetTracerProvider(g.tp)
	}
	if h.sdkMP != nil && otel.GetMeterProvider() == metric.MeterProvider(h.sdkMP) {
		otel.SetMeterProvider(g.mp)
	}
	if h.sdkLP != nil && otel.GetLoggerProvider() == log.LoggerProvider(h.sdkLP) {
		otel.SetLoggerProvider(g.lp)
	}
	if g.ourProp != nil {
		if cur, ok := otel.GetTextMapPropagator().(*lensPropagator); ok && cur == g.ourProp {
			otel.SetTextMapPropagator(g.propagator)
		}
	}
}

// restoreDiagnostics puts back the previous error handler if it is still
// Lens's.
func (g *installedGlobals) restoreDiagnostics() {
	if g == nil {
		return
	}
	if cur, ok := otel.GetErrorHandler().(*lensErrorHandler); ok && cur == g.ours {
		otel.SetErrorHandler(g.errorHandler)
	}
}
