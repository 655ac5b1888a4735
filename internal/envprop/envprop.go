// Package envprop carries a trace context across exec in environment
// variables, by the OpenTelemetry environment-variable carrier convention
// (TRACEPARENT, TRACESTATE, BAGGAGE, …), with the key normalisation of
// go.opentelemetry.io/contrib/propagators/envcar.
package envprop

import (
	"context"
	"strings"

	"go.opentelemetry.io/contrib/propagators/envcar"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/environ"
)

// Name returns the environment variable name of a propagation field
// (traceparent → TRACEPARENT), normalised as the OpenTelemetry
// environment-variable carrier convention says; the normalisation is
// envcar's own.
func Name(field string) string {
	var name string
	c := envcar.Carrier{SetEnvFunc: func(k, _ string) { name = k }}
	c.Set(field, "")
	return name
}

// lookupCarrier is an extract-only TextMapCarrier over an injected
// environment, with envcar's key normalisation (envcar.Carrier reads the
// process environment only).
type lookupCarrier struct{ env environ.Lookuper }

func (c lookupCarrier) Get(key string) string {
	v, _ := c.env.LookupEnv(Name(key))
	return v
}

func (c lookupCarrier) Set(string, string) {}

func (c lookupCarrier) Keys() []string {
	var keys []string
	for _, kv := range environ.List(c.env) {
		if k, _, ok := strings.Cut(kv, "="); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// Extract returns ctx with the context p extracts from env's variables
// (TRACEPARENT, TRACESTATE, BAGGAGE, … by the OpenTelemetry
// environment-variable carrier convention). The process environment is
// read through envcar.Carrier; an injected one through the same
// normalisation.
func Extract(ctx context.Context, env environ.Lookuper, p propagation.TextMapPropagator) context.Context {
	if _, isOS := env.(environ.OS); env == nil || isOS {
		return p.Extract(ctx, &envcar.Carrier{})
	}
	return p.Extract(ctx, lookupCarrier{env})
}

// Inject returns list with the context of ctx injected by p as
// environment variables (envcar.Carrier with a SetEnvFunc that writes into
// the list): the variables of p's fields are removed first, so a stale
// TRACESTATE or BAGGAGE of the parent never reaches the child next to a new
// TRACEPARENT. When ctx carries no valid span context, list is returned
// unchanged (the child continues whatever trace the parent inherited).
func Inject(ctx context.Context, list []string, p propagation.TextMapPropagator) []string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return list
	}
	drop := map[string]bool{}
	for _, f := range p.Fields() {
		drop[Name(f)] = true
	}
	out := make([]string, 0, len(list)+len(drop))
	for _, kv := range list {
		if k, _, _ := strings.Cut(kv, "="); drop[k] {
			continue
		}
		out = append(out, kv)
	}
	c := envcar.Carrier{SetEnvFunc: func(k, v string) { out = append(out, k+"="+v) }}
	p.Inject(ctx, &c)
	return out
}
