package lens

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/log"
	lognoop "go.opentelemetry.io/otel/log/noop"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/nemolens/lens-go/internal/telemetry"
)

// lensPropagator marks the propagator Setup installs, so that Shutdown can
// tell whether the global is still Lens's (composite propagators are slices
// and cannot be compared).
type lensPropagator struct{ propagation.TextMapPropagator }

// lensErrorHandler marks the error handler Setup installs.
type lensErrorHandler struct{ d *telemetry.Diagnostics }

func (h *lensErrorHandler) Handle(err error) { h.d.Handle(err) }

// The OpenTelemetry globals are process-wide, and with [WithAllowReinit]
// several Handles may install theirs, and shut down, in any order. Each
// global has a chain of the live Lens installations: a Handle's Shutdown
// puts back what was global before it only when its own value is still
// the global, and otherwise hands what it would have put back to the
// installation made over it — so that the global never stays, or becomes,
// the provider of a Handle that is shut down.
var (
	globalsMu sync.Mutex // serialises Lens's changes of the globals
	ehChain   chain[otel.ErrorHandler]
	tpChain   chain[trace.TracerProvider]
	mpChain   chain[metric.MeterProvider]
	lpChain   chain[log.LoggerProvider]
	propChain chain[propagation.TextMapPropagator]
)

// link is one Lens installation of a global: the value installed (always a
// pointer, so comparable) and the value to put back when it goes.
type link[T any] struct{ ours, before T }

// chain is the live installations of one global, oldest first.
type chain[T any] struct{ links []*link[T] }

// add records that ours was installed over before.
func (c *chain[T]) add(ours, before T) *link[T] {
	l := &link[T]{ours: ours, before: before}
	c.links = append(c.links, l)
	return l
}

// remove forgets l (nil: nothing), and returns the value to make the
// global when current — the global now — is still l's; otherwise the
// installations made over l put back what l would have.
func (c *chain[T]) remove(l *link[T], current T) (T, bool) {
	var zero T
	i := slices.Index(c.links, l)
	if l == nil || i < 0 {
		return zero, false
	}
	c.links = slices.Delete(c.links, i, i+1)
	for _, e := range c.links {
		// Interface comparison: l.ours is a pointer, so values of another
		// dynamic type (a composite propagator, a func) compare unequal
		// without panicking.
		if any(e.before) == any(l.ours) {
			e.before = l.before
		}
	}
	if any(current) == any(l.ours) {
		return l.before, true
	}
	return zero, false
}

// installedGlobals is what one Handle installed.
type installedGlobals struct {
	eh   *link[otel.ErrorHandler]
	tp   *link[trace.TracerProvider]
	mp   *link[metric.MeterProvider]
	lp   *link[log.LoggerProvider]
	prop *link[propagation.TextMapPropagator]
}

// installDiagnostics routes the OpenTelemetry error handler and internal
// logger through d. The internal logger cannot be read back (the SDK has no
// getter), so it stays routed through the Lens logger after Shutdown.
func installDiagnostics(d *telemetry.Diagnostics) *installedGlobals {
	globalsMu.Lock()
	defer globalsMu.Unlock()
	ours := &lensErrorHandler{d: d}
	g := &installedGlobals{eh: ehChain.add(ours, otel.GetErrorHandler())}
	otel.SetErrorHandler(ours)
	otel.SetLogger(d.Logger())
	return g
}

// globalValues are the values Setup makes the globals; a nil one is left
// as it is.
type globalValues struct {
	tp   trace.TracerProvider
	mp   metric.MeterProvider
	lp   log.LoggerProvider
	prop propagation.TextMapPropagator
}

// install makes v's providers and propagator the globals. The propagator
// is installed only over the default no-op propagator or another Lens
// Handle's.
func (g *installedGlobals) install(v globalValues) {
	globalsMu.Lock()
	defer globalsMu.Unlock()
	if v.tp != nil {
		g.tp = tpChain.add(v.tp, orNoop(otel.GetTracerProvider(), trace.TracerProvider(tracenoop.NewTracerProvider())))
		otel.SetTracerProvider(v.tp)
	}
	if v.mp != nil {
		g.mp = mpChain.add(v.mp, orNoop(otel.GetMeterProvider(), metric.MeterProvider(metricnoop.NewMeterProvider())))
		otel.SetMeterProvider(v.mp)
	}
	if v.lp != nil {
		g.lp = lpChain.add(v.lp, orNoop(otel.GetLoggerProvider(), log.LoggerProvider(lognoop.NewLoggerProvider())))
		otel.SetLoggerProvider(v.lp)
	}
	prev := otel.GetTextMapPropagator()
	_, lens := prev.(*lensPropagator)
	if v.prop != nil && (lens || len(prev.Fields()) == 0) {
		ours := &lensPropagator{v.prop}
		g.prop = propChain.add(ours, orNoop(prev, propagation.NewCompositeTextMapPropagator()))
		otel.SetTextMapPropagator(ours)
	}
}

// orNoop returns v, or noop when v is the OpenTelemetry global's default
// delegate (package otel/internal/global, or otel/log/internal/global).
// The delegate forwards, for good, to the first value ever installed —
// here, this Handle's provider, which its Shutdown stops — so it is not
// what Shutdown may put back.
func orNoop[T any](v, noop T) T {
	t := reflect.TypeOf(v)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && strings.HasPrefix(t.PkgPath(), "go.opentelemetry.io/otel/") && strings.HasSuffix(t.PkgPath(), "/internal/global") {
		return noop
	}
	return v
}

// restore puts back the previous globals (see restoreProviders and
// restoreDiagnostics).
func (g *installedGlobals) restore() {
	g.restoreProviders()
	g.restoreDiagnostics()
}

// restoreProviders puts back, for each provider and the propagator that
// are still the Handle's, what was global before — or, when that was a
// Handle that has been shut down since, what that one would have put back.
func (g *installedGlobals) restoreProviders() {
	if g == nil {
		return
	}
	globalsMu.Lock()
	defer globalsMu.Unlock()
	if v, ok := tpChain.remove(g.tp, otel.GetTracerProvider()); ok {
		otel.SetTracerProvider(v)
	}
	if v, ok := mpChain.remove(g.mp, otel.GetMeterProvider()); ok {
		otel.SetMeterProvider(v)
	}
	if v, ok := lpChain.remove(g.lp, otel.GetLoggerProvider()); ok {
		otel.SetLoggerProvider(v)
	}
	if v, ok := propChain.remove(g.prop, otel.GetTextMapPropagator()); ok {
		otel.SetTextMapPropagator(v)
	}
	g.tp, g.mp, g.lp, g.prop = nil, nil, nil, nil
}

// restoreDiagnostics puts back the previous error handler if it is still
// the Handle's, as restoreProviders does.
func (g *installedGlobals) restoreDiagnostics() {
	if g == nil {
		return
	}
	globalsMu.Lock()
	defer globalsMu.Unlock()
	if v, ok := ehChain.remove(g.eh, otel.GetErrorHandler()); ok {
		otel.SetErrorHandler(v)
	}
	g.eh = nil
}
