// Package traceid chooses the ids of new spans for Lens's tracer providers
// (docs/tracing.md#trace-per-attempt): a trace id or span id requested
// through the context, else the attempt's trace id for root spans when the
// per-attempt mode is on, else random ids. It also derives an attempt's
// trace id and anchor span id from its nv.dl.run.uuid. It reads nothing but
// its arguments and emits nothing.
package traceid

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

type traceIDKey struct{}

type spanIDKey struct{}

// WithTraceID returns ctx requesting id as the trace id of the root spans
// started with it (an invalid id removes the request).
func WithTraceID(ctx context.Context, id trace.TraceID) context.Context {
	return context.WithValue(ctx, traceIDKey{}, id)
}

// TraceIDFrom returns the trace id requested by ctx, if valid.
func TraceIDFrom(ctx context.Context) (trace.TraceID, bool) {
	id, _ := ctx.Value(traceIDKey{}).(trace.TraceID)
	return id, id.IsValid()
}

// WithSpanID returns ctx requesting id as the span id of the next span
// started with it. The request is not meant to be inherited: start
// children from the context the span is returned in, which carries it
// still, only through a context without it (see completed.Emit).
func WithSpanID(ctx context.Context, id trace.SpanID) context.Context {
	return context.WithValue(ctx, spanIDKey{}, id)
}

// SpanIDFrom returns the span id requested by ctx, if valid.
func SpanIDFrom(ctx context.Context) (trace.SpanID, bool) {
	id, _ := ctx.Value(spanIDKey{}).(trace.SpanID)
	return id, id.IsValid()
}

// Generator is the id generator of Lens's tracer providers
// (sdktrace.IDGenerator). The zero value generates random ids and honours
// requests made through the context.
type Generator struct {
	// Attempt, when valid, is the trace id of the root spans whose context
	// requests none (the per-attempt mode).
	Attempt trace.TraceID
}

// NewIDs returns the ids of a root span: the trace id requested by ctx,
// else g.Attempt when valid, else a random one; the span id requested by
// ctx, else a random one.
func (g Generator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	tid, ok := TraceIDFrom(ctx)
	if !ok {
		tid = g.Attempt
	}
	if !tid.IsValid() {
		tid = randomTraceID()
	}
	return tid, g.NewSpanID(ctx, tid)
}

// NewSpanID returns the span id requested by ctx, else a random one.
func (Generator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if sid, ok := SpanIDFrom(ctx); ok {
		return sid
	}
	return RandomSpanID()
}

func randomTraceID() trace.TraceID {
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.NativeEndian.PutUint64(tid[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid
}

// RandomSpanID returns a random valid span id (the SDK's own distribution:
// math/rand/v2's global source).
func RandomSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.NativeEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}

// ErrNotUUID is returned for a run uuid that is not a UUID in canonical
// form.
var ErrNotUUID = errors.New("not a UUID in canonical form")

// FromUUID returns the trace id of the attempt whose nv.dl.run.uuid is u:
// its 16 bytes, in order (docs/tracing.md#trace-per-attempt). u must be in
// canonical form (8-4-4-4-12 hexadecimal digits, either case).
func FromUUID(u string) (trace.TraceID, error) {
	var tid trace.TraceID
	if len(u) != 36 || u[8] != '-' || u[13] != '-' || u[18] != '-' || u[23] != '-' {
		return tid, fmt.Errorf("run uuid %q: %w", u, ErrNotUUID)
	}
	b, err := hex.DecodeString(strings.ReplaceAll(u, "-", ""))
	if err != nil || len(b) != 16 {
		return tid, fmt.Errorf("run uuid %q: %w", u, ErrNotUUID)
	}
	copy(tid[:], b)
	if !tid.IsValid() {
		return tid, fmt.Errorf("run uuid %q: %w (all zero)", u, ErrNotUUID)
	}
	return tid, nil
}

// UUID returns tid in the canonical UUID form (lowercase).
func UUID(tid trace.TraceID) string {
	h := hex.EncodeToString(tid[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// AnchorPrefix is prefixed to the canonical run uuid to derive the anchor
// span id.
const AnchorPrefix = "nemo.lens.attempt.anchor/"

// Anchor returns the attempt's anchor span id: the first 8 bytes of the
// SHA-256 of AnchorPrefix followed by the canonical lowercase UUID of tid
// (docs/tracing.md#trace-per-attempt). Links to an attempt point at it, a
// process that joins the attempt's trace from outside uses it as remote
// parent, and the reckoner's attempt span has it as its span id.
func Anchor(tid trace.TraceID) trace.SpanID {
	sum := sha256.Sum256([]byte(AnchorPrefix + UUID(tid)))
	var sid trace.SpanID
	copy(sid[:], sum[:8])
	if !sid.IsValid() { // 2^-64: the documented fallback
		sid[7] = 1
	}
	return sid
}

// Attempt is the trace identity of one job attempt
// (docs/tracing.md#trace-per-attempt).
type Attempt struct {
	// TraceID is the attempt's trace id (FromUUID of its nv.dl.run.uuid).
	TraceID trace.TraceID
	// Previous is the previous attempt's trace id; invalid when there is
	// none (docs/tracing.md#attempt-links).
	Previous trace.TraceID
}

// Link returns the link from the attempt's root spans to the previous
// attempt's anchor span, and false when there is no previous attempt.
func (a Attempt) Link() (trace.Link, bool) {
	if !a.Previous.IsValid() {
		return trace.Link{}, false
	}
	return trace.Link{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: a.Previous, SpanID: Anchor(a.Previous), TraceFlags: trace.FlagsSampled, Remote: true,
	})}, true
}

// Traceparent returns the W3C traceparent that puts a process under the
// attempt's anchor span (docs/tracing.md#attempt-python), sampled.
func (a Attempt) Traceparent() string {
	return "00-" + a.TraceID.String() + "-" + Anchor(a.TraceID).String() + "-01"
}
